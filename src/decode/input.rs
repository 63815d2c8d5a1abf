//! The bytes of an input file: owned (the page's, an inflated gzip, a test's) or, natively on Linux,
//! the file mapped into memory read-only. A mapped trace is read where the kernel already holds it:
//! copying a file into the heap first cost more than indexing it (3.5 GB/s on the benchmark machine,
//! 0.7 ms for a 3 MB trace, all before any work can start). A mapped file is shared ([`Input::shared`]):
//! what is decoded from it through prost (a plane's metadata, whose byte stats hold the HLO protos a
//! trace embeds, tens of MB on a GPU trace) slices the mapping instead of copying it.

#[cfg(target_os = "linux")]
use prost::bytes::Bytes;
use std::ops::Deref;

pub struct Input(Repr);

enum Repr {
    Owned(Vec<u8>),
    /// A [`mapping::Mapping`], owned by the shared bytes.
    #[cfg(target_os = "linux")]
    Mapped(Bytes),
}

impl Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(v) => v,
            #[cfg(target_os = "linux")]
            Repr::Mapped(m) => m,
        }
    }
}

impl From<Vec<u8>> for Input {
    fn from(bytes: Vec<u8>) -> Self {
        Input(Repr::Owned(bytes))
    }
}

impl Input {
    /// The bytes' buffer, where they are owned (a mapped file has none to give).
    pub fn into_vec(self) -> Option<Vec<u8>> {
        match self.0 {
            Repr::Owned(v) => Some(v),
            #[cfg(target_os = "linux")]
            Repr::Mapped(_) => None,
        }
    }

    /// The first `len` bytes of `file` (its size, checked by the caller), mapped read-only; a page is
    /// mapped when first read. `None` where the file cannot be mapped (a pipe, an empty file): read it then.
    #[cfg(target_os = "linux")]
    pub fn map(file: &std::fs::File, len: usize) -> Option<Input> {
        mapping::Mapping::new(file, len).map(|m| Input(Repr::Mapped(Bytes::from_owner(m))))
    }

    /// The bytes as shared [`Bytes`], where they are (a mapped file): a slice of them copies nothing.
    #[cfg(target_os = "linux")]
    pub fn shared(&self) -> Option<&Bytes> {
        match &self.0 {
            Repr::Owned(_) => None,
            Repr::Mapped(m) => Some(m),
        }
    }
}

#[cfg(target_os = "linux")]
mod mapping {
    use std::os::fd::AsRawFd;

    /// A read-only, private mapping of a whole file, unmapped on drop.
    pub struct Mapping {
        ptr: *const u8,
        len: usize,
    }

    // SAFETY: the mapping is read-only and owned by this value alone: sharing or sending it shares or
    // sends an immutable byte slice.
    unsafe impl Send for Mapping {}
    // SAFETY: as for `Send`: through a shared reference it only ever gives out `&[u8]`.
    unsafe impl Sync for Mapping {}

    impl Mapping {
        pub fn new(file: &std::fs::File, len: usize) -> Option<Self> {
            if len == 0 {
                return None;
            }
            // SAFETY: a fresh mapping of `len` bytes of an open file, read-only and private, at an
            // address the kernel picks; on failure nothing is mapped. Not populated up front
            // (MAP_POPULATE): pages are mapped as they are first read (the kernel maps a run around
            // each fault), so what no tool reads is never mapped: a GPU trace's embedded constants
            // (69 of n4_decode's 71 MB, sliced, never read) took a tenth to a fifth of an op tool's
            // CPU time to populate.
            let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0) };
            (ptr != libc::MAP_FAILED).then_some(Mapping { ptr: ptr as *const u8, len })
        }
    }

    impl AsRef<[u8]> for Mapping {
        fn as_ref(&self) -> &[u8] {
            // SAFETY: `ptr..ptr + len` is mapped readable for as long as `self` lives. A file cut
            // short by another program while mapped would fault on the lost pages: files are
            // profiles a user opened, read once and at once, as other tools that map their inputs do.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly the region `new` mapped, which no slice outlives (they borrow self,
            // or the `Bytes` that owns it and drops it last).
            unsafe {
                libc::munmap(self.ptr as *mut libc::c_void, self.len);
            }
        }
    }
}
