//! Types generated at build time from `proto/*.proto` (see `build.rs`).
#![allow(clippy::all, missing_docs)]

/// XSpace (XProf traces).
pub mod xplane {
    include!(concat!(env!("OUT_DIR"), "/tensorflow.profiler.rs"));
}

/// XLA's HloProto with buffer assignment.
pub mod hlo {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));
}

/// pprof's Profile.
pub mod pprof {
    include!(concat!(env!("OUT_DIR"), "/perftools.profiles.rs"));
}
