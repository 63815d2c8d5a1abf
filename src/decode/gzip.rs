//! Bounded gzip inflation: profiles arrive gzipped (`*.prof`, `*.xplane.pb.gz`, compressed stats), and a
//! hostile file must not be able to expand into all of memory.

use std::io::Read;

/// Magic bytes of a gzip member.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The most a gzip stream may expand to, whatever its ratio (well under the 4 GiB wasm address space).
pub const MAX_OUTPUT_BYTES: u64 = 2 << 30;
/// Real profiles compress 5–30×; 1000× is a decompression bomb.
pub const MAX_RATIO: u64 = 1000;
/// Below this output size the ratio is not checked (tiny inputs legitimately have large ratios).
const RATIO_FREE_BYTES: u64 = 64 << 20;

pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Why a gzip stream could not be inflated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GzipError {
    #[error("the gzip stream is truncated: it ends at byte {compressed_len} before its end marker ({inflated} bytes inflated so far)")]
    Truncated { compressed_len: usize, inflated: u64 },
    #[error("the gzip stream is corrupt ({0})")]
    Corrupt(String),
    #[error("the gzip stream inflates past {limit} bytes (from {compressed_len} compressed bytes); refusing it as a likely decompression bomb")]
    TooLarge { limit: u64, compressed_len: usize },
}

/// The output limit for `compressed_len` input bytes.
pub fn limit_for(compressed_len: usize) -> u64 {
    (compressed_len as u64).saturating_mul(MAX_RATIO).clamp(RATIO_FREE_BYTES, MAX_OUTPUT_BYTES)
}

/// Inflates every gzip member in `bytes`, refusing output past [`limit_for`].
pub fn inflate(bytes: &[u8]) -> Result<Vec<u8>, GzipError> {
    inflate_with_limit(bytes, limit_for(bytes.len()))
}

pub fn inflate_with_limit(bytes: &[u8], limit: u64) -> Result<Vec<u8>, GzipError> {
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4).min(limit as usize));
    let reader = flate2::read::MultiGzDecoder::new(bytes);
    let read = reader.take(limit + 1).read_to_end(&mut out);
    match read {
        Ok(_) if out.len() as u64 > limit => Err(GzipError::TooLarge { limit, compressed_len: bytes.len() }),
        Ok(_) => Ok(out),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(GzipError::Truncated { compressed_len: bytes.len(), inflated: out.len() as u64 })
        }
        Err(e) => Err(GzipError::Corrupt(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn round_trips_and_bounds() {
        let data = vec![7u8; 100_000];
        let z = gz(&data);
        assert_eq!(inflate(&z).unwrap(), data);
        assert!(matches!(inflate_with_limit(&z, 1000), Err(GzipError::TooLarge { limit: 1000, .. })));
        assert!(matches!(inflate(&z[..z.len() / 2]), Err(GzipError::Truncated { .. })));
    }
}
