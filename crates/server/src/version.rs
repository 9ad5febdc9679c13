//! What `ternd --version` says, and `ternctl status` shows of the server.

/// `ternd --version`: the crate's version, the commit and the day it was built from
/// (see `build.rs`, which reads them from git and the clock).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TERN_COMMIT"),
    ", built ",
    env!("TERN_BUILD_DATE"),
    ")"
);
