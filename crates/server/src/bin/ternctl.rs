//! `ternctl`: steers a running `ternd` over its control socket (see
//! `tern_server::ctl::ternctl`).

use std::process::ExitCode;

use clap::Parser;
use tern_server::ctl::ternctl::{run, Cli};

fn main() -> ExitCode {
    ExitCode::from(run(Cli::parse()))
}
