//! XProf's Trace Viewer: every event of a trace, by process (plane) and thread (line), as XProf lays
//! them out ([`layout`]) and names them ([`event_text`]); a columnar store of them built once per file
//! ([`store`]); the level-of-detail query the page draws from ([`lod`]); an event's details read from
//! the file when asked ([`details`]); search and range summaries ([`summary`]); and XProf's trace_viewer
//! JSON ([`export`]); the links drawn as arrows ([`flows`]) and the allocators' memory counter tracks
//! ([`counters`]); the large replies packed as columns for the page ([`packed`]). A PyTorch profiler
//! (Kineto) trace is shown through the same store, laid out as chrome://tracing lays it out ([`kineto`]).

pub mod counters;
pub mod derived;
pub mod details;
pub mod event_text;
pub mod export;
pub mod flows;
pub mod kineto;
pub mod layout;
pub mod lod;
pub mod op_args;
pub mod packed;
pub mod store;
pub mod summary;

pub use store::TraceStore;
