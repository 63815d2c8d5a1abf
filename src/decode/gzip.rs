//! Bounded gzip inflation: profiles arrive gzipped (`*.prof`, `*.xplane.pb.gz`, compressed stats), and a
//! hostile file must not be able to expand into all of memory.

use std::io::Read;

/// Magic bytes of a gzip member.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The most a gzip stream may expand to, whatever its ratio. In the page it is what the wasm heap (at
/// most 4 GiB, the compressed file included) can hold next to the decoded index; the native CLI has
/// the machine's memory and reads larger traces.
#[cfg(target_arch = "wasm32")]
pub const MAX_OUTPUT_BYTES: u64 = 1536 << 20;
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_OUTPUT_BYTES: u64 = 4 << 30;
/// Real profiles compress 5–30×; 1000× is a decompression bomb.
pub const MAX_RATIO: u64 = 1000;
/// Below this output size the ratio is not checked (tiny inputs legitimately have large ratios).
const RATIO_FREE_BYTES: u64 = 64 << 20;
/// The output buffer starts at this size and then doubles; it never grows past the limit (+1 byte, to
/// tell "exactly the limit" from "more").
const FIRST_CHUNK_BYTES: usize = 64 << 10;

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
    #[error("the gzip stream inflates past {} (from {} compressed); refusing it as a likely decompression bomb. Real profiles compress at most ~30×; if this one is real, decompress it with `gunzip` and open it with the `tidemark` CLI", size(*.limit), size(*.compressed_len as u64))]
    TooLarge { limit: u64, compressed_len: usize },
    #[error("there is not enough memory to inflate the gzip stream past {}; decompress it with `gunzip` and open it with the `tidemark` CLI", size(*.inflated))]
    OutOfMemory { inflated: u64 },
}

fn size(n: u64) -> String {
    crate::units::bytes(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The output limit for `compressed_len` input bytes.
pub fn limit_for(compressed_len: usize) -> u64 {
    (compressed_len as u64).saturating_mul(MAX_RATIO).clamp(RATIO_FREE_BYTES, MAX_OUTPUT_BYTES)
}

/// Inflates every gzip member in `bytes`, refusing output past [`limit_for`].
pub fn inflate(bytes: &[u8]) -> Result<Vec<u8>, GzipError> {
    inflate_with_limit(bytes, limit_for(bytes.len()))
}

/// Inflates `bytes`, refusing output past `limit`. The buffer grows by doubling with fallible
/// reservations, so neither the limit nor a failed allocation (the wasm heap is small) can abort the
/// process: both come back as errors.
pub fn inflate_with_limit(bytes: &[u8], limit: u64) -> Result<Vec<u8>, GzipError> {
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    let mut reader = flate2::read::MultiGzDecoder::new(bytes);
    loop {
        if filled == out.len() {
            if out.len() >= cap {
                return Err(GzipError::TooLarge { limit, compressed_len: bytes.len() });
            }
            let grow = out.len().max(FIRST_CHUNK_BYTES).min(cap - out.len());
            out.try_reserve_exact(grow).map_err(|_| GzipError::OutOfMemory { inflated: filled as u64 })?;
            out.resize(out.len() + grow, 0);
        }
        match reader.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(GzipError::Truncated { compressed_len: bytes.len(), inflated: filled as u64 })
            }
            Err(e) => return Err(GzipError::Corrupt(e.to_string())),
        }
    }
    if filled as u64 > limit {
        return Err(GzipError::TooLarge { limit, compressed_len: bytes.len() });
    }
    out.truncate(filled);
    out.shrink_to_fit();
    Ok(out)
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
        // Exactly at the limit is fine; one byte over is not.
        assert_eq!(inflate_with_limit(&z, 100_000).unwrap().len(), 100_000);
        assert!(matches!(inflate_with_limit(&z, 99_999), Err(GzipError::TooLarge { .. })));
        // Several members are one stream.
        assert_eq!(inflate(&[z.clone(), z].concat()).unwrap().len(), 200_000);
    }

    #[test]
    fn a_bomb_stops_at_the_ratio_limit() {
        // 200 MiB of zeros compress to ~200 KiB (ratio ~1000): refused without inflating it all.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..200 {
            e.write_all(&chunk).unwrap();
        }
        let z = e.finish().unwrap();
        let limit = limit_for(z.len());
        assert!(limit < 200 << 20, "ratio limit {limit} for {} bytes", z.len());
        assert!(matches!(inflate(&z), Err(GzipError::TooLarge { .. })));
    }
}
