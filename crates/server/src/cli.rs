//! The command line of `ternd`: a configuration file, quick mode (`--listen`/`--zone`),
//! `--check-config`, and the `demo` subcommand, turned into a [`Plan`].

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use tracing::level_filters::LevelFilter;

use crate::config::values::{parse_log_level, parse_zone_name};
use crate::config::{Config, ListenAddr, LogFormat, Overrides, ZoneConfig, ZoneSource};
use crate::demo;
use crate::error::{Error, Result};
use crate::manpage;

/// Tern's authoritative DNS server.
#[derive(Debug, Parser)]
#[command(name = "ternd", version = crate::version::VERSION, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Run with this configuration file.
    #[arg(short, long, value_name = "FILE", conflicts_with_all = ["listen", "zone", "check_config"])]
    config: Option<PathBuf>,
    /// Check a configuration file and every zone it names, and exit (0: all usable).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["listen", "zone"])]
    check_config: Option<PathBuf>,
    /// With --check-config: check the configuration only, not the zone files.
    #[arg(long, requires = "check_config")]
    skip_zones: bool,
    /// Quick mode: listen on this address (repeatable; IP:PORT, [IPv6]:PORT or IP).
    #[arg(long, value_name = "ADDR", value_parser = ListenAddr::parse)]
    listen: Vec<ListenAddr>,
    /// Quick mode: serve a zone from a file (repeatable).
    #[arg(long, value_name = "NAME=FILE", value_parser = parse_zone_arg, requires = "listen")]
    zone: Vec<ZoneConfig>,
    /// UDP and TCP worker threads (default: one per CPU).
    #[arg(long, value_name = "N")]
    workers: Option<NonZeroUsize>,
    /// Detach from the terminal after starting.
    #[arg(long)]
    daemon: bool,
    /// Log level: error, warn, info, debug or trace.
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level)]
    log_level: Option<LevelFilter>,
    /// Log format: human, json or journal (human on systemd's journal is journal).
    #[arg(long, value_name = "FORMAT", value_parser = parse_log_format)]
    log_format: Option<LogFormat>,
    /// Log to this file (instead of `[log] file`; reopened on SIGUSR1).
    #[arg(long, value_name = "FILE")]
    log_file: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a built-in example zone (example.com.) on 127.0.0.1:8053.
    Demo {
        /// Listen here instead.
        #[arg(long, value_name = "ADDR", value_parser = ListenAddr::parse)]
        listen: Option<ListenAddr>,
    },
    /// Print a new TSIG key (random secret) and the configuration that declares it, for
    /// ternd and for BIND, Knot DNS and NSD on the other side.
    Keygen {
        /// The key's name (both sides must use the same).
        #[arg(value_parser = parse_zone_name)]
        name: tern_wire::Name,
        /// hmac-sha256 (default), hmac-sha224, hmac-sha384, hmac-sha512, hmac-sha1 or
        /// hmac-md5.
        #[arg(default_value = "hmac-sha256", value_parser = parse_algorithm)]
        algorithm: tern_wire::tsig::Algorithm,
    },
    /// Check a zone file: every error and warning, then a summary (exit 1 if unusable).
    CheckZone {
        /// The zone file.
        file: PathBuf,
        /// The zone's name (its origin). Default: the owner of the file's SOA when the
        /// SOA is its first record, else its first $ORIGIN.
        #[arg(value_parser = parse_zone_name)]
        origin: Option<tern_wire::Name>,
    },
    /// Print a manual page in roff: ternd(8), or ternd.toml(5) for the configuration
    /// file (`ternd man ternd.toml | man -l -`).
    Man {
        /// The page.
        #[arg(default_value = "ternd")]
        page: Page,
    },
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// The manual pages `ternd man` prints.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Page {
    /// ternd(8), the command line.
    #[value(name = "ternd")]
    Ternd,
    /// ternd.toml(5), the configuration file.
    #[value(name = "ternd.toml")]
    Config,
}

const EXAMPLES: &str = "Examples:
  ternd --config /etc/tern/ternd.toml
  ternd --check-config /etc/tern/ternd.toml
  ternd --listen 127.0.0.1:8053 --zone example.com=example.com.zone --workers 2
  ternd check-zone example.com.zone example.com
  ternd check-zone example.com.zone              # the origin from its SOA or $ORIGIN
  ternd keygen transfer.example.com hmac-sha256
  ternd completions bash > /usr/share/bash-completion/completions/ternd
  ternd man | man -l -
  ternd man ternd.toml | man -l -
  ternd demo";

/// What the command line asks for.
#[derive(Debug)]
pub enum Plan {
    /// Validate a configuration file (and its zones unless `skip_zones`).
    CheckConfig {
        /// The file.
        path: PathBuf,
        /// `--skip-zones`.
        skip_zones: bool,
    },
    /// Check a zone file.
    CheckZone {
        /// The zone file.
        file: PathBuf,
        /// Its origin, if given (else the file says it).
        origin: Option<tern_wire::Name>,
    },
    /// Print a new TSIG key.
    Keygen {
        /// Its name.
        name: tern_wire::Name,
        /// Its algorithm.
        algorithm: tern_wire::tsig::Algorithm,
    },
    /// Print a text about `ternd` itself: the manual page or a completion script.
    Print(String),
    /// Run the server.
    Run {
        /// The configuration, command-line overrides applied.
        config: Box<Config>,
        /// `--daemon`.
        daemon: bool,
        /// `--log-level`, `--log-format`, `--log-file`: applied again at each reload.
        log: Overrides,
    },
}

impl Cli {
    /// Whether this command line serves (a configuration, quick mode, the demo) rather
    /// than printing or checking something and exiting.
    pub fn serves(&self) -> bool {
        self.check_config.is_none() && matches!(self.command, None | Some(Command::Demo { .. }))
    }

    /// Turns the arguments into a plan; reads the configuration file if one is given.
    pub fn plan(self) -> Result<Plan> {
        if let Some(path) = self.check_config {
            return Ok(Plan::CheckConfig { path, skip_zones: self.skip_zones });
        }
        let mut config = match (self.command, self.config) {
            (Some(Command::CheckZone { file, origin }), _) => {
                return Ok(Plan::CheckZone { file, origin });
            }
            (Some(Command::Keygen { name, algorithm }), _) => {
                return Ok(Plan::Keygen { name, algorithm });
            }
            (Some(Command::Man { page: Page::Ternd }), _) => return Ok(Plan::Print(manual()?)),
            (Some(Command::Man { page: Page::Config }), _) => {
                let page = manpage::config_page(env!("CARGO_PKG_VERSION"), crate::version::BUILD_DATE);
                return Ok(Plan::Print(page));
            }
            (Some(Command::Completions { shell }), _) => {
                return Ok(Plan::Print(completions(shell)));
            }
            (Some(Command::Demo { listen }), _) => demo::config(listen)?,
            (None, Some(path)) => Config::from_file(&path)?,
            (None, None) if !self.listen.is_empty() => Config::built_in(self.listen, self.zone)?,
            (None, None) => {
                return Err(Error::Config(
                    "nothing to serve: give --config FILE, or --listen ADDR --zone NAME=FILE, or run `ternd demo` (see --help)".into(),
                ))
            }
        };
        // Absolute: a daemon reopens it after leaving this directory.
        let file = self
            .log_file
            .map(|file| {
                std::path::absolute(&file).map_err(|source| Error::File { path: file, source })
            })
            .transpose()?;
        let (level, format, workers) = (self.log_level, self.log_format, self.workers);
        let log = Overrides { workers, level, format, file };
        log.apply(&mut config);
        Ok(Plan::Run { config: Box::new(config), daemon: self.daemon, log })
    }
}

/// ternd(8) in roff, from the command line's own descriptions.
/// `ternd(8)`: the command line, then its signals, files and exit status.
fn manual() -> Result<String> {
    tern_ctl::manual::page(Cli::command(), MANUAL_SECTIONS)
        .map_err(|source| Error::Os { doing: "writing the manual page", source })
}

/// What `ternd(8)` says beyond the command line, in roff.
const MANUAL_SECTIONS: &str = r#".SH SIGNALS
.TP
\fBSIGHUP\fR
Re\-read the configuration and the zone files that changed (as \fBternctl reload\fR),
and apply \fB[log]\fR and \fB[http]\fR (but its \fBlisten\fR address); a
configuration with errors is not applied and the server serves on as it was.
.TP
\fBSIGUSR1\fR
Reopen the log file at its path (as \fBternctl log\-reopen\fR), after logrotate has
moved it away.
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Stop: no new connections, answer what has arrived, exit 0.
.SH FILES
.TP
\fI/etc/tern/ternd.toml\fR
The configuration (the package's; any file given to \fB\-\-config\fR), described in
\fBternd.toml\fR(5).
.TP
\fI/var/lib/tern\fR
\fB[server] storage\fR: journals, secondary zones' kept copies and timers, zones added at
run time (\fIzones\-added.toml\fR) and the lock (\fIternd.lock\fR) that keeps a second
server off the same directory.
.TP
\fI/run/tern/ternd.sock\fR
The control socket (\fB[control] socket\fR) that \fBternctl\fR(8) uses.
.TP
\fI/usr/share/doc/tern\fR
The configuration reference (\fIconfiguration.md\fR), the HTTP API (\fIapi.yaml\fR) and
a complete example configuration.
.SH "EXIT STATUS"
.TP
0
Stopped by a signal or \fBternctl stop\fR; \fB\-\-check\-config\fR and \fBcheck\-zone\fR
found nothing to refuse; with \fB\-\-daemon\fR, the daemon serves (zones that failed to
load while others serve are printed as warnings).
.TP
1
The server could not start (the reason is printed: configuration, sockets, storage,
privileges, every zone failed or, with \fBstrict\-start\fR, one), or a check refused
something.
.TP
2
The command line is wrong.
.SH "SEE ALSO"
\fBternd.toml\fR(5), \fBternctl\fR(8)
"#;

/// The completion script for `shell`.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ternd", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_algorithm(text: &str) -> Result<tern_wire::tsig::Algorithm, String> {
    tern_wire::tsig::Algorithm::from_text(text).ok_or_else(|| {
        format!("unknown TSIG algorithm `{text}` (hmac-sha256, hmac-sha224, hmac-sha384, hmac-sha512, hmac-sha1, hmac-md5)")
    })
}

/// A new key: a random secret as long as the algorithm's MAC (RFC 8945 §6), and the
/// configuration that declares it for ternd and for the peers on the other side.
pub fn keygen(name: &tern_wire::Name, algorithm: tern_wire::tsig::Algorithm) -> Result<String> {
    let mut secret = vec![0u8; algorithm.mac_len()];
    crate::random::fill(&mut secret)
        .map_err(|_| Error::Config("the system's random number generator failed".into()))?;
    let secret = tern_wire::tsig::secret_to_base64(&secret);
    let alg = algorithm.config_name();
    Ok(format!(
        "# TSIG key {name} ({alg}). Keep the secret as secret as a password.\n\
         # ternd (ternd.toml):\n\
         [[key]]\nname = \"{name}\"\nalgorithm = \"{alg}\"\nsecret = \"{secret}\"\n\n\
         # BIND (named.conf):\n\
         # key \"{name}\" {{ algorithm {alg}; secret \"{secret}\"; }};\n\
         # Knot DNS (knot.conf):\n\
         # key:\n#   - id: {name}\n#     algorithm: {alg}\n#     secret: {secret}\n\
         # NSD (nsd.conf):\n\
         # key:\n#   name: \"{name}\"\n#   algorithm: {alg}\n#   secret: \"{secret}\"\n"
    ))
}

/// Parses `NAME=FILE`; a relative FILE is made absolute against the current directory.
fn parse_zone_arg(text: &str) -> Result<ZoneConfig, String> {
    let (name, file) = text.split_once('=').ok_or_else(|| format!("`{text}` is not NAME=FILE"))?;
    if file.is_empty() {
        return Err(format!("`{text}` names no file"));
    }
    let name = parse_zone_name(name)?;
    let file = std::path::absolute(file).map_err(|e| format!("{file}: {e}"))?;
    Ok(ZoneConfig::primary(name, ZoneSource::File(file)))
}

fn parse_log_format(text: &str) -> Result<LogFormat, String> {
    match text {
        "human" => Ok(LogFormat::Human),
        "json" => Ok(LogFormat::Json),
        "journal" => Ok(LogFormat::Journal),
        _ => Err(format!("`{text}` is not a log format (expected human, json or journal)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Plan> {
        let mut argv = vec!["ternd"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).map_err(|e| Error::Config(e.to_string()))?.plan()
    }

    #[test]
    fn keygen_prints_a_key_the_configuration_takes() {
        let Plan::Keygen { name, algorithm } =
            plan(&["keygen", "xfr.example", "hmac-md5"]).unwrap()
        else {
            panic!("not keygen")
        };
        let text = keygen(&name, algorithm).unwrap();
        let config = Config::from_text(&text, std::path::Path::new("k.toml")).unwrap();
        assert_eq!(config.resolved.keys.len(), 1);
        assert_eq!(config.resolved.keys[0].algorithm(), algorithm);
        assert_ne!(text, keygen(&name, algorithm).unwrap(), "a new secret each time");
        assert!(plan(&["keygen", "x", "hmac-nope"]).is_err());
    }

    fn run_config(args: &[&str]) -> Config {
        match plan(args).unwrap() {
            Plan::Run { config, .. } => *config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn quick_mode() {
        let config = run_config(&[
            "--listen",
            "127.0.0.1:5300",
            "--zone",
            "example.com=ex.zone",
            "--zone",
            "example.net.=/z/net",
            "--workers",
            "1",
        ]);
        assert_eq!(config.server.listen[0].0.to_string(), "127.0.0.1:5300");
        assert_eq!(config.resolved.zones.len(), 2);
        assert_eq!(config.resolved.zones[0].name.to_string(), "example.com.");
        let ZoneSource::File(file) = &config.resolved.zones[0].source else { panic!() };
        assert!(file.is_absolute() && file.ends_with("ex.zone"));
        assert_eq!((config.udp_workers(), config.tcp_workers()), (1, 1));
        assert!(config.path.is_none());
    }

    #[test]
    fn demo_and_overrides() {
        let config = run_config(&[
            "--log-level",
            "debug",
            "--log-format",
            "json",
            "--log-file",
            "/var/log/tern.log",
            "demo",
        ]);
        assert_eq!(config.log.file.as_deref(), Some(std::path::Path::new("/var/log/tern.log")));
        assert_eq!(config.resolved.zones[0].name.to_string(), "example.com.");
        assert_eq!(config.log.level, LevelFilter::DEBUG);
        assert_eq!(config.log.format, LogFormat::Json);
        let config = run_config(&["demo", "--listen", "127.0.0.1:5399"]);
        assert_eq!(config.server.listen[0].0.port(), 5399);
    }

    #[test]
    fn refusals() {
        assert!(plan(&[]).unwrap_err().to_string().contains("nothing to serve"));
        assert!(plan(&["--zone", "a=b"]).is_err(), "--zone needs --listen");
        assert!(plan(&["--listen", "127.0.0.1", "--zone", "a"]).is_err());
        assert!(plan(&["--listen", "127.0.0.1", "--zone", "a..b=f"]).is_err());
        assert!(plan(&["--config", "x", "--listen", "127.0.0.1"]).is_err());
        assert!(plan(&["--workers", "0", "demo"]).is_err());
        assert!(plan(&["--listen", "127.0.0.1", "--zone", "a=f", "--zone", "A.=g"]).is_err());
        assert!(matches!(
            plan(&["--check-config", "f"]),
            Ok(Plan::CheckConfig { skip_zones: false, .. })
        ));
        assert!(matches!(plan(&["check-zone", "f", "example.com"]), Ok(Plan::CheckZone { .. })));
        let Ok(Plan::CheckZone { origin, .. }) = plan(&["check-zone", "f"]) else {
            panic!("the origin is optional")
        };
        assert_eq!(origin, None, "taken from the file");
        assert!(plan(&["check-zone", "f", "a..b"]).is_err());
    }
}
