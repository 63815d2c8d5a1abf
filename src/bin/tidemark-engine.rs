//! The engine's web worker entry point (public/worker.js starts it): serves the page's requests with the
//! engine's `Session` (see `tidemark::worker`). Built apart from the page's wasm so that it can be
//! optimised for speed while the page's stays small; it has no UI (built without the `page` feature).

#[cfg(target_arch = "wasm32")]
fn main() {
    tidemark::worker::run();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("tidemark-engine is the page's engine worker; build it with `trunk build` (see README). The native CLI is `tidemark`.");
    std::process::exit(2);
}
