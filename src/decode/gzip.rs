//! Bounded gzip inflation: profiles arrive gzipped (`*.prof`, `*.xplane.pb.gz`, compressed stats), and a
//! hostile file must not be able to expand into all of memory.

use super::size;
use std::io::Read;

/// Magic bytes of a gzip member.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The most a gzip stream may expand to, whatever its ratio. In the page it is the largest file the
/// page holds ([`super::MAX_INPUT_BYTES`]; a `File` is inflated as it is read, so its compressed bytes
/// are never held whole beside it); the native CLI has the machine's memory and reads larger traces.
#[cfg(target_arch = "wasm32")]
pub const MAX_OUTPUT_BYTES: u64 = super::MAX_INPUT_BYTES;
#[cfg(not(target_arch = "wasm32"))]
pub const MAX_OUTPUT_BYTES: u64 = 4 << 30;
/// Real profiles compress 5–30×; 1000× is a decompression bomb.
pub const MAX_RATIO: u64 = 1000;
/// Below this output size the ratio is not checked (tiny inputs legitimately have large ratios).
const RATIO_FREE_BYTES: u64 = 64 << 20;
/// An output buffer with no expected size starts at this size and then doubles; it never grows past
/// the limit (+1 byte, to tell "exactly the limit" from "more").
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

/// The output limit for `compressed_len` input bytes.
pub fn limit_for(compressed_len: usize) -> u64 {
    plausible_size(compressed_len).min(MAX_OUTPUT_BYTES)
}

/// The most `compressed_len` bytes of a real profile inflate to (the ratio limit alone).
pub fn plausible_size(compressed_len: usize) -> u64 {
    (compressed_len as u64).saturating_mul(MAX_RATIO).max(RATIO_FREE_BYTES)
}

/// Inflates every gzip member in `bytes`, refusing output past [`limit_for`].
pub fn inflate(bytes: &[u8]) -> Result<Vec<u8>, GzipError> {
    inflate_with_limit(bytes, limit_for(bytes.len()))
}

/// Inflates `bytes`, refusing output past `limit`. The buffer grows by doubling with fallible
/// reservations, so neither the limit nor a failed allocation (the wasm heap is small) can abort the
/// process: both come back as errors.
pub fn inflate_with_limit(bytes: &[u8], limit: u64) -> Result<Vec<u8>, GzipError> {
    let mut reader = flate2::read::MultiGzDecoder::new(bytes);
    let mut out = read_bounded(&mut reader, 0, limit, &mut |_| {}).map_err(|e| e.into_gzip(bytes.len()))?;
    out.shrink_to_fit();
    Ok(out)
}

/// The inflated size a gzip file's trailer states (its last 4 bytes): that of its last member,
/// modulo 4 GiB. A hint to size a buffer, never a bound: a file of several members inflates to more,
/// and a file cut short has no trailer (its last 4 bytes are any compressed bytes).
pub fn trailer_size(last4: [u8; 4]) -> u64 {
    u64::from(u32::from_le_bytes(last4))
}

/// How reading into one bounded buffer failed.
#[derive(Debug)]
pub enum ReadError {
    /// The data goes on past the limit.
    TooLarge {
        limit: u64,
    },
    OutOfMemory {
        filled: u64,
    },
    /// The reader failed after `filled` bytes.
    Io {
        error: std::io::Error,
        filled: u64,
    },
}

impl ReadError {
    /// The error of a gzip stream of `compressed_len` bytes being inflated.
    pub fn into_gzip(self, compressed_len: usize) -> GzipError {
        match self {
            ReadError::TooLarge { limit } => GzipError::TooLarge { limit, compressed_len },
            ReadError::OutOfMemory { filled } => GzipError::OutOfMemory { inflated: filled },
            ReadError::Io { error, filled } if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                GzipError::Truncated { compressed_len, inflated: filled }
            }
            ReadError::Io { error, .. } => GzipError::Corrupt(error.to_string()),
        }
    }
}

/// Most bytes asked of the reader at once: a slice of the file read in the page, or of the output
/// of an inflating stream.
pub const READ_CHUNK_BYTES: usize = 8 << 20;

/// Reads `reader` to its end into one buffer, refusing more than `limit` bytes. The buffer starts
/// with room for `capacity` bytes (size it to what is expected, plus one to see the end without
/// growing) and then doubles, with fallible reservations, so neither the limit nor a failed allocation
/// (the wasm heap is small) can abort the process. `arrived` sees the bytes so far after each read.
pub fn read_bounded(reader: &mut dyn Read, capacity: usize, limit: u64, arrived: &mut dyn FnMut(&[u8])) -> Result<Vec<u8>, ReadError> {
    read_bounded_into(Vec::new(), reader, capacity, limit, arrived)
}

/// [`read_bounded`] into `out`, a buffer kept from an earlier file (its content is discarded): where
/// it already has room for `capacity` bytes none is allocated, so a caller that reads file after file
/// into one buffer holds one file's worth however many it reads. A buffer too small is freed before
/// the new one is allocated (a grown copy would hold both at once).
pub fn read_bounded_into(
    mut out: Vec<u8>,
    reader: &mut dyn Read,
    capacity: usize,
    limit: u64,
    arrived: &mut dyn FnMut(&[u8]),
) -> Result<Vec<u8>, ReadError> {
    // One byte more than the limit, to tell "exactly the limit" from "more".
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    out.clear();
    if out.capacity() < capacity.min(cap) {
        out = Vec::new();
    }
    out.try_reserve_exact(capacity.min(cap)).map_err(|_| ReadError::OutOfMemory { filled: 0 })?;
    let mut filled = 0usize;
    loop {
        if filled == out.len() {
            if out.len() >= cap {
                return Err(ReadError::TooLarge { limit });
            }
            if out.len() == out.capacity() {
                let grow = out.len().max(FIRST_CHUNK_BYTES).min(cap - out.len());
                out.try_reserve_exact(grow).map_err(|_| ReadError::OutOfMemory { filled: filled as u64 })?;
            }
            // Zeroed a chunk at a time, each just before it is written.
            let room = (out.capacity() - out.len()).min(READ_CHUNK_BYTES).min(cap - out.len());
            out.resize(out.len() + room, 0);
        }
        match reader.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                arrived(&out[..filled]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadError::Io { error, filled: filled as u64 }),
        }
    }
    if filled as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    out.truncate(filled);
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
