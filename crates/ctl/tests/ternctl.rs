//! The `ternctl` binary on its own, without a server: its version names the commit as
//! `ternd`'s does, its manual and completions print, a bad command line and an
//! unreachable server have their exit statuses — and it does not link the daemon.
//! (`ternctl` against running servers: ternd's tests/ternctl.rs.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

/// `ternctl args…`: exit status, stdout, stderr.
fn ternctl(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ternctl")).args(args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn version_names_the_commit_as_ternd_does() {
    let (code, stdout, _) = ternctl(&["--version"]);
    assert_eq!(code, 0);
    let head = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output();
    let commit = match head {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap().trim().to_owned(),
        _ => "unknown commit".to_owned(),
    };
    let want = format!("ternctl {} ({commit}, built 20", env!("CARGO_PKG_VERSION"));
    assert!(stdout.starts_with(&want), "{stdout:?} does not start with {want:?}");
}

#[test]
fn the_manual_and_completions_print_without_a_server() {
    let (code, man, _) = ternctl(&["man"]);
    assert_eq!(code, 0);
    assert!(man.contains(".TH ternctl 8"), "{man}");
    assert!(man.contains("zone\\-add"), "the manual lacks zone-add");
    let (code, bash, _) = ternctl(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(bash.contains("ternctl") && bash.contains("zone-status"), "{bash}");
}

#[test]
fn a_bad_command_line_exits_2_and_no_server_exits_3() {
    let (code, _, stderr) = ternctl(&["zone-set", "example.com", "www", "TXT", "\"a\"\n\"b\""]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("line break"), "{stderr}");
    let (code, _, _) = ternctl(&["no-such-command"]);
    assert_eq!(code, 2);
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("none.sock");
    let (code, _, stderr) = ternctl(&["--socket", socket.to_str().unwrap(), "status"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is ternd running"), "{stderr}");
}

/// What `package` depends on, directly or not, by name, as Cargo.lock says (the build
/// that is tested).
fn dependencies(lock: &toml::Table, package: &str) -> BTreeSet<String> {
    let packages = lock["package"].as_array().unwrap();
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in packages {
        let deps = p.get("dependencies").and_then(|d| d.as_array());
        let names = deps.into_iter().flatten().filter_map(|d| d.as_str());
        // "name" or "name version": the name is enough here.
        let names = names.map(|d| d.split(' ').next().unwrap_or(d));
        by_name.entry(p["name"].as_str().unwrap()).or_default().extend(names);
    }
    let mut seen = BTreeSet::new();
    let mut next = vec![package];
    while let Some(name) = next.pop() {
        for dep in by_name.get(name).into_iter().flatten() {
            if seen.insert((*dep).to_owned()) {
                next.push(dep);
            }
        }
    }
    seen
}

#[test]
fn ternctl_does_not_link_the_daemon() {
    let lock = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock");
    let lock: toml::Table = toml::from_str(&std::fs::read_to_string(lock).unwrap()).unwrap();
    let deps = dependencies(&lock, "tern-ctl");
    assert!(deps.contains("tern-wire") && deps.contains("clap"), "{deps:?}");
    let server = dependencies(&lock, "ternd");
    assert!(server.contains("tokio") && server.contains("tern-ctl"), "the walk finds them");
    for daemon in ["ternd", "tern-zone", "tern-engine", "tern-journal", "tokio", "axum", "hyper"] {
        assert!(!deps.contains(daemon), "tern-ctl depends on {daemon}: {deps:?}");
    }
}
