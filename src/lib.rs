//! Tidemark: what is using accelerator memory, when, and why — XProf's memory tools without a server.
//!
//! Layers, in data-flow order (each only uses the ones before it):
//!
//! | layer | role |
//! |---|---|
//! | [`proto`] | prost types generated from our own `proto/*.proto` (only the fields we read) |
//! | `fast_hash` | the keyed Fx hasher of the hot maps, shared by decode and analysis |
//! | `threads` | when and how decode and analysis split work over a second core |
//! | [`decode`] | format sniffing by content, bounded gzip, lazy XSpace index, HloProto, pprof |
//! | [`analysis`] | one module per tool; plain data out, no I/O |
//! | [`engine`] | a session owning decoded files; the one API both front doors call (CLI, web worker) |
//! | `worker` (wasm only) | the engine's web worker: the entry of the engine's wasm (`tidemark-engine`) |
//! | `ui` (wasm, feature `page`) | Leptos components that only draw what the engine answered: the page's wasm (`tidemark-web`) |
//!
//! Everything above `worker` is plain Rust with no web dependency: it is tested and benchmarked natively
//! and compiled unchanged into the web worker.

pub mod analysis;
pub mod decode;
pub mod engine;
pub(crate) mod fast_hash;
pub mod proto;
pub(crate) mod threads;
pub mod units;

#[cfg(all(target_arch = "wasm32", feature = "page"))]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod worker;
