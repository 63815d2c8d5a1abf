//! TensorFlow `DataType` numbers as XProf names them in the Memory Profile (`DataTypeString` in XProf's
//! `tensorflow_utils.cc`): lower-case type names, `INVALID` for 0, `<name>_ref` for values above 100,
//! and `unknown dtype enum (N)` for anything else.

/// The `data_type` stat's number as XProf prints it.
pub fn name(dtype: i64) -> String {
    const REF_OFFSET: i64 = 100;
    // XProf's `IsRefType` is strictly greater than 100: 100 itself is an unknown value.
    if dtype > REF_OFFSET {
        format!("{}_ref", base_name(dtype - REF_OFFSET))
    } else {
        base_name(dtype)
    }
}

fn base_name(dtype: i64) -> String {
    let known = match dtype {
        0 => "INVALID",
        1 => "float",
        2 => "double",
        3 => "int32",
        4 => "uint8",
        5 => "int16",
        6 => "int8",
        7 => "string",
        8 => "complex64",
        9 => "int64",
        10 => "bool",
        11 => "qint8",
        12 => "quint8",
        13 => "qint32",
        14 => "bfloat16",
        15 => "qint16",
        16 => "quint16",
        17 => "uint16",
        18 => "complex128",
        19 => "half",
        20 => "resource",
        21 => "variant",
        22 => "uint32",
        23 => "uint64",
        24 => "float8_e5m2",
        25 => "float8_e4m3fn",
        26 => "float8_e4m3fnuz",
        27 => "float8_e4m3b11fnuz",
        28 => "float8_e5m2fnuz",
        29 => "int4",
        30 => "uint4",
        // 31 (int2), 32 (uint2) and everything else: XProf has no name for them.
        _ => return format!("unknown dtype enum ({dtype})"),
    };
    known.to_string()
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn names_follow_xprof() {
        assert_eq!(name(0), "INVALID");
        assert_eq!(name(1), "float");
        assert_eq!(name(21), "variant");
        assert_eq!(name(101), "float_ref");
        assert_eq!(name(100), "unknown dtype enum (100)");
        assert_eq!(name(131), "unknown dtype enum (31)_ref");
        assert_eq!(name(-3), "unknown dtype enum (-3)");
    }
}
