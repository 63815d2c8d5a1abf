pub use tidemark::units::*;
