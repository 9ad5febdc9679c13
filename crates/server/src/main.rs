//! `ternd`, Tern's authoritative DNS server: parse the command line, set up logging, and
//! run the server with the query handler and the zone reload hook of this build.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use tern_server::cli::{Cli, Plan};
use tern_server::config::{Config, ZoneSource};
use tern_server::lifecycle::{self, RunOptions};
use tern_server::{logging, Refuser, ReloadReport, Result};

fn main() -> ExitCode {
    let plan = match Cli::parse().plan() {
        Ok(plan) => plan,
        Err(e) => return fail(&e),
    };
    let outcome = match plan {
        Plan::CheckConfig(path) => check_config(&path),
        Plan::Run { config, daemon } => run(*config, daemon),
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

/// `--check-config`: parse and validate without starting.
fn check_config(path: &std::path::Path) -> Result<()> {
    let config = Config::from_file(path)?;
    println!("{}: valid ({} zones)", path.display(), config.zones.len());
    Ok(())
}

fn run(config: Config, daemon: bool) -> Result<()> {
    let log = logging::init(&config.log)?;
    // Until the query engine is wired in, every query is answered REFUSED.
    let handler = Arc::new(Refuser);
    lifecycle::run(config, handler, &check_zone_sources, &log, RunOptions { daemon })
}

/// The reload hook of this build: checks that every zone's source can be read. Loading
/// and publishing zones comes with the zone store and query engine.
fn check_zone_sources(config: &Config) -> Result<ReloadReport> {
    let mut report = ReloadReport::default();
    for zone in &config.zones {
        let readable = match &zone.source {
            ZoneSource::File(path) => {
                std::fs::File::open(path).map(drop).map_err(|e| format!("{}: {e}", path.display()))
            }
            ZoneSource::Embedded(_) => Ok(()),
        };
        match readable {
            Ok(()) => {
                tracing::warn!(zone = %zone.name, "zone source readable, but this build has no zone loader: not served");
            }
            Err(why) => {
                report.failed += 1;
                tracing::error!(zone = %zone.name, "zone source unreadable: {why}");
            }
        }
    }
    Ok(report)
}
