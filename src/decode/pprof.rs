//! pprof profiles (`*.prof`), as JAX's `save_device_memory_profile` writes them (gzip already removed).

use super::sniff::Format;
use super::DecodeError;
use crate::proto::pprof as pb;
use prost::Message;

const FORMAT: Format = Format::Pprof;

pub struct PprofFile {
    pub proto: pb::Profile,
}

impl PprofFile {
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        for f in super::wire::Fields::new(bytes, 0..bytes.len()) {
            f.map_err(|e| DecodeError::from_wire(FORMAT, e))?;
        }
        let proto = pb::Profile::decode(bytes).map_err(|e| DecodeError::from_prost(FORMAT, "Profile", e))?;
        if proto.string_table.first().is_some_and(|s| !s.is_empty()) {
            return Err(DecodeError::Corrupt { format: FORMAT, detail: "string_table[0] must be empty".into() });
        }
        Ok(PprofFile { proto })
    }

    /// A string-table entry; out-of-range indices (a corrupt file) read as "".
    pub fn str(&self, index: i64) -> &str {
        usize::try_from(index).ok().and_then(|i| self.proto.string_table.get(i)).map_or("", String::as_str)
    }

    /// Sample types as `type/unit`, e.g. `["allocations/count", "space/bytes"]`.
    pub fn sample_types(&self) -> Vec<String> {
        self.proto.sample_type.iter().map(|t| format!("{}/{}", self.str(t.r#type), self.str(t.unit))).collect()
    }

    /// Index of the value column whose unit is `bytes`, if any.
    pub fn bytes_column(&self) -> Option<usize> {
        self.proto.sample_type.iter().position(|t| self.str(t.unit) == "bytes")
    }

    /// Sum of the bytes column over all samples: the live bytes of a device memory profile.
    pub fn total_bytes(&self) -> i64 {
        let Some(c) = self.bytes_column() else { return 0 };
        self.proto.sample.iter().filter_map(|s| s.value.get(c)).fold(0i64, |a, v| a.saturating_add(*v))
    }
}
