//! Zones built by Lua scripts (`[[zone]] script`, issue #54 item 3), as an operator runs
//! them: `ternd check-config`, `dig`, `ternctl zone-reload` after editing the script, a
//! script that loops for ever or eats memory (refused, the last good zone kept), and an
//! UPDATE (refused: the script is the zone's source).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use common::*;

/// A script that makes `count` hosts `hN` A 192.0.2.x, with serial `serial`.
fn script(serial: &str, count: u32) -> String {
    format!(
        "zone.add('@', 'SOA', 'ns hostmaster ' .. {serial} .. ' 3600 600 86400 60')\n\
         zone.add('@', 'NS', 'ns')\n\
         zone.add('ns', 'A', '192.0.2.53')\n\
         zone.ttl = 120\n\
         for i = 1, {count} do\n\
           zone.add('h' .. i, 'A', '192.0.2.' .. (i % 250 + 1))\n\
         end\n"
    )
}

struct Served {
    addr: SocketAddr,
    daemon: Daemon,
    dir: tempfile::TempDir,
}

impl Served {
    fn script_path(&self) -> std::path::PathBuf {
        self.dir.path().join("lua.test.lua")
    }

    /// `ternctl zone-reload lua.test`: its exit success and its output.
    fn reload(&self) -> (bool, String) {
        self.ctl("zone-reload")
    }

    /// `ternctl COMMAND lua.test`: its exit success and its output (stdout, stderr).
    fn ctl(&self, command: &str) -> (bool, String) {
        let socket = self.dir.path().join("ternd.sock");
        let out = ternctl().arg("--socket").arg(socket).args([command, "lua.test"]).output();
        let out = out.unwrap();
        let (stdout, stderr) = (out.stdout.as_slice(), out.stderr.as_slice());
        let text = String::from_utf8_lossy(stdout) + String::from_utf8_lossy(stderr);
        (out.status.success(), text.into_owned())
    }
}

/// The configuration: `lua.test` built by its script, updates allowed to anyone (so a
/// refusal comes from the script, not the ACL).
fn config_text(port: u16, extra: &str) -> String {
    format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ternd.sock\"\n\
         [[acl]]\nid = \"anyone\"\naddress = \"127.0.0.0/8\"\naction = [\"update\", \"transfer\"]\n\
         [[zone]]\nname = \"lua.test\"\nscript = \"lua.test.lua\"\nacl = [\"anyone\"]\n{extra}"
    )
}

fn write_config(dir: &Path, port: u16, extra: &str) -> std::path::PathBuf {
    let file = dir.join("ternd.toml");
    std::fs::write(&file, config_text(port, extra)).unwrap();
    file
}

fn serve(text: &str, extra: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lua.test.lua"), text).unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let file = write_config(dir.path(), port, extra);
    let daemon =
        Daemon::spawn(&["--config", file.to_str().unwrap()], addr, &dir.path().join("log"));
    Served { addr, daemon, dir }
}

/// Rewrites the script so that its size or time differs from the served one's.
fn edit(served: &Served, text: &str) {
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(served.script_path(), text).unwrap();
}

#[test]
fn a_script_zone_is_served_and_follows_its_script() {
    let served = serve(&script("7", 500), "");
    assert_eq!(dig_soa(served.addr, "lua.test"), ("NOERROR".into(), Some(7)));
    assert_eq!(dig_short(served.addr, "h42.lua.test", "A").trim(), "192.0.2.43");
    // The script changes its data and keeps its serial: the serial rises by the policy.
    edit(&served, &script("7", 600));
    let (ok, text) = served.reload();
    assert!(ok, "{text}");
    assert_eq!(dig_soa(served.addr, "lua.test").1, Some(8), "serial raised by `increment`");
    assert_eq!(dig_short(served.addr, "h550.lua.test", "A").trim(), "192.0.2.51");
    // An IXFR from 7 gives the difference: 100 records added.
    let ixfr = std::process::Command::new("dig")
        .args(["+tries=1", "+time=2", "-p", &served.addr.port().to_string(), "@127.0.0.1"])
        .args(["lua.test", "IXFR=7"])
        .output()
        .unwrap();
    let ixfr = String::from_utf8_lossy(&ixfr.stdout);
    let host = |l: &str| l.strip_prefix('h')?.split('.').next()?.parse::<u32>().ok();
    let added = ixfr.lines().filter(|l| l.contains("\tA\t")).filter_map(host);
    assert_eq!(added.filter(|&n| n > 500).count(), 100, "h501 to h600 come by IXFR: {ixfr}");
    let (ok, text) = served.reload();
    assert!(ok && text.contains("the script did not change"), "{text}");
    // Its own higher serial is taken as it is.
    edit(&served, &script("100", 600));
    assert!(served.reload().0);
    assert_eq!(dig_soa(served.addr, "lua.test").1, Some(100));
}

#[test]
fn a_failing_script_keeps_the_last_good_zone() {
    let served =
        serve(&script("1", 10), "script-max-instructions = 5000000\nscript-max-memory = \"16M\"\n");
    for (bad, why) in [
        ("local n = 0\nwhile true do n = n + 1 end\n", "lua.test.lua:2: the script ran more than 5000000 instructions"),
        ("local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end\n", "memory limit"),
        ("zone.add('@', 'SOA', 'ns hostmaster 2 3600 600 86400 60')\nzone.add('www', 'A', '300.1.1.1')\n", "lua.test.lua:2: a record that does not read"),
        ("zone.add('@', 'SOA', 'ns hostmaster 2 3600 600 86400 60')\nio.open('/etc/passwd')\n", "lua.test.lua:2:"),
    ] {
        edit(&served, bad);
        let (ok, text) = served.reload();
        assert!(!ok, "{bad}: {text}");
        assert!(text.contains(why), "{bad}: {text}");
        assert_eq!(dig_soa(served.addr, "lua.test"), ("NOERROR".into(), Some(1)), "{bad}");
        assert_eq!(dig_short(served.addr, "h3.lua.test", "A").trim(), "192.0.2.4");
    }
    assert!(served.daemon.log_text().contains("lua.test.lua:2"), "the log says where");
}

#[test]
fn updates_to_a_script_zone_are_refused() {
    let served = serve(&script("1", 10), "");
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    socket
        .send_to(&update_adding(77, "lua.test.", "new.lua.test.", "192.0.2.99"), served.addr)
        .unwrap();
    let mut buf = [0u8; 512];
    let (n, _) = socket.recv_from(&mut buf).unwrap();
    assert!(n >= 4 && id_of(&buf[..n]) == 77);
    assert_eq!(buf[3] & 0x0f, 5, "REFUSED");
    assert!(served.daemon.log_text().contains("built by its script"));
    assert_eq!(dig_short(served.addr, "new.lua.test", "A").trim(), "");
    let (ok, text) = served.ctl("zone-begin");
    assert!(!ok && text.contains("built by its script"), "{text}");
}

#[test]
fn check_config_runs_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(dir.path(), free_port(), "");
    std::fs::write(dir.path().join("lua.test.lua"), script("1", 3)).unwrap();
    let good = ternd().args(["--check-config", file.to_str().unwrap()]).output().unwrap();
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stdout));
    std::fs::write(dir.path().join("lua.test.lua"), "zone.add('@', 'SOA')\n").unwrap();
    let bad = ternd().args(["--check-config", file.to_str().unwrap()]).output().unwrap();
    assert!(!bad.status.success());
    let text =
        format!("{}{}", String::from_utf8_lossy(&bad.stdout), String::from_utf8_lossy(&bad.stderr));
    assert!(text.contains("lua.test.lua:1:"), "{text}");
    // `file` and `script` together, or `script` on a secondary, are configuration errors.
    let both = config_text(free_port(), "file = \"x.zone\"\n");
    std::fs::write(&file, both).unwrap();
    let out = ternd().args(["--check-config", file.to_str().unwrap()]).output().unwrap();
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && text.contains("one source"), "{text}");
}
