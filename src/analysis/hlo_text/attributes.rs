//! The attributes after an instruction's operands, in XLA's order: the opcode's own
//! (`PrintExtraAttributesImpl` of each instruction class), the called computations by name, then
//! sharding, frontend attributes and control predecessors.

use super::shape::{join, shape_text};
use super::ModuleText;
use crate::analysis::number_text::format_g;
use crate::proto::hlo::{ConvolutionDimensionNumbers, HloInstructionProto, OpSharding, PrecisionConfig, Window};
use std::fmt::Write;

/// `{a,b,c}`.
fn braced(values: &[i64]) -> String {
    let mut s = String::from("{");
    join(&mut s, values, ",");
    s.push('}');
    s
}

/// Bits of a primitive type (0 for tuples, tokens and unknown types).
pub fn bit_width(element_type: i32) -> u32 {
    match element_type {
        1 | 2 | 6 => 8,
        3 | 7 | 10 | 16 => 16,
        4 | 8 | 11 => 32,
        5 | 9 | 12 | 15 => 64,
        18 => 128,
        19 | 20 | 23 | 24 | 25 | 28 | 29 | 33 => 8,
        21 | 22 | 32 => 4,
        26 | 27 => 2,
        30 | 31 => 1,
        _ => 0,
    }
}

/// Every attribute of `instr`, each as `key=value`. `wrapped` is the instruction an async op
/// stands for (its attributes are the op's).
pub fn attributes(m: &ModuleText, instr: &HloInstructionProto, wrapped: Option<&HloInstructionProto>) -> Vec<String> {
    let mut out = Vec::new();
    own(m, instr, &mut out);
    if let Some(w) = wrapped {
        if instr.opcode == "async-start" {
            own(m, w, &mut out);
            called(m, w, None, &mut out);
            common(m, w, &mut out);
        }
    }
    called(m, instr, wrapped, &mut out);
    common(m, instr, &mut out);
    out
}

/// The attributes of the opcode's instruction class.
fn own(m: &ModuleText, i: &HloInstructionProto, out: &mut Vec<String>) {
    let op = i.opcode.as_str();
    match op {
        "batch-norm-training" | "batch-norm-inference" | "batch-norm-grad" => {
            out.push(format!("epsilon={}", format_g(f64::from(i.epsilon), 6)));
            out.push(format!("feature_index={}", i.feature_index));
        }
        "fft" => {
            let name = ["FFT", "IFFT", "RFFT", "IRFFT"].get(i.fft_type as usize).copied().unwrap_or("FFT");
            out.push(format!("fft_type={name}"));
            out.push(format!("fft_length={}", braced(&i.fft_length)));
        }
        "async-start" if !i.async_execution_thread.is_empty() && i.async_execution_thread != "main" => {
            out.push(format!("async_execution_thread=\"{}\"", i.async_execution_thread));
        }
        "copy-start" => {
            if let Some(crate::proto::hlo::hlo_instruction_proto::OptionalCrossProgramPrefetchIndex::CrossProgramPrefetchIndex(n)) =
                i.optional_cross_program_prefetch_index
            {
                out.push(format!("cross_program_prefetch_index={n}"));
            }
        }
        "compare" => {
            out.push(format!("direction={}", i.comparison_direction));
            let operand_type = m.operand(i, 0).and_then(|o| o.shape.as_ref()).map_or(0, |s| s.element_type);
            if !i.comparison_type.is_empty() && i.comparison_type != default_comparison_type(operand_type) {
                out.push(format!("type={}", i.comparison_type));
            }
        }
        "send" | "recv" | "send-done" | "recv-done" => {
            channel(i, out);
            if i.is_host_transfer {
                out.push("is_host_transfer=true".into());
            }
        }
        "all-gather" | "all-gather-start" => {
            collective(i, out);
            out.push(format!("dimensions={}", braced(&i.dimensions[..i.dimensions.len().min(1)])));
            global_ids(i, out);
        }
        "all-reduce" | "all-reduce-start" => {
            collective(i, out);
            global_ids(i, out);
        }
        "reduce-scatter" => {
            collective(i, out);
            global_ids(i, out);
            out.push(format!("dimensions={}", braced(&i.dimensions[..i.dimensions.len().min(1)])));
        }
        "all-to-all" => {
            collective(i, out);
            if let Some(&d) = i.dimensions.first() {
                out.push(format!("dimensions={{{d}}}"));
            }
        }
        "ragged-all-to-all" | "collective-broadcast" => collective(i, out),
        "collective-permute" | "collective-permute-start" => {
            channel(i, out);
            let pairs: Vec<String> = i.source_target_pairs.iter().map(|p| format!("{{{},{}}}", p.source, p.target)).collect();
            out.push(format!("source_target_pairs={{{}}}", pairs.join(",")));
        }
        "reverse" | "concatenate" | "reduce" | "transpose" | "broadcast" | "map" => {
            out.push(format!("dimensions={}", braced(&i.dimensions)));
        }
        "sort" => {
            out.push(format!("dimensions={}", braced(&i.dimensions)));
            if i.is_stable {
                out.push("is_stable=true".into());
            }
        }
        "reshape" => {
            if let Some(d) = i.dimensions.first() {
                out.push(format!("inferred_dimension={d}"));
            }
        }
        "slice" => {
            let all_unit = i.slice_dimensions.iter().all(|s| s.stride == 1);
            let parts: Vec<String> = i
                .slice_dimensions
                .iter()
                .map(|s| if all_unit { format!("[{}:{}]", s.start, s.limit) } else { format!("[{}:{}:{}]", s.start, s.limit, s.stride) })
                .collect();
            out.push(format!("slice={{{}}}", parts.join(", ")));
        }
        "fusion" => {
            out.push(format!("kind={}", i.fusion_kind));
            aliasing(i, out);
        }
        "rng" => {
            let name = ["rng_invalid", "rng_uniform", "rng_normal"].get(i.distribution as usize).copied().unwrap_or("rng_invalid");
            out.push(format!("distribution={name}"));
        }
        "get-tuple-element" => out.push(format!("index={}", i.tuple_index)),
        "reduce-precision" => {
            out.push(format!("exponent_bits={}", i.exponent_bits));
            out.push(format!("mantissa_bits={}", i.mantissa_bits));
        }
        "outfeed" => {
            if let Some(s) = &i.outfeed_shape {
                out.push(format!("outfeed_shape={}", shape_text(s)));
            }
        }
        "convolution" => {
            window(i.window.as_ref(), out);
            if let Some(d) = &i.convolution_dimension_numbers {
                out.push(format!("dim_labels={}", dim_labels(d)));
            }
            group_counts(i, out);
            precision(i.precision_config.as_ref(), out);
        }
        "reduce-window" | "select-and-scatter" => window(i.window.as_ref(), out),
        "custom-call" => custom_call(i, out),
        "pad" => {
            let dims = i.padding_config.as_ref().map_or(&[][..], |p| p.dimensions.as_slice());
            let interior = dims.iter().any(|d| d.interior_padding != 0);
            let parts: Vec<String> = dims
                .iter()
                .map(|d| {
                    let mut s = format!("{}_{}", d.edge_padding_low, d.edge_padding_high);
                    if interior {
                        let _ = write!(s, "_{}", d.interior_padding);
                    }
                    s
                })
                .collect();
            out.push(format!("padding={}", parts.join("x")));
        }
        "dynamic-slice" => out.push(format!("dynamic_slice_sizes={}", braced(&i.dynamic_slice_sizes))),
        "gather" => {
            let d = i.gather_dimension_numbers.clone().unwrap_or_default();
            out.push(index_dnums(
                &[
                    ("offset_dims", &d.offset_dims),
                    ("collapsed_slice_dims", &d.collapsed_slice_dims),
                    ("start_index_map", &d.start_index_map),
                ],
                &[("operand_batching_dims", &d.operand_batching_dims), ("start_indices_batching_dims", &d.start_indices_batching_dims)],
                d.index_vector_dim,
            ));
            out.push(format!("slice_sizes={}", braced(&i.gather_slice_sizes)));
            if i.indices_are_sorted {
                out.push("indices_are_sorted=true".into());
            }
        }
        "scatter" => {
            let d = i.scatter_dimension_numbers.clone().unwrap_or_default();
            out.push(index_dnums(
                &[
                    ("update_window_dims", &d.update_window_dims),
                    ("inserted_window_dims", &d.inserted_window_dims),
                    ("scatter_dims_to_operand_dims", &d.scatter_dims_to_operand_dims),
                ],
                &[("input_batching_dims", &d.input_batching_dims), ("scatter_indices_batching_dims", &d.scatter_indices_batching_dims)],
                d.index_vector_dim,
            ));
            if i.indices_are_sorted {
                out.push("indices_are_sorted=true".into());
            }
            if i.unique_indices {
                out.push("unique_indices=true".into());
            }
        }
        "iota" => out.push(format!("iota_dimension={}", i.dimensions.first().copied().unwrap_or(0))),
        "dot" | "scaled-dot" => {
            let d = i.dot_dimension_numbers.clone().unwrap_or_default();
            let mut parts = Vec::new();
            if !d.lhs_batch_dimensions.is_empty() {
                parts.push(format!("lhs_batch_dims={}", braced(&d.lhs_batch_dimensions)));
            }
            parts.push(format!("lhs_contracting_dims={}", braced(&d.lhs_contracting_dimensions)));
            if !d.rhs_batch_dimensions.is_empty() {
                parts.push(format!("rhs_batch_dims={}", braced(&d.rhs_batch_dimensions)));
            }
            parts.push(format!("rhs_contracting_dims={}", braced(&d.rhs_contracting_dimensions)));
            out.push(parts.join(", "));
            precision(i.precision_config.as_ref(), out);
        }
        "get-dimension-size" | "set-dimension-size" => {
            out.push(format!("dimensions={{{}}}", i.dimensions.first().copied().unwrap_or(0)));
        }
        "rng-get-and-update-state" => out.push(format!("delta={}", i.delta)),
        "rng-bit-generator" => {
            let name = ["rng_default", "rng_three_fry", "rng_philox"].get(i.rng_algorithm as usize).copied().unwrap_or("rng_default");
            out.push(format!("algorithm={name}"));
        }
        "topk" => {
            out.push(format!("k={}", i.k));
            out.push(format!("largest={}", i.largest));
        }
        _ => {}
    }
}

/// Gather's or scatter's dimension numbers: the `always` lists, the `if_any` lists that are not
/// empty, then `index_vector_dim`.
fn index_dnums(always: &[(&str, &[i64])], if_any: &[(&str, &[i64])], index_vector_dim: i64) -> String {
    let listed = always.iter().chain(if_any.iter().filter(|(_, v)| !v.is_empty()));
    let mut parts: Vec<String> = listed.map(|(name, v)| format!("{name}={}", braced(v))).collect();
    parts.push(format!("index_vector_dim={index_vector_dim}"));
    parts.join(", ")
}

fn default_comparison_type(element_type: i32) -> &'static str {
    match element_type {
        10 | 11 | 12 | 15 | 16 | 18 | 19 | 20 | 23 | 24 | 25 | 28 | 29 | 32 | 33 => "FLOAT",
        2..=5 | 21 | 26 | 30 => "SIGNED",
        _ => "UNSIGNED",
    }
}

fn channel(i: &HloInstructionProto, out: &mut Vec<String>) {
    if i.channel_id != 0 {
        out.push(format!("channel_id={}", i.channel_id));
    }
}

/// Channel, replica groups and `constrain_layout` of a collective (XLA's `HloCollectiveInstruction`).
fn collective(i: &HloInstructionProto, out: &mut Vec<String>) {
    channel(i, out);
    out.push(format!("replica_groups={}", replica_groups(i)));
    if i.constrain_layout {
        out.push("constrain_layout=true".into());
    }
}

/// The legacy list `{{0,1},{2,3}}` when present, else the device list: its iota form
/// `[groups,size]<=[reshape]T(perm)` or its explicit groups.
fn replica_groups(i: &HloInstructionProto) -> String {
    let explicit = |groups: &[crate::proto::hlo::ReplicaGroup]| {
        let parts: Vec<String> = groups.iter().map(|g| braced(&g.replica_ids)).collect();
        format!("{{{}}}", parts.join(","))
    };
    if !i.replica_groups.is_empty() {
        return explicit(&i.replica_groups);
    }
    let Some(list) = &i.collective_device_list else { return "{}".into() };
    match &list.iota_replica_group_list {
        Some(iota) => {
            let mut s = format!("[{},{}]<=[", iota.num_replica_groups, iota.num_devices_per_group);
            join(&mut s, &iota.iota_reshape_dims, ",");
            s.push(']');
            if iota.iota_reshape_dims.len() > 1 {
                s.push_str("T(");
                join(&mut s, &iota.iota_transpose_perm, ",");
                s.push(')');
            }
            s
        }
        None => explicit(&list.replica_groups),
    }
}

fn global_ids(i: &HloInstructionProto, out: &mut Vec<String>) {
    if i.use_global_device_ids {
        out.push("use_global_device_ids=true".into());
    }
}

/// `{output_index}: (operand, {operand_index})` pairs.
fn aliasing(i: &HloInstructionProto, out: &mut Vec<String>) {
    if i.output_operand_aliasing.is_empty() {
        return;
    }
    let pairs: Vec<String> = i
        .output_operand_aliasing
        .iter()
        .map(|a| format!("{}: ({}, {})", braced(&a.output_shape_index), a.operand_index, braced(&a.operand_shape_index)))
        .collect();
    out.push(format!("output_to_operand_aliasing={{{}}}", pairs.join(", ")));
}

/// `window={size=… stride=… pad=… lhs_dilate=… rhs_dilate=… rhs_reversal=…}` (XLA's `window_util::ToString`).
fn window(w: Option<&Window>, out: &mut Vec<String>) {
    let Some(w) = w.filter(|w| !w.dimensions.is_empty()) else { return };
    let d = &w.dimensions;
    let field = |name: &str, f: &dyn Fn(&crate::proto::hlo::WindowDimension) -> String| {
        format!("{name}={}", d.iter().map(f).collect::<Vec<_>>().join("x"))
    };
    let mut parts = vec![field("size", &|x| x.size.to_string())];
    if d.iter().any(|x| x.stride != 1) {
        parts.push(field("stride", &|x| x.stride.to_string()));
    }
    if d.iter().any(|x| x.padding_low != 0 || x.padding_high != 0) {
        parts.push(field("pad", &|x| format!("{}_{}", x.padding_low, x.padding_high)));
    }
    if d.iter().any(|x| x.base_dilation != 1) {
        parts.push(field("lhs_dilate", &|x| x.base_dilation.to_string()));
    }
    if d.iter().any(|x| x.window_dilation != 1) {
        parts.push(field("rhs_dilate", &|x| x.window_dilation.to_string()));
    }
    if d.iter().any(|x| x.window_reversal) {
        parts.push(field("rhs_reversal", &|x| u8::from(x.window_reversal).to_string()));
    }
    out.push(format!("window={{{}}}", parts.join(" ")));
}

/// `b01f_01io->b01f` (XLA's `ConvolutionDimensionNumbersToString`).
fn dim_labels(d: &ConvolutionDimensionNumbers) -> String {
    fn side(a: (i64, &str), b: (i64, &str), spatial: &[i64]) -> String {
        let len = [a.0, b.0].into_iter().chain(spatial.iter().copied()).max().unwrap_or(0).max(0) as usize + 1;
        let mut labels = vec!["?".to_string(); len.min(1 << 10)];
        let mut set = |i: i64, label: String| {
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| labels.get_mut(i)) {
                *slot = label;
            }
        };
        set(a.0, a.1.into());
        set(b.0, b.1.into());
        for (n, &s) in spatial.iter().enumerate() {
            set(s, n.to_string());
        }
        labels.concat()
    }
    format!(
        "{}_{}->{}",
        side((d.input_batch_dimension, "b"), (d.input_feature_dimension, "f"), &d.input_spatial_dimensions),
        side((d.kernel_input_feature_dimension, "i"), (d.kernel_output_feature_dimension, "o"), &d.kernel_spatial_dimensions),
        side((d.output_batch_dimension, "b"), (d.output_feature_dimension, "f"), &d.output_spatial_dimensions),
    )
}

fn group_counts(i: &HloInstructionProto, out: &mut Vec<String>) {
    // A proto's 0 is XLA's default of 1.
    if i.feature_group_count > 1 {
        out.push(format!("feature_group_count={}", i.feature_group_count));
    }
    if i.batch_group_count > 1 {
        out.push(format!("batch_group_count={}", i.batch_group_count));
    }
}

const ALGORITHMS: [&str; 14] = [
    "unset",
    "dot_any_f8_any_f8_f32",
    "dot_any_f8_any_f8_f32_fast_accum",
    "dot_f16_f16_f16",
    "dot_f16_f16_f32",
    "dot_bf16_bf16_bf16",
    "dot_bf16_bf16_f32",
    "dot_bf16_bf16_f32_x3",
    "dot_bf16_bf16_f32_x6",
    "dot_tf32_tf32_f32",
    "dot_tf32_tf32_f32_x3",
    "dot_f32_f32_f32",
    "dot_f64_f64_f64",
    "dot_bf16_bf16_f32_x9",
];

/// `operand_precision={default,high}` when one is not the default, and `algorithm=…` when set.
fn precision(p: Option<&PrecisionConfig>, out: &mut Vec<String>) {
    let Some(p) = p else { return };
    if p.operand_precision.iter().any(|&x| x != 0) {
        let names: Vec<&str> =
            p.operand_precision.iter().map(|&x| ["default", "high", "highest"].get(x as usize).copied().unwrap_or("default")).collect();
        out.push(format!("operand_precision={{{}}}", names.join(",")));
    }
    if p.algorithm != 0 {
        out.push(format!("algorithm={}", ALGORITHMS.get(p.algorithm as usize).copied().unwrap_or("unset")));
    }
}

fn custom_call(i: &HloInstructionProto, out: &mut Vec<String>) {
    window(i.window.as_ref(), out);
    if let Some(d) = &i.convolution_dimension_numbers {
        out.push(format!("dim_labels={}", dim_labels(d)));
    }
    group_counts(i, out);
    precision(i.precision_config.as_ref(), out);
    if let Some(name) = ["PADDING_VALID", "PADDING_SAME"].get((i.padding_type as usize).wrapping_sub(1)) {
        out.push(format!("padding_type={name}"));
    }
    out.push(format!("custom_call_target=\"{}\"", c_escape(&i.custom_call_target)));
    if i.constrain_layout {
        let shapes: Vec<String> = i.operand_shapes_with_layout.iter().map(shape_text).collect();
        out.push(format!("operand_layout_constraints={{{}}}", shapes.join(", ")));
    }
    if i.custom_call_has_side_effect {
        out.push("custom_call_has_side_effect=true".into());
    }
    aliasing(i, out);
    if let Some(name) = ["SCHEDULE_LATEST", "SCHEDULE_EARLIEST"].get((i.custom_call_schedule as usize).wrapping_sub(1)) {
        out.push(format!("schedule={name}"));
    }
    // XLA leaves out its default, the original API.
    let api =
        ["API_VERSION_UNSPECIFIED", "", "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"];
    if let Some(name) = api.get(i.custom_call_api_version as usize).filter(|n| !n.is_empty()) {
        out.push(format!("api_version={name}"));
    }
}

/// C-style escaping of a string in quotes (absl's `CEscape`).
fn c_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

/// The called computations by name (XLA's `kNameOnly` mode).
fn called(m: &ModuleText, i: &HloInstructionProto, wrapped: Option<&HloInstructionProto>, out: &mut Vec<String>) {
    let ids = &i.called_computation_ids;
    let name = |k: usize| ids.get(k).map(|&id| m.computation_name(id)).unwrap_or_default();
    let names = |sep: &str| ids.iter().map(|&id| m.computation_name(id)).collect::<Vec<_>>().join(sep);
    match i.opcode.as_str() {
        "while" => {
            out.push(format!("condition={}", name(1)));
            out.push(format!("body={}", name(0)));
        }
        "select-and-scatter" => {
            out.push(format!("select={}", name(0)));
            out.push(format!("scatter={}", name(1)));
        }
        "conditional" => {
            let pred = m.operand(i, 0).and_then(|o| o.shape.as_ref()).is_some_and(|s| s.element_type == 1);
            if pred {
                out.push(format!("true_computation={}", name(0)));
                out.push(format!("false_computation={}", name(1)));
            } else {
                out.push(format!("branch_computations={{{}}}", names(", ")));
            }
        }
        "call" | "map" | "reduce-window" | "reduce" | "all-reduce" | "reduce-scatter" | "all-reduce-start" | "scatter" | "sort" => {
            if !ids.is_empty() {
                out.push(format!("to_apply={}", name(0)));
            }
            if i.opcode == "call" && i.is_composite {
                out.push("is_composite=true".into());
            }
        }
        "custom-call" => {
            if !ids.is_empty() {
                out.push(format!("called_computations={{{}}}", names(", ")));
            }
        }
        "async-start" | "async-update" | "async-done" => {
            if i.opcode == "async-start" && wrapped.is_none() && !ids.is_empty() {
                out.push(format!("calls={}", name(0)));
            }
        }
        _ => {
            if !ids.is_empty() {
                out.push(format!("calls={}", names(", ")));
            }
        }
    }
}

/// Sharding, frontend attributes and control predecessors, common to every instruction.
fn common(m: &ModuleText, i: &HloInstructionProto, out: &mut Vec<String>) {
    if let Some(s) = &i.sharding {
        out.push(format!("sharding={}", sharding(s)));
    }
    if let Some(f) = i.frontend_attributes.as_ref().filter(|f| !f.map.is_empty()) {
        let mut items: Vec<(&String, &String)> = f.map.iter().collect();
        items.sort();
        let parts: Vec<String> = items
            .into_iter()
            .map(|(k, v)| if lexes_as_json_dict(v) { format!("{k}={v}") } else { format!("{k}=\"{}\"", c_escape(v)) })
            .collect();
        out.push(format!("frontend_attributes={{{}}}", parts.join(",")));
    }
    if !i.control_predecessor_ids.is_empty() {
        let names: Vec<String> =
            i.control_predecessor_ids.iter().map(|&id| format!("%{}", m.instruction(id).map_or("", |p| p.name.as_str()))).collect();
        out.push(format!("control-predecessors={{{}}}", names.join(", ")));
    }
}

/// Whether XLA would print a value unquoted: a `{…}` with balanced braces outside strings.
fn lexes_as_json_dict(s: &str) -> bool {
    let s = s.trim();
    if !s.starts_with('{') || !s.ends_with('}') {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0i64, false, false);
    for (n, c) in s.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 && n + 1 != s.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0 && !in_string
}

/// XLA's `HloSharding::ToString` without metadata, for the forms XLA writes to protos.
fn sharding(s: &OpSharding) -> String {
    const REPLICATED: i32 = 0;
    const MAXIMAL: i32 = 1;
    const TUPLE: i32 = 2;
    const MANUAL: i32 = 4;
    const UNKNOWN: i32 = 5;
    const UNREDUCED: i32 = 6;
    match s.r#type {
        REPLICATED => "{replicated}".into(),
        MANUAL => "{manual}".into(),
        UNKNOWN => "{unknown}".into(),
        UNREDUCED => "{unreduced}".into(),
        MAXIMAL => format!("{{maximal device={}}}", s.tile_assignment_devices.first().copied().unwrap_or(0)),
        TUPLE => format!("{{{}}}", s.tuple_shardings.iter().map(sharding).collect::<Vec<_>>().join(", ")),
        _ => {
            let mut out = String::from("{devices=[");
            join(&mut out, &s.tile_assignment_dimensions, ",");
            out.push(']');
            if s.iota_reshape_dims.is_empty() {
                join(&mut out, &s.tile_assignment_devices, ",");
            } else {
                out.push_str("<=[");
                join(&mut out, &s.iota_reshape_dims, ",");
                out.push(']');
                if s.iota_reshape_dims.len() > 1 {
                    out.push_str("T(");
                    join(&mut out, &s.iota_transpose_perm, ",");
                    out.push(')');
                }
            }
            if s.replicate_on_last_tile_dim {
                out.push_str(" last_tile_dim_replicate");
            }
            if !s.last_tile_dims.is_empty() {
                let names: Vec<&str> = s
                    .last_tile_dims
                    .iter()
                    .map(|&t| match t {
                        REPLICATED => "replicated",
                        MANUAL => "manual",
                        UNREDUCED => "unreduced",
                        _ => "unknown",
                    })
                    .collect();
                let _ = write!(out, " last_tile_dims={{{}}}", names.join(", "));
            }
            out.push('}');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::hlo::WindowDimension;

    #[test]
    fn windows_and_dim_labels_print_as_xla_does() {
        let dim = |size, stride, pad| WindowDimension {
            size,
            stride,
            padding_low: pad,
            padding_high: pad,
            window_dilation: 1,
            base_dilation: 1,
            ..Default::default()
        };
        let mut out = Vec::new();
        window(Some(&Window { dimensions: vec![dim(1, 1, 1), dim(2, 2, 1), dim(2, 2, 1)] }), &mut out);
        assert_eq!(out, ["window={size=1x2x2 stride=1x2x2 pad=1_1x1_1x1_1}"]);
        let d = ConvolutionDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 1,
            input_spatial_dimensions: vec![2, 3, 4],
            kernel_output_feature_dimension: 0,
            kernel_input_feature_dimension: 1,
            kernel_spatial_dimensions: vec![2, 3, 4],
            output_batch_dimension: 0,
            output_feature_dimension: 1,
            output_spatial_dimensions: vec![2, 3, 4],
        };
        assert_eq!(dim_labels(&d), "bf012_oi012->bf012");
    }

    #[test]
    fn gather_dimension_numbers_print_as_xla_does() {
        let d = index_dnums(
            &[("offset_dims", &[1]), ("collapsed_slice_dims", &[0]), ("start_index_map", &[0])],
            &[("operand_batching_dims", &[])],
            1,
        );
        assert_eq!(d, "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1");
    }

    #[test]
    fn json_dicts_are_recognised() {
        assert!(lexes_as_json_dict(r#"{"a":"}"}"#));
        assert!(!lexes_as_json_dict("{a}{b}"));
        assert!(!lexes_as_json_dict("plain"));
    }

    #[test]
    fn shardings_print_as_xla_does() {
        let tiled =
            OpSharding { r#type: 3, tile_assignment_dimensions: vec![2, 1], tile_assignment_devices: vec![0, 1], ..Default::default() };
        assert_eq!(sharding(&tiled), "{devices=[2,1]0,1}");
        let iota = OpSharding { r#type: 3, tile_assignment_dimensions: vec![4, 2], iota_reshape_dims: vec![8], ..Default::default() };
        assert_eq!(sharding(&iota), "{devices=[4,2]<=[8]}");
        assert_eq!(sharding(&OpSharding { r#type: 1, tile_assignment_devices: vec![3], ..Default::default() }), "{maximal device=3}");
        let tuple = OpSharding { r#type: 2, tuple_shardings: vec![OpSharding::default(), OpSharding::default()], ..Default::default() };
        assert_eq!(sharding(&tuple), "{{replicated}, {replicated}}");
    }

    #[test]
    fn strings_are_c_escaped() {
        assert_eq!(c_escape("__cudnn$convForward"), "__cudnn$convForward");
        assert_eq!(c_escape("a\"b\n"), "a\\\"b\\n");
    }
}
