//! Bounded gzip inflation: profiles arrive gzipped (`*.prof`, `*.xplane.pb.gz`, compressed stats), and a
//! hostile file must not be able to expand into all of memory.

use super::size;
use serde::{Deserialize, Serialize};
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
    #[error("the gzip stream is truncated: the file ends at byte {compressed_len}, before the stream's end marker, after {inflated} inflated bytes")]
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

/// Inflates `bytes`, refusing output past `limit`, and a stream cut short. The buffer grows by
/// doubling with fallible reservations, so neither the limit nor a failed allocation (the wasm heap is
/// small) can abort the process: both come back as errors.
pub fn inflate_with_limit(bytes: &[u8], limit: u64) -> Result<Vec<u8>, GzipError> {
    let mut out = inflate_bounded(bytes, limit).map_err(|e| e.into_gzip(bytes.len()))?;
    out.shrink_to_fit();
    Ok(out)
}

/// Inflates `bytes` as [`inflate`] does, except that a stream cut short (the file ends before the
/// stream's end marker) is not an error: it gives every byte inflated before the cut, and the cut.
/// Deflate decodes as it reads, so only the bytes of the symbol the cut splits are lost. A stream
/// so cut has no trailer: its CRC and size cannot be checked (the caller says so).
pub fn inflate_to_cut(bytes: &[u8]) -> Result<(Vec<u8>, Option<GzipCut>), GzipError> {
    match inflate_bounded(bytes, limit_for(bytes.len())) {
        Ok(mut out) => {
            out.shrink_to_fit();
            Ok((out, None))
        }
        Err(ReadError::Cut { data, .. }) => Ok(GzipCut::keep(bytes.len(), data)),
        Err(e) => Err(e.into_gzip(bytes.len())),
    }
}

fn inflate_bounded(bytes: &[u8], limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut reader = flate2::read::MultiGzDecoder::new(bytes);
    read_bounded(&mut reader, 0, limit, &mut |_| {})
}

/// Where a gzip stream cut short (its file ends before the stream's end marker) was cut, and what it
/// inflated to before the cut. The stream's trailer is lost with the cut: what was inflated could not
/// be checked against its CRC and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GzipCut {
    /// The compressed file's length: the cut.
    pub compressed_len: u64,
    /// How many bytes were inflated before the cut.
    pub inflated_bytes: u64,
}

impl GzipCut {
    /// The bytes `data` inflated from a stream of `compressed_len` bytes cut short, and the cut. The
    /// buffer is shrunk to them where it was sized for far more (a cut file's last four bytes are
    /// no size, however credible they look).
    pub fn keep(compressed_len: usize, mut data: Vec<u8>) -> (Vec<u8>, Option<GzipCut>) {
        if data.capacity() / 2 > data.len() {
            data.shrink_to_fit();
        }
        let cut = GzipCut { compressed_len: compressed_len as u64, inflated_bytes: data.len() as u64 };
        (data, Some(cut))
    }
}

/// Real profiles compress 3–30×: a trailer stating more than this many times the file's size is not
/// taken as its inflated size.
const CREDIBLE_RATIO: u64 = 32;

/// The inflated size that a gzip file of `compressed_len` bytes states in its trailer (`last4`, its
/// last 4 bytes: that of its last member, modulo 4 GiB), where it is credible. A hint to size a
/// buffer, never a bound: a file of several members inflates to more, and a file cut short has no
/// trailer (its last 4 bytes are any compressed bytes, so any value up to 4 GiB). Only a size at most
/// [`CREDIBLE_RATIO`] times the file is taken: the most a buffer sized by a cut file's last bytes
/// overshoots what it inflates to, and a bomb's claim is never taken (the stream's bounds stop it).
pub fn stated_size(compressed_len: usize, last4: [u8; 4]) -> Option<u64> {
    let stated = u64::from(u32::from_le_bytes(last4));
    (stated <= (compressed_len as u64).saturating_mul(CREDIBLE_RATIO)).then_some(stated)
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
    /// The reader failed.
    Io {
        error: std::io::Error,
    },
    /// The reader ended before its data did (`error`, of kind `UnexpectedEof`: a gzip stream cut
    /// short): `data` are the bytes read before the end.
    Cut {
        data: Vec<u8>,
        error: std::io::Error,
    },
}

impl ReadError {
    /// The error of a gzip stream of `compressed_len` bytes being inflated.
    pub fn into_gzip(self, compressed_len: usize) -> GzipError {
        match self {
            ReadError::TooLarge { limit } => GzipError::TooLarge { limit, compressed_len },
            ReadError::OutOfMemory { filled } => GzipError::OutOfMemory { inflated: filled },
            ReadError::Cut { data, .. } => GzipError::Truncated { compressed_len, inflated: data.len() as u64 },
            ReadError::Io { error } => GzipError::Corrupt(error.to_string()),
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
/// A reader that ends early (`UnexpectedEof`: a gzip stream cut short) gives back what it read
/// ([`ReadError::Cut`]).
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
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                out.truncate(filled);
                return Err(ReadError::Cut { data: out, error });
            }
            Err(error) => return Err(ReadError::Io { error }),
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
    fn a_cut_stream_gives_every_byte_inflated_before_the_cut() {
        // Compressible but not trivially: several deflate blocks of literals and matches.
        let data: Vec<u8> = (0..300_000u32).map(|i| ((i % 251) ^ (i / 1000) ^ (i.wrapping_mul(2_654_435_761) >> 29)) as u8).collect();
        let z = gz(&data);
        let n = z.len();
        let mut cuts: Vec<usize> = (0..64).chain((64..n).step_by(89)).chain(n - 16..n).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut before = 0;
        for cut in cuts {
            let (out, c) = inflate_to_cut(&z[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            assert_eq!(c, Some(GzipCut { compressed_len: cut as u64, inflated_bytes: out.len() as u64 }), "cut at {cut}");
            assert!(data.starts_with(&out), "cut at {cut}: not what the stream holds");
            assert!(out.len() >= before, "cut at {cut}: less than a shorter cut gave");
            before = out.len();
            if cut >= n - 8 {
                // Cut in the trailer: every byte inflated, none checked.
                assert_eq!(out.len(), data.len(), "cut at {cut}");
            }
            // The strict inflaters refuse it.
            assert!(matches!(inflate(&z[..cut]), Err(GzipError::Truncated { .. })), "cut at {cut}");
        }
        // A stream whole, or cut between members, has no cut.
        assert_eq!(inflate_to_cut(&z).unwrap(), (data.clone(), None));
        assert_eq!(inflate_to_cut(&[z.clone(), z.clone()].concat()).unwrap().1, None);
        // Corruption (a flipped bit in the deflate data, a wrong CRC) is still an error.
        let mut bad = z.clone();
        bad[n - 8] ^= 1;
        assert!(matches!(inflate_to_cut(&bad), Err(GzipError::Corrupt(_))));
    }

    #[test]
    fn a_trailer_is_taken_as_a_size_only_where_credible() {
        assert_eq!(stated_size(1000, 5000u32.to_le_bytes()), Some(5000));
        assert_eq!(stated_size(1000, 32_000u32.to_le_bytes()), Some(32_000));
        assert_eq!(stated_size(1000, 32_001u32.to_le_bytes()), None);
        assert_eq!(stated_size(1000, u32::MAX.to_le_bytes()), None);
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
