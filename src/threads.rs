//! The engine's use of a second core: natively, on a machine with two or more, unless the environment
//! variable `TIDEMARK_THREADS` is `1` (to measure the browser's way natively). The browser's worker has
//! one thread (wasm threads need a cross-origin-isolated page, which an offline bundle opened from
//! `file://` cannot be). Work split this way gives the same result either way.

/// Whether a second thread may be used: decided once per process (counting the cores reads the
/// process's CPU quota from files, which is not for every file opened).
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        !cfg!(target_arch = "wasm32") && cores >= 2 && !std::env::var("TIDEMARK_THREADS").is_ok_and(|v| v.trim() == "1")
    })
}

/// Starting and joining a thread costs about 50 µs, what decoding a few hundred kilobytes takes:
/// smaller work stays on one thread.
pub const SPLIT_BYTES: usize = 1 << 20;

/// `(a(), b())`, `a` on a second thread while `b` runs on this one when `split` and a second thread is
/// [`available`]; one after the other otherwise. A panic in `a` is resumed here.
pub fn join<A: Send, B>(split: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if !(split && available()) {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let a = scope.spawn(a);
        let b = b();
        (a.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), b)
    })
}
