//! What XProf adds to a trace before its tools read it (`PreprocessXPlane`), as plain data beside the
//! file rather than a rewritten copy of it: each analysis that needs an addition merges it into its own
//! walk of the events.

pub mod threadpool;
