//! Framework op names: `name:type` split into the op's name and type, as XProf's `ParseTfOpFullname`
//! does. A host TraceMe named `model/dense/MatMul:MatMul` is a TensorFlow op, `Iterator::Prefetch::Map`
//! a tf.data stage, `jit(f)/dot_general:` a JAX op; anything else (user TraceMes, Python frames) is of
//! unknown category, which the host op table skips (but not when it comes from a `tf_op` stat).
//!
//! The rule, on the text before and after the first `:` (`a`, `b`):
//! - no `:` — unknown, unless the name starts (any case) with `MEMCPYHToD`, `MEMCPYDToH`, `MEMCPYDToD`
//!   or `MEMCPYHToH`: then a memcpy of that type, named by the whole text;
//! - `a` is `Iterator` — a tf.data op of type `Dataset`, named by the whole text;
//! - `a` looks like a TF op name (`[A-Za-z0-9.][A-Za-z0-9_./>-]*`) and `b` like a TF type (`[A-Z_][A-Za-z0-9_]*`)
//!   — TensorFlow op `a` of type `b`;
//! - the type `b`, or when `b` is empty the last `/` part of `a` less a numeric `_N` suffix, looks like a
//!   JAX type (`[a-z_][a-z0-9_]*` with an optional `[...]` tail) — JAX op `a` of that type, the tail dropped;
//! - `b` empty — TensorFlow op `a` of that derived type;
//! - else unknown, named by the whole text.

/// What kind of op a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TfOpCategory {
    #[default]
    Unknown,
    TensorFlow,
    Jax,
    /// A tf.data stage (`Iterator::...`).
    TfData,
    MemcpyHToD,
    MemcpyDToH,
    MemcpyDToD,
    MemcpyHToH,
    /// A stage of the newer input-pipeline instrumentation (named by the trace, not parsed).
    InputPipeline,
}

/// A parsed framework op name (borrowed from the text parsed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TfOp<'a> {
    pub category: TfOpCategory,
    pub name: &'a str,
    /// The op type; empty when unknown.
    pub type_: &'a str,
}

/// The type of a tf.data op.
pub const DATASET_OP: &str = "Dataset";

const MEMCPY_TYPES: [(&str, &str, TfOpCategory); 4] = [
    ("MEMCPYHToD", "MemcpyHToD", TfOpCategory::MemcpyHToD),
    ("MEMCPYDToH", "MemcpyDToH", TfOpCategory::MemcpyDToH),
    ("MEMCPYDToD", "MemcpyDToD", TfOpCategory::MemcpyDToD),
    ("MEMCPYHToH", "MemcpyHToH", TfOpCategory::MemcpyHToH),
];

/// Splits `fullname` into op name and type by the rule in the module doc.
pub fn parse_tf_op_fullname(fullname: &str) -> TfOp<'_> {
    let unknown = TfOp { category: TfOpCategory::Unknown, name: fullname, type_: "" };
    let Some((a, b)) = fullname.split_once(':') else {
        return MEMCPY_TYPES
            .iter()
            .find(|(prefix, _, _)| fullname.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix)))
            .map_or(unknown, |&(_, type_, category)| TfOp { category, name: fullname, type_ });
    };
    if a == "Iterator" {
        return TfOp { category: TfOpCategory::TfData, name: fullname, type_: DATASET_OP };
    }
    if is_tf_op_name(a) && is_tf_op_type(b) {
        return TfOp { category: TfOpCategory::TensorFlow, name: a, type_: b };
    }
    let type_ = if b.is_empty() { derive_op_type(a) } else { b };
    if is_jax_op_type(type_) {
        let bare = type_.find('[').map_or(type_, |i| &type_[..i]);
        return TfOp { category: TfOpCategory::Jax, name: a, type_: bare };
    }
    if b.is_empty() {
        return TfOp { category: TfOpCategory::TensorFlow, name: a, type_ };
    }
    unknown
}

/// `[A-Za-z0-9.][A-Za-z0-9_./>-]*` (XProf's `IsTfOpName`; `\/` in its pattern is a plain `/`).
pub fn is_tf_op_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.')
        && bytes.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'>' | b'-'))
}

/// `[A-Z_][a-zA-Z0-9_]*` (XProf's `IsTfOpType`).
pub fn is_tf_op_type(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|c| c.is_ascii_uppercase() || c == b'_') && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `[a-z_][a-z0-9_]*(\[.*\])?` (XProf's `IsJaxOpType`; `.` does not match a newline).
pub fn is_jax_op_type(s: &str) -> bool {
    let head_end = s.find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')).unwrap_or(s.len());
    let (head, tail) = s.split_at(head_end);
    let head_ok = head.bytes().next().is_some_and(|c| c.is_ascii_lowercase() || c == b'_');
    let tail_ok = tail.is_empty() || (tail.len() >= 2 && tail.starts_with('[') && tail.ends_with(']') && !tail.contains('\n'));
    head_ok && tail_ok
}

/// Whether `name` and `type_` look like a JAX op: a JAX type that the name's last `/` part contains
/// (XProf's `IsJaxOpNameAndType`).
pub fn is_jax_op_name_and_type(name: &str, type_: &str) -> bool {
    !name.is_empty() && is_jax_op_type(type_) && name.rsplit('/').next().is_some_and(|last| last.contains(type_))
}

/// The op type a name implies: its last `/` part without a numeric `_N` suffix (`model/MatMul_1` →
/// `MatMul`; XProf's `DeriveOpType`).
fn derive_op_type(full_name: &str) -> &str {
    let op_name = full_name.rsplit('/').next().unwrap_or(full_name);
    let suffix = op_name.rsplit('_').next().unwrap_or(op_name);
    if is_integer(suffix) {
        // A name that is all digits has no `_` before its "suffix": XProf's substring then keeps it whole.
        op_name.len().checked_sub(suffix.len() + 1).map_or(op_name, |end| &op_name[..end])
    } else {
        op_name
    }
}

/// Whether `s` parses as a 64-bit integer as `absl::SimpleAtoi` reads one: ASCII whitespace around, an
/// optional sign, decimal digits.
fn is_integer(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) && t.parse::<i64>().is_ok()
}

/// The name scopes of a TF op name: every `/` part but the last (XProf's `ParseTfNameScopes`).
pub fn tf_name_scopes(name: &str) -> impl Iterator<Item = &str> {
    name.rsplit_once('/').map(|(scopes, _)| scopes.split('/')).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use TfOpCategory::*;

    fn parse(s: &str) -> (TfOpCategory, &str, &str) {
        let op = parse_tf_op_fullname(s);
        (op.category, op.name, op.type_)
    }

    #[test]
    fn tensorflow_ops() {
        assert_eq!(parse("model/dense/MatMul:MatMul"), (TensorFlow, "model/dense/MatMul", "MatMul"));
        assert_eq!(parse("sequential_1/conv2d_1_2/Relu:_FusedConv2D"), (TensorFlow, "sequential_1/conv2d_1_2/Relu", "_FusedConv2D"));
        // An empty type with a name whose last part is not a JAX type: TF, type derived.
        assert_eq!(parse("model/MatMul_12:"), (TensorFlow, "model/MatMul_12", "MatMul"));
        assert_eq!(parse("a>b/Conv2D:"), (TensorFlow, "a>b/Conv2D", "Conv2D"));
    }

    #[test]
    fn jax_ops() {
        assert_eq!(parse("jit(f)/dot_general:"), (Jax, "jit(f)/dot_general", "dot_general"));
        assert_eq!(parse("jit(f)/transpose:transpose[permutation=(0, 3, 1, 2)]"), (Jax, "jit(f)/transpose", "transpose"));
        assert_eq!(parse("jit(f)/add_3:"), (Jax, "jit(f)/add_3", "add"));
        // A TF-looking name whose type is lower-case: JAX.
        assert_eq!(
            parse("__inference_xla_eval_1243:__inference_xla_eval_1243"),
            (Jax, "__inference_xla_eval_1243", "__inference_xla_eval_1243")
        );
        assert_eq!(parse("end: add_rsqrt_fusion"), (Unknown, "end: add_rsqrt_fusion", ""));
    }

    #[test]
    fn datasets_memcpy_and_unknown() {
        let it = "Iterator::Root::Prefetch::ForeverRepeat[4]::BatchV2";
        assert_eq!(parse(it), (TfData, it, DATASET_OP));
        assert_eq!(parse("MemcpyHToD_1"), (MemcpyHToD, "MemcpyHToD_1", "MemcpyHToD"));
        assert_eq!(parse("memcpydtoh"), (MemcpyDToH, "memcpydtoh", "MemcpyDToH"));
        // A memory event's `tf_op`: a bare op name.
        assert_eq!(parse("sgd/Mul_12"), (Unknown, "sgd/Mul_12", ""));
        assert_eq!(parse("_send_x:_Send"), (Unknown, "_send_x:_Send", ""));
        assert_eq!(parse("EagerLocalExecute: IteratorGetNext"), (Unknown, "EagerLocalExecute: IteratorGetNext", ""));
        assert_eq!(parse(""), (Unknown, "", ""));
        // Nothing either side of the colon: a TF op with empty name and type, as XProf parses it.
        assert_eq!(parse(":"), (TensorFlow, "", ""));
        // Digits only: the whole last part is the type, and it is neither a TF nor a JAX type.
        assert_eq!(parse("x/123:"), (TensorFlow, "x/123", "123"));
        assert_eq!(parse("x/:"), (TensorFlow, "x/", ""));
    }

    #[test]
    fn name_scopes() {
        assert_eq!(tf_name_scopes("a/b/C").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(tf_name_scopes("C").count(), 0);
        assert_eq!(tf_name_scopes("/C").collect::<Vec<_>>(), [""]);
    }
}
