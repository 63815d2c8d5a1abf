//! The page's entry point: mounts the UI. The engine runs in a web worker from a wasm module of its own
//! (`tidemark-engine`, src/bin/tidemark-engine.rs), so this one links none of the decoders and analyses.

#[cfg(target_arch = "wasm32")]
fn main() {
    tidemark::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("tidemark-web is the page; build it with `trunk build` (see README). The native CLI is `tidemark`.");
    std::process::exit(2);
}
