//! A reload applies `[log]` and `[http]` without a restart, as an operator meets it with
//! the real `ternd`, `ternctl` and curl: the log's format and file change at SIGHUP
//! (the command line's `--log-format` and `--log-file` still win), a rotated API token
//! replaces the old one, a bad token file keeps it and `ternctl reload` says why,
//! metrics turned off answer 404, and a new `[http] listen` still waits for a restart.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

const OLD_TOKEN: &str = "old-token-0123456789abcdef";
const NEW_TOKEN: &str = "new-token-fedcba9876543210";

/// A server's directory: its configuration's `[server]` and `[[zone]]` around `extra`.
struct Setup {
    dir: tempfile::TempDir,
    port: u16,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
        Setup { dir, port: free_port() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the configuration with `extra` tables; its path.
    fn write(&self, extra: &str) -> PathBuf {
        let port = self.port;
        let text = format!(
            "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
             [control]\nsocket = \"ternd.sock\"\n{extra}\n\
             [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nzonefile-sync = \"1h\"\n"
        );
        let config = self.path("ternd.toml");
        std::fs::write(&config, text).unwrap();
        config
    }

    /// Starts `ternd --config` with `args` after, standard error to `stderr`; waits for
    /// the zones' "load done" in `log` (where its lines go).
    fn start(&self, args: &[&str], log: &Path) -> Daemon {
        let config = self.path("ternd.toml");
        let stderr = std::fs::File::create(self.path("stderr")).unwrap();
        let mut command = ternd();
        command.arg("--config").arg(&config).args(args);
        let child = command.stdout(Stdio::null()).stderr(stderr).spawn().unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let daemon = Daemon { child, addr, log: log.to_owned() };
        let loaded =
            eventually(Duration::from_secs(30), || daemon.log_text().contains("load done"));
        let stderr = std::fs::read_to_string(self.path("stderr")).unwrap_or_default();
        assert!(loaded, "ternd did not start: {}{stderr}", daemon.log_text());
        daemon
    }

    /// `ternctl reload`: its exit status and what it wrote.
    fn ternctl_reload(&self) -> (i32, String) {
        let out = common::ternctl()
            .arg("--socket")
            .arg(self.path("ternd.sock"))
            .arg("reload")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    }
}

/// The status of a GET of `path` on `http` with curl, with `token` as the bearer.
fn get(http: u16, path: &str, token: Option<&str>) -> u16 {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5"]);
    if let Some(token) = token {
        cmd.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = cmd.arg(format!("http://127.0.0.1:{http}{path}")).output().unwrap();
    String::from_utf8_lossy(&out.stdout).parse().unwrap_or(0)
}

/// Whether the daemon still runs: the same process, never restarted.
fn still_running(daemon: &mut Daemon) -> bool {
    daemon.child.try_wait().unwrap().is_none()
}

#[test]
fn a_sighup_moves_the_log_to_its_new_file_and_format() {
    let setup = Setup::new();
    setup.write("[log]\nfile = \"old.log\"\nformat = \"human\"\n");
    let mut daemon = setup.start(&[], &setup.path("old.log"));
    setup.write("[log]\nfile = \"new.log\"\nformat = \"json\"\n");
    daemon.signal(libc::SIGHUP);
    let new = setup.path("new.log");
    let done = eventually(Duration::from_secs(10), || {
        std::fs::read_to_string(&new).unwrap_or_default().contains("reload done")
    });
    assert!(done, "no reload in {}: {}", new.display(), daemon.log_text());
    assert!(still_running(&mut daemon));
    let old = daemon.log_text();
    assert!(old.contains(" INFO ") && old.contains("SIGHUP: reloading"), "{old}");
    assert!(old.contains(&format!("go to {}, as json", new.display())), "{old}");
    assert!(!old.contains("reload done"), "{old}");
    let text = std::fs::read_to_string(&new).unwrap();
    for line in text.lines() {
        let line: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(line["timestamp"].is_string() && line["level"].is_string(), "{line}");
    }
    assert!(!text.contains("SIGHUP: reloading"), "nothing before the reload: {text}");
    // Back to the old file (appended to), human again; a file that cannot be opened
    // keeps the destination, and `ternctl reload` says so.
    setup.write("[log]\nfile = \"missing/dir.log\"\nformat = \"human\"\n");
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("[log] format and file not applied") && said.contains("missing/dir.log"),
        "{said}"
    );
    let last = std::fs::read_to_string(&new).unwrap();
    let last: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(last["message"], "reload done", "{last}");
    assert!(still_running(&mut daemon));
}

#[test]
fn the_command_line_log_options_win_over_a_reloaded_file() {
    let setup = Setup::new();
    setup.write("[log]\nformat = \"human\"\n");
    let cli = setup.path("cli.log");
    let mut daemon =
        setup.start(&["--log-file", cli.to_str().unwrap(), "--log-format", "human"], &cli);
    setup.write("[log]\nfile = \"file.log\"\nformat = \"json\"\n");
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("reload done"), "{said}");
    let reloaded = eventually(Duration::from_secs(5), || {
        daemon.log_text().lines().any(|l| l.contains(" INFO ") && l.contains("reload done"))
    });
    assert!(reloaded, "{}", daemon.log_text());
    assert!(!setup.path("file.log").exists(), "[log] file is overridden");
    assert!(still_running(&mut daemon));
}

#[test]
fn a_reload_rotates_the_api_token_and_keeps_it_when_the_new_file_is_bad() {
    let setup = Setup::new();
    let http = free_port();
    std::fs::write(setup.path("token"), format!("{OLD_TOKEN}\n")).unwrap();
    let table = format!("[http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"token\"\n");
    setup.write(&table);
    let mut daemon = setup.start(&[], &setup.path("stderr"));
    assert_eq!(get(http, "/api/v1/status", Some(OLD_TOKEN)), 200);
    assert_eq!(get(http, "/metrics", None), 200);
    // Rotated: the file replaced, then a reload.
    std::fs::write(setup.path("token.new"), format!("{NEW_TOKEN}\n")).unwrap();
    std::fs::rename(setup.path("token.new"), setup.path("token")).unwrap();
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 0, "{said}");
    assert_eq!(get(http, "/api/v1/status", Some(OLD_TOKEN)), 401);
    assert_eq!(get(http, "/api/v1/status", Some(NEW_TOKEN)), 200);
    assert!(daemon.log_text().contains("API token replaced"), "{}", daemon.log_text());
    // A short token, then a missing file: the token in force stays, and ternctl says why.
    std::fs::write(setup.path("token"), "short\n").unwrap();
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("api-token-file not applied") && said.contains("at least 16"), "{said}");
    std::fs::remove_file(setup.path("token")).unwrap();
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("keeps its token") && said.contains("No such file"), "{said}");
    assert_eq!(get(http, "/api/v1/status", Some(NEW_TOKEN)), 200);
    assert_eq!(get(http, "/api/v1/status", Some("short")), 401);
    // Metrics off, the API off: 404, the listener still there.
    setup.write(&format!("[http]\nlisten = \"127.0.0.1:{http}\"\nmetrics = false\n"));
    let (code, said) = setup.ternctl_reload();
    assert_eq!(code, 0, "{said}");
    assert_eq!(get(http, "/metrics", None), 404);
    assert_eq!(get(http, "/api/v1/status", Some(NEW_TOKEN)), 404);
    // And on again.
    std::fs::write(setup.path("token"), format!("{OLD_TOKEN}\n")).unwrap();
    setup.write(&table);
    assert_eq!(setup.ternctl_reload().0, 0);
    assert_eq!(get(http, "/metrics", None), 200);
    assert_eq!(get(http, "/api/v1/status", Some(OLD_TOKEN)), 200);
    assert!(still_running(&mut daemon));
    assert_eq!(daemon.log_text().matches("HTTP server listening").count(), 1, "never restarted");
}

#[test]
fn a_new_http_listen_address_waits_for_a_restart_and_says_so() {
    let setup = Setup::new();
    let (http, other) = (free_port(), free_port());
    setup.write(&format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"));
    let mut daemon = setup.start(&[], &setup.path("stderr"));
    setup.write(&format!("[http]\nlisten = \"127.0.0.1:{other}\"\nmetrics = false\n"));
    daemon.signal(libc::SIGHUP);
    let warned = eventually(Duration::from_secs(10), || {
        daemon.log_text().contains("`http.listen` changed: it takes effect at the next restart")
    });
    assert!(warned, "{}", daemon.log_text());
    assert!(eventually(Duration::from_secs(5), || get(http, "/metrics", None) == 404));
    assert_eq!(get(other, "/metrics", None), 0, "nothing listens there yet");
    let warnings = daemon.log_text().matches("takes effect at the next restart").count();
    assert_eq!(warnings, 1, "{}", daemon.log_text());
    assert!(still_running(&mut daemon));
}
