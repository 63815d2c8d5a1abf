//! Reading an input file whole, natively (the CLI and the benchmarks; the page gets its bytes from the
//! browser).

use crate::decode::{DecodeError, Input, MAX_INPUT_BYTES};
use std::io::Read;
use std::path::Path;

/// The file at `path` whole, refusing one over [`MAX_INPUT_BYTES`] before reading it (rather than
/// running out of memory halfway). On Linux a regular file is mapped ([`Input::map`]), not copied.
pub fn read_input(path: &Path) -> std::io::Result<Input> {
    let file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    let size_bytes = metadata.len();
    if size_bytes > MAX_INPUT_BYTES {
        return Err(std::io::Error::other(DecodeError::TooLarge { size_bytes, limit_bytes: MAX_INPUT_BYTES }));
    }
    let size = usize::try_from(size_bytes).map_err(std::io::Error::other)?;
    #[cfg(target_os = "linux")]
    if metadata.is_file() {
        if let Some(mapped) = Input::map(&file, size) {
            return Ok(mapped);
        }
    }
    read_whole(file, size).map(Input::from)
}

/// Reads `file` (of about `size` bytes) to its end.
///
/// A large file goes into memory the kernel is asked to back with huge pages (Linux): the buffer is
/// written once, front to back, and with ordinary 4 KiB pages each one costs a fault on first write;
/// for a 90 MB trace those 22,000 faults took as long as all of decoding it. The advice changes how
/// the memory is backed, never what it holds, and is silently ignored where huge pages are off.
fn read_whole(mut file: std::fs::File, size: usize) -> std::io::Result<Vec<u8>> {
    // One byte more than the size, so that reading to the end needs no second allocation.
    let mut bytes = Vec::with_capacity(size.saturating_add(1));
    advise_huge_pages(&mut bytes);
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &mut Vec<u8>) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let (first, last) = (start.next_multiple_of(HUGE_PAGE), (start + buf.capacity()) / HUGE_PAGE * HUGE_PAGE);
    if last > first {
        // SAFETY: `first..last` lies within the allocation `buf` owns and nothing else refers to it;
        // madvise(MADV_HUGEPAGE) only changes how the kernel backs that memory, never its contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &mut Vec<u8>) {}
