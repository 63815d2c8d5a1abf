//! Op Profile as XProf's JSON (the `op_profile.Profile` proto in protobuf's JSON form: camelCase
//! names, 64-bit ids as strings, every metric present).

use super::{Node, OpProfile, XlaInfo};
use serde_json::{json, Value};

fn xla(x: &XlaInfo) -> Value {
    json!({
        "op": "",
        "expression": x.expression,
        "provenance": x.provenance,
        "category": x.category,
        "computationPrimitiveSize": x.computation_primitive_size,
        "fingerprint": x.fingerprint.to_string(),
        "programId": x.program_id.to_string(),
        "sourceInfo": {
            "fileName": x.source_info.file_name,
            "lineNumber": x.source_info.line_number,
            "stackFrame": x.source_info.stack_frame,
        },
        "xprofKernelMetadata": "",
    })
}

fn node(n: &Node) -> Value {
    let m = &n.metrics;
    let mut v = json!({
        "name": n.name,
        "metrics": {
            "flops": m.flops,
            "bandwidthUtils": m.bandwidth_utils,
            "rawTime": m.raw_time_ps,
            "rawFlops": m.raw_flops,
            "rawBytesAccessedArray": m.raw_bytes_accessed,
            "occurrences": m.occurrences,
            "avgTimePs": m.avg_time_ps,
            "bf16Flops": m.bf16_flops,
            "uncappedFlops": m.uncapped_flops,
            "normalizedTimePs": m.normalized_time_ps,
        },
        "children": n.children.iter().map(node).collect::<Vec<_>>(),
        "numChildren": n.num_children,
    });
    if let Some(x) = &n.xla {
        v["xla"] = xla(x);
    }
    v
}

/// XProf's JSON: the by-program trees (with and without idle), the device type and the DVFS multiplier.
pub fn to_xprof_json(p: &OpProfile) -> Value {
    json!({
        "byProgram": node(&p.by_program),
        "deviceType": p.device_type,
        "byProgramExcludeIdle": node(&p.by_program_exclude_idle),
        "aggDvfsTimeScaleMultiplier": p.agg_dvfs_time_scale_multiplier,
    })
}
