//! `ternctl`: the command line that steers a running `ternd` over its control socket
//! ([`crate::proto`]). Parsing turns the command line into a [`Request`]; the reply is
//! printed as readable text, or as the server's JSON with `--json`.
//!
//! Exit status: 0 when everything asked succeeded, 1 when the server refused or some
//! zone failed, 2 for a bad command line, 3 when the server cannot be reached.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{CommandFactory, Parser, Subcommand};

use crate::client::{self, ClientError};
use crate::proto::{Reply, Request, TxnStep, ZoneOp, DEFAULT_SOCKET};
use crate::render;

/// Steers a running ternd over its control socket.
#[derive(Debug, Parser)]
#[command(name = "ternctl", version = crate::VERSION, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The control socket (default: from --config, else /run/tern/ternd.sock).
    #[arg(short, long, value_name = "PATH", global = true)]
    socket: Option<PathBuf>,
    /// Take the socket from ternd's configuration file (`[control] socket`).
    #[arg(short, long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Print the server's reply as JSON.
    #[arg(short, long, global = true)]
    json: bool,
    /// Seconds to wait for the reply (a reload or a transfer may take a while).
    #[arg(short, long, value_name = "SECONDS", default_value_t = 60, global = true)]
    timeout: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The server's version, uptime and counters.
    Status,
    /// Stop the server.
    Stop,
    /// Re-read the configuration and apply it; returns once the zones are loaded.
    Reload,
    /// Reopen the log file (as SIGUSR1), after logrotate has moved it away.
    LogReopen,
    /// The served zones, one line each.
    ZoneList,
    /// Each zone's state in detail (all zones when none is named).
    ZoneStatus { zones: Vec<String> },
    /// A primary re-reads its zone file; a secondary refreshes (all zones when none is named).
    ZoneReload { zones: Vec<String> },
    /// A secondary checks its primaries for a newer serial now.
    ZoneRefresh { zones: Vec<String> },
    /// A secondary transfers the whole zone now (AXFR), whatever the serials.
    ZoneRetransfer { zones: Vec<String> },
    /// Send NOTIFY to the zone's secondaries now.
    ZoneNotify { zones: Vec<String> },
    /// Write the zone file now (after updates or transfers).
    ZoneFlush { zones: Vec<String> },
    /// Write the zone file, then hold updates (refused), refreshes and reloads.
    ZoneFreeze { zones: Vec<String> },
    /// End a freeze: a primary re-reads its zone file.
    ZoneThaw { zones: Vec<String> },
    /// A zone signed here: its DNSSEC keys, their state and timings (as `keymgr list`).
    ZoneKeys { zones: Vec<String> },
    /// A zone signed here: take the key policy's steps due and make every signature again.
    ZoneSign { zones: Vec<String> },
    /// A zone signed here: the DS the key policy waits for is at (or gone from) the parent.
    ZoneKskSubmitted { zones: Vec<String> },
    /// A zone signed here: import a key made by BIND (dnssec-keygen), its .key beside the
    /// .private. BIND's Publish/Activate times in the past are kept (an active KSK keeps
    /// signing: the parent's DS that points at it stays valid); a key without them is
    /// taken in by the key policy's normal steps, as a rollover to it.
    ZoneKeyImport {
        /// The zone.
        zone: String,
        /// BIND's K<zone>+<alg>+<tag>.private file.
        file: PathBuf,
        /// Import a KSK (flags 257) as a CSK, signing the whole zone.
        #[arg(long)]
        csk: bool,
    },
    /// A zone signed here: print the DNSKEY and DS (SHA-256) records for the parent, of
    /// one key (its id in zone-keys) or of every published KSK and CSK.
    ZoneKeyExport {
        /// The zone.
        zone: String,
        /// The key's id, as zone-keys lists it.
        key: Option<u32>,
    },
    /// Print the zone's records (optionally of one owner, and one type).
    ZoneRead { zone: String, owner: Option<String>, rtype: Option<String> },
    /// Open a transaction on the zone.
    ZoneBegin { zone: String },
    /// Stage a record to add: ZONE OWNER [TTL] TYPE RDATA...
    ZoneSet {
        zone: String,
        owner: String,
        #[arg(num_args = 2.., required = true, value_name = "[TTL] TYPE RDATA")]
        rest: Vec<String>,
    },
    /// Stage a removal: of a record (TYPE RDATA), an RRset (TYPE) or a name.
    ZoneUnset { zone: String, owner: String, rtype: Option<String>, rdata: Vec<String> },
    /// Show what committing the transaction would change.
    ZoneDiff { zone: String },
    /// Apply the transaction (journaled, then published, then NOTIFY).
    ZoneCommit { zone: String },
    /// Drop the transaction.
    ZoneAbort { zone: String },
    /// Add zones at run time (kept across restarts), all or none, in one step.
    ZoneAdd {
        /// The zones (more may come with --from).
        zones: Vec<String>,
        /// Read more zone names from FILE, one a line (`-`: standard input).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        /// The zone file (a primary's source, or where a secondary keeps its copy); `%s`
        /// in it stands for the zone's name without the final dot, in lower case, with
        /// bytes other than letters, digits, `-` and `_` in a label written `%XX` (the
        /// server fills it in, one zone at a time).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// A primary to transfer from (a `[[remote]]` id; repeatable).
        #[arg(long, value_name = "REMOTE")]
        primary: Vec<String>,
        /// A `[[template]]` to take settings from.
        #[arg(long, value_name = "NAME")]
        template: Option<String>,
        /// Any other zone key, as KEY=VALUE in TOML (e.g. notify=["s1"]).
        #[arg(long, value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Remove zones added at run time, all or none.
    ZoneRemove {
        /// The zones (more may come with --from).
        zones: Vec<String>,
        /// Read more zone names from FILE, one a line (`-`: standard input).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// Delete what storage keeps of zones no longer served (journal, kept copy, timers),
    /// all or none: a zone still served is refused.
    ZonePurge {
        /// The zones.
        #[arg(required = true)]
        zones: Vec<String>,
    },
    /// Copy each zone's served data (a zone file) and its journal into a directory of
    /// the server's backup-dir (all zones when none is named); never over a backup.
    ZoneBackup {
        /// The zones.
        zones: Vec<String>,
        /// The directory, in backup-dir (relative names are taken there; created if
        /// missing). Default: a new one named by the time, YYYYMMDDHHMMSS (UTC).
        #[arg(long, value_name = "DIR")]
        dir: Option<String>,
    },
    /// Serve each zone's data from a backup again (all zones when none is named): a
    /// change like an update, under a serial that never goes back.
    ZoneRestore {
        /// The zones.
        zones: Vec<String>,
        /// The directory zone-backup wrote, in backup-dir (as zone-backup printed it).
        #[arg(long, value_name = "DIR", required = true)]
        dir: String,
    },
    /// Print the manual page, ternctl(8), in roff.
    Man,
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions { shell: clap_complete::Shell },
}

const EXAMPLES: &str = "Examples:
  ternctl status
  ternctl zone-status example.com
  ternctl zone-begin example.com
  ternctl zone-set example.com www 300 A 192.0.2.1
  ternctl zone-diff example.com
  ternctl zone-commit example.com
  ternctl zone-key-import example.com Kexample.com.+013+12345.private
  ternctl zone-key-export example.com
  ternctl -c /etc/tern/ternd.toml zone-refresh";

/// Exit status: the server could not be reached.
pub const EXIT_UNREACHABLE: u8 = 3;

/// Runs `ternctl` with `cli`: prints to stdout (errors to stderr), returns the exit status.
pub fn run(cli: Cli) -> u8 {
    let zones_as = match cli.command {
        Command::ZoneStatus { .. } => render::ZonesAs::Detail,
        _ => render::ZonesAs::Table,
    };
    let request = match request(cli.command) {
        Ok(Action::Ask(request)) => request,
        Ok(Action::Print(text)) => {
            print!("{text}");
            return 0;
        }
        Err(why) => {
            eprintln!("ternctl: {why}");
            return 2;
        }
    };
    let socket = match socket_path(cli.socket, cli.config.as_deref()) {
        Ok(socket) => socket,
        Err(why) => {
            eprintln!("ternctl: {why}");
            return 2;
        }
    };
    match client::ask(&socket, &request, Duration::from_secs(cli.timeout.max(1))) {
        Ok(reply) => show(&reply, cli.json, zones_as),
        Err(e) => {
            eprintln!("ternctl: {}: {e}{}", socket.display(), hint(&e));
            EXIT_UNREACHABLE
        }
    }
}

fn hint(e: &ClientError) -> &'static str {
    match e {
        ClientError::Connect(io) if io.kind() == std::io::ErrorKind::NotFound => {
            " (is ternd running, with `[control] socket` set to this path?)"
        }
        ClientError::Connect(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            " (no server answers on it: ternd is not running)"
        }
        ClientError::Connect(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            " (run as root or as ternd's user, or see `[control] group`)"
        }
        ClientError::Timeout(_) => " (the server may be busy: --timeout SECONDS waits longer)",
        _ => "",
    }
}

/// Prints `reply` (zones `zones_as` the command shows them); the exit status it means.
fn show(reply: &Reply, json: bool, zones_as: render::ZonesAs) -> u8 {
    if json {
        println!("{}", serde_json::to_string_pretty(reply).unwrap_or_default());
    } else {
        match reply {
            Reply::Error { error } => eprintln!("ternctl: {error}"),
            other => print!("{}", render::text(other, now(), zones_as)),
        }
    }
    u8::from(!reply.succeeded())
}

/// Seconds since the epoch (what the server's times are counted in).
fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What a command line asks for.
enum Action {
    Ask(Request),
    Print(String),
}

fn request(command: Command) -> Result<Action, String> {
    let zone_op = |op, zones| Ok(Action::Ask(Request::Zone { op, zones }));
    let txn = |zone, step| Ok(Action::Ask(Request::Txn { zone, step }));
    match command {
        Command::Status => Ok(Action::Ask(Request::Status)),
        Command::Stop => Ok(Action::Ask(Request::Stop)),
        Command::Reload => Ok(Action::Ask(Request::Reload)),
        Command::LogReopen => Ok(Action::Ask(Request::LogReopen)),
        Command::ZoneList => Ok(Action::Ask(Request::ZoneList)),
        Command::ZoneStatus { zones } => Ok(Action::Ask(Request::ZoneStatus { zones })),
        Command::ZoneReload { zones } => zone_op(ZoneOp::Reload, zones),
        Command::ZoneRefresh { zones } => zone_op(ZoneOp::Refresh, zones),
        Command::ZoneRetransfer { zones } => zone_op(ZoneOp::Retransfer, zones),
        Command::ZoneNotify { zones } => zone_op(ZoneOp::Notify, zones),
        Command::ZoneFlush { zones } => zone_op(ZoneOp::Flush, zones),
        Command::ZoneFreeze { zones } => zone_op(ZoneOp::Freeze, zones),
        Command::ZoneThaw { zones } => zone_op(ZoneOp::Thaw, zones),
        Command::ZoneKeys { zones } => zone_op(ZoneOp::Keys, zones),
        Command::ZoneSign { zones } => zone_op(ZoneOp::Sign, zones),
        Command::ZoneKskSubmitted { zones } => zone_op(ZoneOp::KskSubmitted, zones),
        Command::ZoneKeyImport { zone, file, csk } => key_import(zone, &file, csk),
        Command::ZoneKeyExport { zone, key } => {
            Ok(Action::Ask(Request::ZoneKeyExport { zone, key }))
        }
        Command::ZoneRead { zone, owner, rtype } => {
            Ok(Action::Ask(Request::ZoneRead { zone, owner, rtype }))
        }
        Command::ZoneBegin { zone } => txn(zone, TxnStep::Begin),
        Command::ZoneSet { zone, owner, rest } => txn(zone, set_step(owner, &rest)?),
        Command::ZoneUnset { zone, owner, rtype, rdata } => {
            let rdata = Some(rdata.join(" ")).filter(|r| !r.is_empty());
            txn(zone, TxnStep::Unset { owner, rtype, rdata })
        }
        Command::ZoneDiff { zone } => txn(zone, TxnStep::Diff),
        Command::ZoneCommit { zone } => txn(zone, TxnStep::Commit),
        Command::ZoneAbort { zone } => txn(zone, TxnStep::Abort),
        Command::ZoneAdd { zones, from, file, primary, template, set } => {
            let tables = zone_names(zones, from.as_deref())?
                .iter()
                .map(|zone| zone_table(zone, file.as_deref(), &primary, template.as_deref(), &set))
                .collect::<Result<_, _>>()?;
            Ok(Action::Ask(Request::ZoneAdd { tables }))
        }
        Command::ZoneRemove { zones, from } => {
            Ok(Action::Ask(Request::ZoneRemove { zones: zone_names(zones, from.as_deref())? }))
        }
        Command::ZonePurge { zones } => Ok(Action::Ask(Request::ZonePurge { zones })),
        Command::ZoneBackup { zones, dir } => Ok(Action::Ask(Request::ZoneBackup { zones, dir })),
        Command::ZoneRestore { zones, dir } => Ok(Action::Ask(Request::ZoneRestore { zones, dir })),
        Command::Man => man().map(Action::Print),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ternctl", &mut out);
            Ok(Action::Print(String::from_utf8_lossy(&out).into_owned()))
        }
    }
}

/// The largest BIND key file `zone-key-import` reads (the server's limit).
const MAX_KEY_FILE: u64 = 64 * 1024;

/// `zone-key-import`: the `.private` file and the `.key` beside it, read here (the
/// server may not see the operator's files) and sent as text.
fn key_import(zone: String, file: &Path, csk: bool) -> Result<Action, String> {
    let read = |path: &Path| -> Result<String, String> {
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_KEY_FILE + 1).read_to_string(&mut text))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if text.len() as u64 > MAX_KEY_FILE {
            return Err(format!("{}: larger than {MAX_KEY_FILE} bytes", path.display()));
        }
        Ok(text)
    };
    if file.extension().is_none_or(|e| e != "private") {
        return Err(format!("{}: expected BIND's K…+…+….private file", file.display()));
    }
    let private = read(file)?;
    let key = read(&file.with_extension("key"))?;
    let name = file.display().to_string();
    Ok(Action::Ask(Request::ZoneKeyImport { zone, file: name, private, key, csk }))
}

/// The zones named on the command line and in `from` (one a line, `-` for standard
/// input; blank lines and `#` comments skipped); at least one.
fn zone_names(mut zones: Vec<String>, from: Option<&Path>) -> Result<Vec<String>, String> {
    if let Some(from) = from {
        let text = match from == Path::new("-") {
            true => std::io::read_to_string(std::io::stdin()),
            false => std::fs::read_to_string(from),
        }
        .map_err(|e| format!("{}: {e}", from.display()))?;
        let lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        zones.extend(lines.map(str::to_owned));
    }
    match zones.is_empty() {
        true => Err("no zone named (give zones, or --from FILE)".into()),
        false => Ok(zones),
    }
}

/// `[TTL] TYPE RDATA...` of `zone-set`.
fn set_step(owner: String, rest: &[String]) -> Result<TxnStep, String> {
    let (ttl, rest) = match rest.split_first() {
        Some((first, rest)) if first.bytes().all(|b| b.is_ascii_digit()) => {
            let ttl = first.parse::<u32>().map_err(|_| format!("{first}: not a TTL"))?;
            (Some(ttl), rest)
        }
        _ => (None, rest),
    };
    let Some((rtype, rdata)) = rest.split_first() else {
        return Err("zone-set needs a type and its data: ZONE OWNER [TTL] TYPE RDATA...".into());
    };
    if rdata.is_empty() {
        return Err(format!("zone-set: no data for the {rtype} record"));
    }
    let rdata = rdata.join(" ");
    if let Some(why) = tern_wire::rdata::not_one_record(&rdata) {
        return Err(format!("zone-set: {rtype} {rdata:?}: {why}"));
    }
    Ok(TxnStep::Set { owner, ttl, rtype: rtype.clone(), rdata })
}

/// The zone table `zone-add` sends: as it would be written in the configuration file,
/// the file's path made absolute (the server's working directory is not ours).
pub fn zone_table(
    zone: &str,
    file: Option<&Path>,
    primaries: &[String],
    template: Option<&str>,
    set: &[String],
) -> Result<String, String> {
    let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let mut table = format!("name = {}\n", quote(zone));
    if let Some(file) = file {
        let file = std::path::absolute(file).map_err(|e| format!("{}: {e}", file.display()))?;
        table.push_str(&format!("file = {}\n", quote(&file.display().to_string())));
    }
    if !primaries.is_empty() {
        let list: Vec<String> = primaries.iter().map(|p| quote(p)).collect();
        table.push_str(&format!("primary = [{}]\n", list.join(", ")));
    }
    if let Some(template) = template {
        table.push_str(&format!("template = {}\n", quote(template)));
    }
    for item in set {
        let Some((key, value)) = item.split_once('=') else {
            return Err(format!("--set {item}: expected KEY=VALUE"));
        };
        table.push_str(&format!("{} = {}\n", key.trim(), value.trim()));
    }
    Ok(table)
}

/// ternctl(8).
fn man() -> Result<String, String> {
    crate::manual::page(Cli::command(), MANUAL_SECTIONS).map_err(|e| e.to_string())
}

/// What `ternctl(8)` says beyond the command line, in roff.
const MANUAL_SECTIONS: &str = r#".SH FILES
.TP
\fI/run/tern/ternd.sock\fR
The control socket asked when neither \fB\-\-socket\fR nor \fB\-\-config\fR is given
(the package's \fB[control] socket\fR).
.TP
\fI/etc/tern/ternd.toml\fR
The server's configuration; \fB\-\-config\fR takes the socket from its \fB[control] socket\fR.
.SH "EXIT STATUS"
.TP
0
Done.
.TP
1
The server refused or failed the request (the reason is printed).
.TP
2
The command line is wrong, or names no socket.
.TP
3
No server answers on the socket, or not within \fB\-\-timeout\fR.
.SH "SEE ALSO"
\fBternd\fR(8), \fBternd.toml\fR(5)
"#;

/// The socket to use: `--socket`, else `[control] socket` of `--config`, else the
/// default.
fn socket_path(socket: Option<PathBuf>, config: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(socket) = socket {
        return Ok(socket);
    }
    let Some(config) = config else { return Ok(PathBuf::from(DEFAULT_SOCKET)) };
    let text = std::fs::read_to_string(config).map_err(|e| format!("{}: {e}", config.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {}", config.display(), e.message()))?;
    let socket = table.get("control").and_then(|c| c.get("socket")).and_then(|s| s.as_str());
    let Some(socket) = socket else {
        return Err(format!(
            "{}: no `[control] socket`: the control socket is off",
            config.display()
        ));
    };
    let base = config.parent().unwrap_or(Path::new("."));
    Ok(base.join(socket))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Request {
        let cli =
            Cli::try_parse_from(std::iter::once("ternctl").chain(args.iter().copied())).unwrap();
        match request(cli.command).unwrap() {
            Action::Ask(request) => request,
            Action::Print(_) => panic!("printed"),
        }
    }

    #[test]
    fn command_lines_become_requests() {
        assert_eq!(parse(&["status"]), Request::Status);
        assert_eq!(
            parse(&["zone-refresh", "a.example", "b.example"]),
            Request::Zone {
                op: ZoneOp::Refresh,
                zones: vec!["a.example".into(), "b.example".into()]
            }
        );
        let Request::Txn { step: TxnStep::Set { ttl, rtype, rdata, .. }, .. } =
            parse(&["zone-set", "example.com", "www", "300", "TXT", "\"a b\"", "c"])
        else {
            panic!("not a set")
        };
        assert_eq!((ttl, rtype.as_str(), rdata.as_str()), (Some(300), "TXT", "\"a b\" c"));
        let cli = Cli::try_parse_from(["ternctl", "zone-set", "e.com", "w", "TXT", "\"a\"\n\"b\""]);
        let refused = request(cli.unwrap().command).err().unwrap_or_default();
        assert!(refused.contains("line break"), "{refused}");
        let Request::Txn { step: TxnStep::Set { ttl: None, .. }, .. } =
            parse(&["zone-set", "example.com", "www", "A", "192.0.2.1"])
        else {
            panic!("not a set without TTL")
        };
        assert_eq!(
            parse(&["zone-unset", "example.com", "www", "A"]),
            Request::Txn {
                zone: "example.com".into(),
                step: TxnStep::Unset { owner: "www".into(), rtype: Some("A".into()), rdata: None }
            }
        );
    }

    /// `zone-key-import` sends both files' text (the server opens no file of the
    /// operator's); a file that is not a `.private`, or has no `.key` beside it, is
    /// refused here, naming it.
    #[test]
    fn zone_key_import_sends_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("Kexample.com.+013+01234.private");
        std::fs::write(&private, "Private-key-format: v1.3\n").unwrap();
        let path = private.display().to_string();
        let run = |args: &[&str]| {
            let cli = Cli::try_parse_from(std::iter::once("ternctl").chain(args.iter().copied()));
            request(cli.unwrap().command).map(|a| match a {
                Action::Ask(request) => request,
                Action::Print(_) => panic!("printed"),
            })
        };
        let missing = run(&["zone-key-import", "example.com", &path]).err().unwrap();
        assert!(missing.contains("+01234.key"), "{missing}");
        std::fs::write(private.with_extension("key"), "example.com. IN DNSKEY 257 3 13 AA==\n")
            .unwrap();
        let Ok(Request::ZoneKeyImport { zone, file, private, key, csk }) =
            run(&["zone-key-import", "example.com", &path, "--csk"])
        else {
            panic!("not a key import")
        };
        assert_eq!((zone.as_str(), file, csk), ("example.com", path.clone(), true));
        assert!(private.starts_with("Private-key-format") && key.contains("DNSKEY"));
        let key_file = path.replace(".private", ".key");
        assert!(run(&["zone-key-import", "example.com", &key_file])
            .is_err_and(|e| e.contains(".private")));
        assert_eq!(
            parse(&["zone-key-export", "example.com", "3"]),
            Request::ZoneKeyExport { zone: "example.com".into(), key: Some(3) }
        );
        assert_eq!(
            parse(&["zone-key-export", "example.com"]),
            Request::ZoneKeyExport { zone: "example.com".into(), key: None }
        );
    }

    #[test]
    fn zone_add_takes_many_zones_and_a_file_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("zones");
        std::fs::write(&list, "# new customers\nb.example.\n\nC.Example\nd/e.example\n").unwrap();
        let from = list.display().to_string();
        let args = ["zone-add", "a.example", "--from", &from, "--file", "/z/%s.zone"];
        let Request::ZoneAdd { tables } = parse(&args) else { panic!("not a zone-add") };
        let tables: Vec<toml::Table> = tables.iter().map(|t| toml::from_str(t).unwrap()).collect();
        let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a.example", "b.example.", "C.Example", "d/e.example"]);
        // The server fills in `%s` (lifecycle::added), as for the API's zones.
        assert!(tables.iter().all(|t| t["file"].as_str() == Some("/z/%s.zone")), "{tables:?}");
        let Request::ZoneRemove { zones } = parse(&["zone-remove", "a.example", "--from", &from])
        else {
            panic!("not a zone-remove")
        };
        assert_eq!(zones, ["a.example", "b.example.", "C.Example", "d/e.example"]);
        let none = Cli::try_parse_from(["ternctl", "zone-add", "--file", "x"]).unwrap();
        assert!(request(none.command).is_err_and(|e| e.contains("no zone")));
    }

    #[test]
    fn zone_add_writes_a_table_the_configuration_reads() {
        let Request::ZoneAdd { tables } = parse(&[
            "zone-add",
            "x.example",
            "--file",
            "/z/x.zone",
            "--primary",
            "p1",
            "--set",
            "notify-ns=true",
        ]) else {
            panic!("not a zone-add")
        };
        let parsed: toml::Table = toml::from_str(&tables[0]).unwrap();
        assert_eq!(parsed["name"].as_str(), Some("x.example"));
        assert_eq!(parsed["file"].as_str(), Some("/z/x.zone"));
        assert_eq!(parsed["primary"].as_array().map(Vec::len), Some(1));
        assert_eq!(parsed["notify-ns"].as_bool(), Some(true));
    }

    #[test]
    fn the_socket_comes_from_the_configuration_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("ternd.toml");
        std::fs::write(&config, "[control]\nsocket = \"ctl.sock\"\n").unwrap();
        assert_eq!(socket_path(None, Some(&config)).unwrap(), dir.path().join("ctl.sock"));
        std::fs::write(&config, "[server]\n").unwrap();
        assert!(socket_path(None, Some(&config)).unwrap_err().contains("off"));
        assert_eq!(socket_path(None, None).unwrap(), PathBuf::from(DEFAULT_SOCKET));
    }
}
