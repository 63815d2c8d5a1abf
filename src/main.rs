//! The page's entry point. The same wasm module runs in the page (mounts the UI) and in the engine's
//! web worker (serves engine requests); `tidemark::ui::start` tells which.

#[cfg(target_arch = "wasm32")]
fn main() {
    tidemark::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("tidemark-web is the page; build it with `trunk build` (see README). The native CLI is `tidemark`.");
    std::process::exit(2);
}
