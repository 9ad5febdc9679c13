//! `ternctl`: steers a running `ternd` over its control socket (see `tern_ctl::cli`).

use std::process::ExitCode;

use clap::Parser;
use tern_ctl::cli::{run, Cli};

fn main() -> ExitCode {
    ExitCode::from(run(Cli::parse()))
}
