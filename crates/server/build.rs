//! Build script: the commit and the build date `ternd --version` prints, found by
//! `ternctl`'s build script (crates/ctl/build.rs), so both print the same version text.

#[path = "../ctl/build.rs"]
mod version;

fn main() {
    version::main();
}
