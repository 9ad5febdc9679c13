//! `ternd` beside `ternctl`, now its own crate (`tern-ctl`): the `ternctl` found next to
//! `ternd` is this build's and says the same version, and the `%s` of a new zone's file,
//! filled in by the server, works for the HTTP API as for `ternctl zone-add`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::process::Command;

use common::*;

/// The text after the program's name of `command --version`.
fn version(command: &mut Command) -> String {
    let out = command.arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_once(' ').unwrap().1.trim().to_owned()
}

#[test]
fn ternctl_beside_ternd_says_the_same_version() {
    let ternd = version(&mut ternd());
    assert!(ternd.contains(" built 20"), "{ternd}");
    assert_eq!(version(&mut ternctl()), ternd);
}

#[test]
fn a_zone_added_through_the_api_gets_its_percent_s_filled_in() {
    const TOKEN: &str = "test-token-0123456789abcdef";
    let dir = tempfile::tempdir().unwrap();
    let zone = "@ 300 SOA ns h 7 2 3 4 5\n@ 300 NS ns\nns 300 A 192.0.2.1\n";
    std::fs::write(dir.path().join("new.example.zone"), zone).unwrap();
    std::fs::write(dir.path().join("token"), format!("{TOKEN}\n")).unwrap();
    let (port, http) = (free_port(), free_port());
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"token\"\n"
    );
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let pattern = dir.path().join("%s.zone");
    let body = format!(r#"{{"name": "New.Example", "file": {:?}}}"#, pattern.display().to_string());
    let out = Command::new("curl")
        .args(["-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST"])
        .args(["-H", &format!("Authorization: Bearer {TOKEN}")])
        .args(["-H", "Content-Type: application/json", "--data", &body])
        .arg(format!("http://127.0.0.1:{http}/api/v1/zones"))
        .output()
        .unwrap();
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(reply.ends_with("\n200"), "{reply}\n{}", daemon.log_text());
    assert_eq!(dig_soa(addr, "new.example").1, Some(7), "{}", daemon.log_text());
    let added = std::fs::read_to_string(dir.path().join("storage/zones-added.toml")).unwrap();
    let file = dir.path().join("new.example.zone").display().to_string();
    assert!(added.contains(&format!("file = {file:?}")), "{added}");
}
