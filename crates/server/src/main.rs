//! `ternd`, Tern's authoritative DNS server: parse the command line, set up logging, and
//! run the server with the query handler and the zone reload hook of this build.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use tern_server::cli::{Cli, Plan};
use tern_server::config::Config;
use tern_server::lifecycle::{self, RunOptions};
use tern_server::{logging, EngineHandler, Result};
use tern_zone::ZoneDb;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Before the configuration is read and anything else starts: SIGHUP and SIGUSR1 would
    // end a server that has not blocked them yet (their default action).
    if cli.serves() {
        if let Err(e) = tern_server::signals::SignalSet::block() {
            return fail(&e);
        }
    }
    let plan = match cli.plan() {
        Ok(plan) => plan,
        Err(e) => return fail(&e),
    };
    let outcome = match plan {
        Plan::CheckConfig { path, skip_zones } => {
            match tern_server::check_config::check(&path, skip_zones) {
                Ok(checked) => {
                    print!("{}", checked.text);
                    return if checked.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
                }
                Err(e) => Err(e),
            }
        }
        Plan::CheckZone { file, origin } => {
            let checked = tern_server::check_zone::check(&file, origin.as_ref());
            print!("{}", checked.text);
            return if checked.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
        Plan::Keygen { name, algorithm } => {
            tern_server::cli::keygen(&name, algorithm).map(|text| print!("{text}"))
        }
        Plan::Print(text) => {
            print!("{text}");
            Ok(())
        }
        Plan::Run { config, daemon, log } => run(*config, RunOptions { daemon, log }),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("ternd: {e}");
    ExitCode::FAILURE
}

fn run(config: Config, options: RunOptions) -> Result<()> {
    let log = logging::init(&config.log, options.daemon)?;
    let zones = Arc::new(ZoneDb::new());
    let handler = Arc::new(EngineHandler::new(&config, Arc::clone(&zones)));
    lifecycle::run(config, handler, zones, &log, options)
}
