//! Decoding a file as it is read, the page's way: the worker reads the file in slices, and each slice
//! goes straight into one buffer sized to the file (the inflated file, for a gzipped one, inflated as
//! a stream), where the XSpace index is built from the bytes as they arrive. No copy of the whole file
//! exists beside that buffer: not the page's, not the compressed one.

use super::xplane::IndexBuilder;
use super::{assemble, check_size, gzip, DecodeError, DecodedFile, Progress};
use std::cell::Cell;
use std::io::{BufReader, Read};

/// A file to be read as a stream: `reader` gives its `size_bytes` bytes in order; `last4` are its last
/// four bytes (a gzip trailer states the inflated size there, read before the file is), when known.
pub struct Source<'a> {
    pub size_bytes: u64,
    pub last4: Option<[u8; 4]>,
    pub reader: &'a mut dyn Read,
}

/// Decodes the file `source` gives, named `name`: the same file [`super::decode`] makes of its whole
/// bytes, except that a gzipped file keeps its inflated bytes only (for a bundle, too).
///
/// A file too large to hold, or a gzipped one whose trailer states a credible inflated size too
/// large to hold ([`gzip::stated_size`]), is refused before it is read. A gzipped file cut short
/// is decoded from what was inflated before the cut, as [`super::decode`] decodes it.
pub fn decode_stream(name: &str, source: Source, progress: Progress) -> Result<DecodedFile, DecodeError> {
    decode_stream_into(name, source, Vec::new(), progress)
}

/// [`decode_stream`] into `buffer`, the bytes of a file no longer needed, reused rather than
/// allocated afresh where it is large enough ([`gzip::read_bounded_into`]).
pub fn decode_stream_into(name: &str, source: Source, buffer: Vec<u8>, progress: Progress) -> Result<DecodedFile, DecodeError> {
    let size_bytes = check_size(source.size_bytes)?;
    let mut head = [0u8; 2];
    let got = read_head(source.reader, &mut head).map_err(|e| unreadable(&e))?;
    let failed = Cell::new(false);
    let mut rest = (&head[..got]).chain(NoteFailure { inner: source.reader, failed: &failed });
    let gzipped = got == 2 && head == gzip::MAGIC;
    let mut index = Some(IndexBuilder::default());
    let mut arrived = |bytes: &[u8]| {
        // An index that fails is dropped: the file may not be an XSpace at all (the format is sniffed
        // from the whole file), and if it is, indexing it whole reports the error.
        if let Some(builder) = &mut index {
            if builder.advance(bytes, &mut |_, _| {}).is_err() {
                index = None;
            }
        }
    };
    let (raw, gzip_cut) = if gzipped {
        let compressed_len = usize::try_from(size_bytes).unwrap_or(usize::MAX);
        let limit = gzip::limit_for(compressed_len);
        // A stated size no real profile of this size reaches is not a trailer (a file cut short) or a
        // bomb's: not trusted, and the stream's bounds stop a bomb. One that is credible, but more
        // than this build holds, is refused now, before the file is read.
        let stated = source.last4.and_then(|last4| gzip::stated_size(compressed_len, last4));
        if let Some(inflated) = stated.filter(|&n| n > limit) {
            return Err(DecodeError::InflatesTooLarge { size_bytes, inflated_bytes: inflated, at_least: false, limit_bytes: limit });
        }
        let capacity = stated.map_or(0, |n| usize::try_from(n).unwrap_or(0).saturating_add(1));
        let mut inflating = flate2::bufread::MultiGzDecoder::new(BufReader::with_capacity(gzip::READ_CHUNK_BYTES, rest));
        match gzip::read_bounded_into(buffer, &mut inflating, capacity, limit, &mut arrived) {
            Ok(raw) => (raw, None),
            // The stream ended before its end marker, and not because the file could not be read:
            // the file was cut short, and what was inflated before the cut is decoded.
            Err(gzip::ReadError::Cut { data, .. }) if !failed.get() => gzip::GzipCut::keep(compressed_len, data),
            Err(e) => {
                return Err(match e {
                    gzip::ReadError::TooLarge { limit } => refusal(size_bytes, limit, true, limit, compressed_len),
                    gzip::ReadError::Io { error } | gzip::ReadError::Cut { error, .. } if failed.get() => unreadable(&error),
                    gzip::ReadError::OutOfMemory { filled } => no_memory(stated.unwrap_or(filled).max(filled)),
                    e => e.into_gzip(compressed_len).into(),
                })
            }
        }
    } else {
        let capacity = usize::try_from(size_bytes).map_err(|_| DecodeError::TooLarge { size_bytes, limit_bytes: usize::MAX as u64 })?;
        let mut limited = (&mut rest).take(size_bytes);
        let raw =
            gzip::read_bounded_into(buffer, &mut limited, capacity.saturating_add(1), size_bytes, &mut arrived).map_err(|e| match e {
                gzip::ReadError::Io { error } | gzip::ReadError::Cut { error, .. } => unreadable(&error),
                // The reader stops at the size, which is the limit: only memory can run out.
                gzip::ReadError::OutOfMemory { .. } | gzip::ReadError::TooLarge { .. } => no_memory(size_bytes),
            })?;
        (raw, None)
    };
    assemble(name, size_bytes, gzipped, raw.into(), None, gzip_cut, |raw| match index {
        Some(builder) => builder.finish(raw, progress),
        None => super::xplane::XSpace::index(raw, progress),
    })
}

/// Reads up to `head.len()` bytes (fewer only at the end of the file); how many were read.
fn read_head(reader: &mut dyn Read, head: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < head.len() {
        match reader.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A reader that notes its own failure, to tell it from the inflater's (which passes it on).
struct NoteFailure<'a, R> {
    inner: R,
    failed: &'a Cell<bool>,
}

impl<R: Read> Read for NoteFailure<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let r = self.inner.read(buf);
        if r.as_ref().is_err_and(|e| e.kind() != std::io::ErrorKind::Interrupted) {
            self.failed.set(true);
        }
        r
    }
}

fn unreadable(e: &std::io::Error) -> DecodeError {
    DecodeError::Unreadable { detail: e.to_string() }
}

/// There was no memory for the file's `size_bytes` (inflated, for a gzipped file).
fn no_memory(size_bytes: u64) -> DecodeError {
    DecodeError::Unreadable {
        detail: format!("there is not enough memory left to hold its {}; {}", super::size(size_bytes), super::open_elsewhere()),
    }
}

/// The refusal of a gzipped file that inflates past `limit`: too large to hold where the limit is the
/// most this build holds, else a likely decompression bomb.
fn refusal(size_bytes: u64, inflated_bytes: u64, at_least: bool, limit: u64, compressed_len: usize) -> DecodeError {
    if limit >= gzip::MAX_OUTPUT_BYTES {
        DecodeError::InflatesTooLarge { size_bytes, inflated_bytes, at_least, limit_bytes: limit }
    } else {
        gzip::GzipError::TooLarge { limit, compressed_len }.into()
    }
}
