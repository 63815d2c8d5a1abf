//! Keeping freed memory in a native process for the next file, as the page's wasm memory is kept.
//!
//! An analysis allocates a few large buffers (the snapshots, the step grouping's arrays), each of
//! several megabytes. By default glibc serves such a buffer with its own `mmap` and unmaps it when
//! freed, and gives the free top of its heap back to the kernel; the next buffer, or the next file,
//! then starts on fresh pages, each costing a fault on first write (about 3 µs here). On
//! `d1_tf_keras_bfc` that was some 1,700 faults a run, a fifth of the run, in every run after the
//! first. Serving those buffers from the heap and keeping the heap's free memory lets a process that
//! analyses file after file (the benchmarks' repeated runs, a CLI command over several files) reuse
//! pages it has already touched. The browser never returns wasm memory, so this is also how the page
//! behaves. A first run is not faster: its pages are fresh either way.
//!
//! For binaries only (the benchmarks, which analyse a file over and over), at the start of `main`: it
//! sets how the whole process allocates, which is no business of a library call. Not for a process
//! that analyses a file once (the CLI): its peak memory then holds every discarded buffer.

/// Buffers up to this size come from the heap rather than from a mapping of their own: glibc's own
/// upper bound for the setting on 64-bit targets (larger values are refused).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_BYTES: libc::c_int = 32 << 20;

/// Free memory at the top of the heap is given back to the kernel only beyond this.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD_BYTES: libc::c_int = 1 << 30;

/// Tells the C allocator to keep freed memory for reuse (glibc); a no-op elsewhere, and harmless if
/// glibc refuses a setting (it then keeps its default).
pub fn retain_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES);
    }
}
