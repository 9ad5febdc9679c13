//! What `ternd --version` says, and `ternctl status` shows of the server: the same
//! text as `ternctl --version` (`tern_ctl::VERSION`, found by its build script).

pub use tern_ctl::{BUILD_DATE, VERSION};
