//! The real `ternd` binary: `--check-config`, quick mode with dig and kdig, `demo`,
//! SIGHUP reloads under load, SIGTERM/SIGINT drain and exit 0, the PID file, the
//! privilege drop, `--daemon`, JSON logs, and the control plane threads' nice value.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

fn example_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ternd.example.toml")
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A temporary directory with a zone file and a configuration file.
fn setup(extra: &str) -> (tempfile::TempDir, PathBuf, SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
    let port = free_port();
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n{extra}\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\n"
    );
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    (dir, config, loopback(port))
}

fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn check_config_accepts_the_documented_example() {
    let example = example_config();
    let (code, stdout, stderr) =
        output(ternd().arg("--check-config").arg(&example).arg("--skip-zones"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("valid (3 zones, zones not checked)"), "{stdout}");
}

/// Item 8 of issue #32: a missing or broken zone file fails the check, with the zone's
/// error; a secondary without a kept copy is fine.
#[test]
fn check_config_loads_every_zone() {
    let (dir, config, _) = setup("");
    let (code, stdout, stderr) = output(ternd().arg("--check-config").arg(&config));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("valid (1 zones, zones checked)"), "{stdout}");
    let text = std::fs::read_to_string(&config).unwrap();
    let broken = dir.path().join("broken.zone");
    std::fs::write(
        &broken,
        "@ 300 SOA ns h 1 2 3 4 5
@ 300 NS ns
ns 300 A 192.0.2.300
",
    )
    .unwrap();
    let more = "[[zone]]\nname = \"missing.example\"\nfile = \"missing.zone\"\n\
                [[zone]]\nname = \"broken.example\"\nfile = \"broken.zone\"\n\
                [[remote]]\nid = \"p\"\naddress = \"127.0.0.1\"\n\
                [[zone]]\nname = \"secondary.example\"\nprimary = \"p\"\n";
    std::fs::write(&config, format!("{text}\n{more}")).unwrap();
    let (code, stdout, _) = output(ternd().arg("--check-config").arg(&config));
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("zone missing.example.:"), "{stdout}");
    assert!(stdout.contains("broken.zone:3:"), "the error names file and line: {stdout}");
    assert!(stdout.contains("secondary.example.: no copy kept yet"), "{stdout}");
    assert!(stdout.contains("2 of 4 zones cannot be loaded"), "{stdout}");
    let (code, _, _) = output(ternd().arg("--check-config").arg(&config).arg("--skip-zones"));
    assert_eq!(code, 0);
}

/// Issue #53 item 6: `--check-config` refuses what start-up refuses — an API token
/// file that is missing, empty or too short, a log file that cannot be opened — and
/// accepts them once usable, creating nothing.
#[test]
fn check_config_checks_the_files_start_up_opens() {
    let (dir, config, _) = setup("[log]\nfile = \"no-such-dir/ternd.log\"\n[http]\nlisten = \"127.0.0.1:0\"\napi-token-file = \"token\"");
    let check = || output(ternd().arg("--check-config").arg(&config).arg("--skip-zones"));
    let (code, stdout, stderr) = check();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("[http] api-token-file: "), "{stdout}");
    assert!(stdout.contains("[log] file: ") && stdout.contains("does not exist"), "{stdout}");
    assert!(stdout.contains("2 files start-up needs cannot be used"), "{stdout}");
    let started = ternd().arg("--config").arg(&config).output().unwrap();
    assert!(!started.status.success(), "start-up refuses the same configuration");
    for short in ["", "short\n"] {
        std::fs::write(dir.path().join("token"), short).unwrap();
        let (code, stdout, _) = check();
        assert_eq!(code, 1, "{stdout}");
        assert!(stdout.contains("at least 16 characters"), "{stdout}");
    }
    std::fs::write(dir.path().join("token"), "0123456789abcdef0123\n").unwrap();
    std::fs::create_dir(dir.path().join("no-such-dir")).unwrap();
    let (code, stdout, stderr) = check();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("valid (1 zones, zones not checked)"), "{stdout}");
    assert!(!dir.path().join("no-such-dir/ternd.log").exists(), "the check created the log");
}

#[test]
fn check_config_errors_name_file_line_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[server]\nlisten = [\"127.0.0.1:53\"]\nudp-wrkers = 2\n").unwrap();
    let (code, _, stderr) = output(ternd().arg("--check-config").arg(&path));
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!("{}:3:1: unknown field `udp-wrkers`", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("hint: did you mean `udp-workers`?"), "{stderr}");

    std::fs::write(&path, "[tcp]\nidle-timeout = \"forever\"\n").unwrap();
    let (code, _, stderr) = output(ternd().arg("--check-config").arg(&path));
    assert_eq!(code, 1);
    assert!(stderr.contains(":2:16: `forever` is not a duration"), "{stderr}");

    let (code, _, stderr) =
        output(ternd().arg("--check-config").arg(dir.path().join("missing.toml")));
    assert_eq!(code, 1);
    assert!(stderr.contains("missing.toml: No such file"), "{stderr}");
}

#[test]
fn version_names_the_commit_and_man_and_completions_are_printed() {
    let (code, stdout, _) = output(ternd().arg("--version"));
    assert_eq!(code, 0);
    let head = std::process::Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output();
    let commit = match head {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).unwrap().trim().to_owned(),
        _ => "unknown commit".to_owned(),
    };
    let want = format!("ternd {} ({commit}, built 20", env!("CARGO_PKG_VERSION"));
    assert!(stdout.starts_with(&want), "{stdout:?} does not start with {want:?}");

    let (code, man, _) = output(ternd().arg("man"));
    assert_eq!(code, 0);
    assert!(man.contains(".TH ternd 8"), "{man}");
    for option in ["check\\-config", "keygen", "completions"] {
        assert!(man.contains(option), "the manual lacks {option}");
    }
    // Issue #53 item 7: what an operator looks for in a daemon's page, and no pointer to
    // a page that does not exist (clap names one per subcommand).
    for section in [".SH SIGNALS", ".SH FILES", ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""] {
        assert!(man.contains(section), "the manual lacks {section}");
    }
    assert!(
        man.contains("\\fBternd check\\-zone\\fR") && !man.contains("ternd\\-demo(8)"),
        "{man}"
    );
    assert_renders_cleanly(&man);
    let (code, page, _) = output(ternd().args(["man", "ternd.toml"]));
    assert_eq!(code, 0);
    assert!(page.starts_with(".TH ternd.toml 5 \"20"), "{page}");
    assert!(page.contains("\n.SH EXAMPLE\n"), "{page}");
    assert_renders_cleanly(&page);
    assert_eq!(output(ternd().args(["man", "nope"])).0, 2);

    let (code, bash, _) = output(ternd().args(["completions", "bash"]));
    assert_eq!(code, 0);
    assert!(bash.contains("complete -F _ternd"), "{bash}");
    let (code, _, stderr) = output(ternd().args(["completions", "cmd.exe"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("possible values: bash"), "{stderr}");
}

/// groff, with every warning on (as lintian reads manual pages), has nothing to say about
/// `page`; skipped where groff is missing.
fn assert_renders_cleanly(page: &str) {
    use std::io::Write;
    let child = Command::new("groff")
        .args(["-man", "-ww", "-z", "-Tutf8"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("groff missing: the manual pages' roff is not checked");
        return;
    };
    child.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && warnings.is_empty(), "{warnings}");
}

#[test]
fn no_arguments_explain_what_to_give() {
    let (code, _, stderr) = output(&mut ternd());
    assert_eq!(code, 1);
    assert!(stderr.contains("nothing to serve"), "{stderr}");
}

fn dig_answers(tool: &str, addr: SocketAddr, extra: &[&str]) -> bool {
    let out = Command::new(tool)
        .arg(format!("@{}", addr.ip()))
        .args(["-p", &addr.port().to_string(), "www.example.com", "A"])
        .args(if tool == "kdig" { ["+retry=0", "+timeout=2"] } else { ["+tries=1", "+time=2"] })
        .args(extra)
        .output();
    match out {
        Ok(out) => {
            // The demo zone: www.example.com is a CNAME to example.com, which has an A.
            let text = String::from_utf8_lossy(&out.stdout);
            text.contains("status: NOERROR")
                && text.contains("192.0.2.1")
                && !text.contains("timed out")
        }
        Err(_) => {
            eprintln!("{tool} is not installed; skipped");
            true
        }
    }
}

#[test]
fn quick_mode_answers_dig_and_kdig_over_udp_and_tcp() {
    let (dir, _, _) = setup("");
    let port = free_port();
    let zone = format!("example.com={}", dir.path().join("example.com.zone").display());
    let listen = format!("127.0.0.1:{port}");
    let log = dir.path().join("log");
    let daemon = Daemon::spawn(
        &["--listen", &listen, "--zone", &zone, "--workers", "1"],
        loopback(port),
        &log,
    );
    assert!(dig_answers("dig", daemon.addr, &[]));
    assert!(dig_answers("dig", daemon.addr, &["+tcp"]));
    assert!(dig_answers("kdig", daemon.addr, &[]));
    assert!(dig_answers("kdig", daemon.addr, &["+tcp", "+nsid"]));
    assert!(
        eventually(Duration::from_secs(10), || daemon.log_text().contains("serving")),
        "{}",
        daemon.log_text()
    );
}

#[test]
fn demo_serves_on_the_given_address() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let daemon =
        Daemon::spawn(&["demo", "--listen", &listen], loopback(port), &dir.path().join("log"));
    assert!(dig_answers("dig", daemon.addr, &[]));
}

/// Queries from another thread all the while; returns (sent, answered).
fn query_continuously(
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(u32, u32)> {
    std::thread::spawn(move || {
        let socket = udp_client();
        socket.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let (mut sent, mut answered) = (0u32, 0u32);
        let mut buf = [0u8; 512];
        let deadline = Instant::now() + Duration::from_secs(30);
        while !stop.load(Ordering::Relaxed) && sent < 20_000 && Instant::now() < deadline {
            let id = sent as u16;
            socket.send_to(&query(id, "load.example.com"), addr).unwrap();
            sent += 1;
            if let Ok((len, _)) = socket.recv_from(&mut buf) {
                answered += u32::from(id_of(&buf[..len]) == id);
            }
        }
        (sent, answered)
    })
}

#[test]
fn sighup_reloads_without_dropping_a_query() {
    let (dir, config, addr) = setup("");
    let mut daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let stop = Arc::new(AtomicBool::new(false));
    let load = query_continuously(addr, Arc::clone(&stop));
    std::thread::sleep(Duration::from_millis(100));
    for round in 0..5 {
        if round == 2 {
            // A broken file is reported and the running configuration kept.
            let good = std::fs::read_to_string(&config).unwrap();
            std::fs::write(&config, format!("{good}\nbogus = 1\n")).unwrap();
            daemon.signal(libc::SIGHUP);
            std::thread::sleep(Duration::from_millis(150));
            std::fs::write(&config, good).unwrap();
        }
        daemon.signal(libc::SIGHUP);
        std::thread::sleep(Duration::from_millis(150));
    }
    stop.store(true, Ordering::Relaxed);
    let (sent, answered) = load.join().unwrap();
    assert!(sent > 50, "only {sent} queries sent");
    assert_eq!(answered, sent, "no query lost across reloads");
    let log = daemon.log_text();
    assert_eq!(log.matches("reload done").count(), 5, "{log}");
    assert!(log.contains("configuration not reloaded"), "{log}");
    assert!(log.contains("unknown field `bogus`"), "{log}");
    daemon.signal(libc::SIGTERM);
    assert_eq!(daemon.wait(Duration::from_secs(10)).map(|s| s.code()), Some(Some(0)));
}

#[test]
fn sigterm_drains_exits_zero_and_removes_the_pid_file() {
    let dir_pid = tempfile::tempdir().unwrap();
    let pid_file = dir_pid.path().join("ternd.pid");
    let (dir, config, addr) = setup(&format!("pid-file = \"{}\"\n", pid_file.display()));
    let mut daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    assert_eq!(std::fs::read_to_string(&pid_file).unwrap(), format!("{}\n", daemon.pid()));
    // A TCP client with queries in flight gets its answers before the exit.
    let mut stream = tcp_connect(addr);
    let mut wire = Vec::new();
    for id in 0..20 {
        wire.extend(framed(&query(id, "drain.example.com")));
    }
    std::io::Write::write_all(&mut stream, &wire).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    daemon.signal(libc::SIGTERM);
    let mut answered = 0;
    while tcp_read(&mut stream).is_some() {
        answered += 1;
    }
    assert_eq!(answered, 20);
    assert_eq!(daemon.wait(Duration::from_secs(10)).map(|s| s.code()), Some(Some(0)));
    assert!(!pid_file.exists(), "PID file removed");
    let log = daemon.log_text();
    assert!(log.contains("stopping") && log.contains("stopped"), "{log}");
}

#[test]
fn sigint_stops_too() {
    let (dir, config, addr) = setup("");
    let mut daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    daemon.signal(libc::SIGINT);
    assert_eq!(daemon.wait(Duration::from_secs(10)).map(|s| s.code()), Some(Some(0)));
}

fn status_ids(pid: i32, key: &str) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line[key.len()..].split_whitespace().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn privileges_are_dropped_to_nobody_after_binding() {
    // SAFETY (test): geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    let (dir, config, addr) = setup("user = \"nobody\"\n");
    // nobody must be able to read the zone directory.
    std::process::Command::new("chmod").arg("755").arg(dir.path()).status().unwrap();
    let daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let nobody = tern_server::privileges::resolve("nobody", None).unwrap();
    assert_eq!(status_ids(daemon.pid(), "Uid:"), vec![nobody.uid; 4]);
    assert_eq!(status_ids(daemon.pid(), "Gid:"), vec![nobody.gid; 4]);
    assert_eq!(status_ids(daemon.pid(), "Groups:"), vec![nobody.gid]);
    assert!(dig_answers("dig", addr, &["+tcp"]));
    assert!(daemon.log_text().contains("privileges dropped"));
}

/// Each thread's name and nice value (`/proc/PID/task/TID/stat`, field 19).
fn thread_nice_values(pid: i32) -> Vec<(String, i32)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    let mut threads = Vec::new();
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        // The fields after the name, which is in parentheses and may hold spaces.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let nice = rest.split_whitespace().nth(16).unwrap().parse().unwrap();
        threads.push((comm.trim().to_owned(), nice));
    }
    threads
}

#[test]
fn the_control_plane_threads_run_at_the_configured_nice_value() {
    let (dir, config, addr) = setup("control-nice = 7\n");
    let daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    assert!(dig_answers("dig", addr, &[]));
    let threads = thread_nice_values(daemon.pid());
    let base = threads.iter().find(|(name, _)| name == "ternd").unwrap().1;
    let nice_of = |prefix: &str| -> Vec<i32> {
        threads.iter().filter(|(name, _)| name.starts_with(prefix)).map(|t| t.1).collect()
    };
    let control = nice_of("ternd-ctl");
    assert!(control.len() >= 2, "{threads:?}");
    assert!(control.iter().all(|&nice| nice == (base + 7).min(19)), "{threads:?}");
    let workers = [nice_of("ternd-udp"), nice_of("ternd-tcp")].concat();
    assert!(!workers.is_empty() && workers.iter().all(|&nice| nice == base), "{threads:?}");
}

#[test]
fn daemon_detaches_and_reports_readiness() {
    let dir_pid = tempfile::tempdir().unwrap();
    let pid_file = dir_pid.path().join("ternd.pid");
    let log = dir_pid.path().join("ternd.log");
    let (_dir, config, addr) = setup(&format!(
        "pid-file = \"{}\"\n[log]\nfile = \"{}\"\n",
        pid_file.display(),
        log.display()
    ));
    let started = Instant::now();
    let (code, _, stderr) = output(ternd().arg("--daemon").arg("--config").arg(&config));
    assert_eq!(code, 0, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(udp_ask(addr, &query(1, "up.example.com")).is_some(), "daemon answers");
    // SAFETY (test): signalling the daemon we started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert!(eventually(Duration::from_secs(10), || !Path::new(&format!("/proc/{pid}")).exists()
        || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))));
    assert!(eventually(Duration::from_secs(2), || !pid_file.exists()));
    assert!(std::fs::read_to_string(&log).unwrap().contains("stopped"));
}

#[test]
fn daemon_start_failure_reaches_the_starting_command() {
    let (dir, config, _) = setup("user = \"no-such-user-tern\"\n");
    let log = dir.path().join("ternd.log");
    let (code, _, stderr) =
        output(ternd().arg("--daemon").arg("--config").arg(&config).arg("--log-file").arg(&log));
    assert_eq!(code, 1);
    assert!(stderr.contains("unknown user `no-such-user-tern`"), "{stderr}");

    let busy = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let quick = ["--daemon", "--listen", &listen, "--log-file", log.to_str().unwrap()];
    let (code, _, stderr) = output(ternd().args(quick));
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{stderr}");
}

/// Issue #53 item 3: a daemon without a log file logs to syslog; where its socket
/// cannot be reached, the start fails on the terminal instead of losing every line.
#[test]
fn a_daemon_without_syslog_or_a_log_file_does_not_start() {
    if Path::new("/dev/log").exists() {
        eprintln!("skipped: this machine has a syslog socket at /dev/log");
        return;
    }
    let (_dir, config, addr) = setup("");
    let (code, _, stderr) = output(ternd().arg("--daemon").arg("--config").arg(&config));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("/dev/log cannot be reached") && stderr.contains("--log-file"),
        "{stderr}"
    );
    assert!(udp_ask(addr, &query(1, "www.example.com")).is_none(), "nothing serves");
}

#[test]
fn json_logs_are_one_object_per_line() {
    let (dir, config, addr) = setup("[log]\nformat = \"json\"\nlevel = \"debug\"\n");
    let daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let log = daemon.log_text();
    let lines: Vec<&str> = log.lines().collect();
    assert!(!lines.is_empty());
    for line in &lines {
        assert!(line.starts_with('{') && line.ends_with('}'), "{line}");
    }
    assert!(log.contains("\"message\":\"serving\""), "{log}");
}

#[test]
fn sighup_applies_a_new_log_level() {
    let (dir, config, addr) = setup("");
    let mut daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\n[log]\nlevel = \"warn\"\n")).unwrap();
    daemon.signal(libc::SIGHUP);
    assert!(eventually(Duration::from_secs(5), || daemon.log_text().contains("reload done")));
    daemon.signal(libc::SIGHUP); // logged at info: no longer shown
    std::thread::sleep(Duration::from_millis(300));
    assert!(udp_ask(addr, &query(1, "still.example.com")).is_some());
    daemon.signal(libc::SIGTERM);
    assert_eq!(daemon.wait(Duration::from_secs(10)).map(|s| s.code()), Some(Some(0)));
    let log = daemon.log_text();
    assert_eq!(log.matches("SIGHUP: reloading").count(), 1, "{log}");
    assert!(!log.contains("stopped"), "info lines are off after the reload: {log}");
}

/// Item 8 of issue #32: `--daemon` returns the start-up result. Its only zone broken,
/// the starting command fails with the zone's error; with `strict-start`, one broken
/// zone of two is enough; otherwise the other zone is served.
#[test]
fn daemon_start_reports_zones_that_failed_to_load() {
    let (dir, config, addr) = setup("");
    let log = dir.path().join("ternd.log");
    std::fs::write(
        dir.path().join("example.com.zone"),
        "@ 300 SOA ns h 1 2 3 4 5\nns A 192.0.2.999\n",
    )
    .unwrap();
    let (code, _, stderr) =
        output(ternd().arg("--daemon").arg("--config").arg(&config).arg("--log-file").arg(&log));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("not started: no zone loaded: zone example.com. not loaded: ")
            && stderr.contains("example.com.zone:2:"),
        "{stderr}"
    );
    let good = dir.path().join("good.zone");
    std::fs::write(&good, tern_server::demo::ZONE_TEXT.replace("example.com.", "example.net."))
        .unwrap();
    let text = std::fs::read_to_string(&config).unwrap();
    let two = format!("{text}[[zone]]\nname = \"example.net\"\nfile = \"good.zone\"\n");
    std::fs::write(&config, two.replace("[server]\n", "[server]\nstrict-start = true\n")).unwrap();
    let (code, _, stderr) =
        output(ternd().arg("--daemon").arg("--config").arg(&config).arg("--log-file").arg(&log));
    assert_eq!(code, 1, "strict: {stderr}");
    let pid_file = dir.path().join("ternd.pid");
    let lenient =
        two.replace("[server]\n", &format!("[server]\npid-file = \"{}\"\n", pid_file.display()));
    std::fs::write(&config, lenient).unwrap();
    let (code, _, stderr) =
        output(ternd().arg("--daemon").arg("--config").arg(&config).arg("--log-file").arg(&log));
    assert_eq!(code, 0, "{stderr}");
    // Issue #53 item 3: the zone that failed is said on the terminal all the same.
    assert!(
        stderr.contains("warning: zone example.com. not served: ")
            && stderr.contains("example.com.zone:2:"),
        "{stderr}"
    );
    assert!(udp_ask(addr, &query(7, "www.example.net")).is_some(), "the good zone is served");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: signalling the daemon this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    assert!(eventually(Duration::from_secs(5), || !pid_file.exists()));
}

/// The messages a `Type=notify` unit's systemd receives, read from `socket` until
/// `want` arrives (or 10 s pass).
fn notified_until(socket: &std::os::unix::net::UnixDatagram, want: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 512];
    while std::time::Instant::now() < deadline {
        let Ok(n) = socket.recv(&mut buf) else { continue };
        let message = String::from_utf8_lossy(&buf[..n]).into_owned();
        let done = message.lines().any(|l| l == want);
        seen.push(message);
        if done {
            break;
        }
    }
    seen
}

/// Under systemd (`NOTIFY_SOCKET`, `WATCHDOG_USEC`): READY=1 once the zones are
/// loaded, watchdog pings while healthy, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1
/// on SIGTERM.
#[test]
fn systemd_is_told_ready_reloading_stopping_and_pinged() {
    let (dir, config, addr) = setup("");
    let notify_path = dir.path().join("notify");
    let systemd = std::os::unix::net::UnixDatagram::bind(&notify_path).unwrap();
    systemd.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let log = std::fs::File::create(dir.path().join("log")).unwrap();
    let mut child = ternd()
        .args(["--config", config.to_str().unwrap()])
        .env("NOTIFY_SOCKET", &notify_path)
        .env("WATCHDOG_USEC", "1000000")
        .stderr(log)
        .spawn()
        .unwrap();
    let ready = notified_until(&systemd, "READY=1");
    assert!(ready.iter().any(|m| m.contains("STATUS=serving 1 zones")), "{ready:?}");
    assert!(udp_ask(addr, &query(1, "example.com")).is_some(), "answers once ready");
    let pinged = notified_until(&systemd, "WATCHDOG=1");
    assert!(pinged.last().is_some_and(|m| m == "WATCHDOG=1"), "{pinged:?}");
    // SAFETY (test): signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let reload = notified_until(&systemd, "READY=1");
    assert!(reload.iter().any(|m| m.starts_with("RELOADING=1\nMONOTONIC_USEC=")), "{reload:?}");
    // SAFETY (test): as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let stopping = notified_until(&systemd, "STOPPING=1");
    assert!(stopping.last().is_some_and(|m| m == "STOPPING=1"), "{stopping:?}");
    assert!(child.wait().unwrap().success());
}

/// Issue #27 with rate limiting on (issue #31): an AXFR asked over UDP, answered NOTIMP
/// (RFC 5936 §4.2), is logged as without rate limiting.
#[test]
fn a_transfer_refused_over_udp_is_logged_with_rate_limiting_on() {
    let (dir, config, addr) = setup("[rrl]\nrate = 100\n");
    let log = dir.path().join("log");
    let _daemon = Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &log);
    let mut message = query(7, "example.com");
    let at = message.len() - 4;
    message[at..at + 2].copy_from_slice(&252u16.to_be_bytes()); // AXFR
    let answer = udp_ask(addr, &message).unwrap();
    assert_eq!(answer[3] & 0x0F, 4, "NOTIMP");
    let logged = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.lines().any(|l| l.contains("transfer refused") && l.contains("rcode=NOTIMP"))
    };
    assert!(eventually(Duration::from_secs(5), logged), "{:?}", std::fs::read_to_string(&log));
}

/// Issue #27: a refused transfer is logged with the zone, the client, the kind and why;
/// a burst is logged at most ten lines a second, the rest counted in one line.
#[test]
fn refused_transfers_are_logged_within_limits() {
    let (dir, config, addr) = setup("");
    let log = dir.path().join("log");
    let _daemon = Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &log);
    let axfr = |id: u16| {
        let mut message = query(id, "example.com");
        let at = message.len() - 4;
        message[at..at + 2].copy_from_slice(&252u16.to_be_bytes()); // AXFR
        let answer = tcp_ask(&mut tcp_connect(addr), &message).unwrap();
        assert_eq!(answer[3] & 0x0F, 5, "REFUSED");
    };
    (0..30).for_each(axfr);
    std::thread::sleep(Duration::from_millis(1100));
    axfr(99);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("transfer refused")).collect();
    let first = lines.first().unwrap();
    assert!(first.contains("zone=example.com.") && first.contains("kind=AXFR"), "{first}");
    assert!(first.contains("rcode=REFUSED") && first.contains("no acl rule"), "{first}");
    // Every request is accounted for, in lines or in counts; no second has more than
    // ten lines (each line starts with its time, to the second in its first 19 bytes).
    let suppressed: u64 = text
        .lines()
        .filter_map(|l| l.split("suppressed=").nth(1))
        .filter_map(|n| n.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(lines.len() as u64 + suppressed, 31, "{text}");
    assert!(suppressed > 0, "a burst of 30 in a second or two is cut: {text}");
    let mut per_second = std::collections::HashMap::new();
    for line in &lines {
        *per_second.entry(line.get(..19).unwrap_or("")).or_insert(0) += 1;
    }
    assert!(per_second.values().all(|&n| n <= 10), "{per_second:?}");
}

/// Issue #53 item 3: a start that fails (here: an API token too short) says its error
/// and nothing else: no zone is loaded, so no "zone loaded" line comes before it.
#[test]
fn a_failed_start_logs_no_zone_loads_before_its_error() {
    let (dir, config, _) = setup("");
    std::fs::write(dir.path().join("token"), "short\n").unwrap();
    let http = free_port();
    let text = std::fs::read_to_string(&config).unwrap();
    let extra = format!("[http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"token\"\n");
    std::fs::write(&config, format!("{text}{extra}")).unwrap();
    let (code, _, stderr) = output(ternd().arg("--config").arg(&config));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("at least 16 characters"), "{stderr}");
    assert!(!stderr.contains("zone loaded") && !stderr.contains("load failed"), "{stderr}");
}

/// SIGHUP and SIGUSR1 that come while the server still reads its configuration (an
/// operator's reload, logrotate) do not end it: they are blocked before the file is
/// read, and taken once it serves (issue #53; their default action is to terminate).
#[test]
fn signals_while_the_configuration_is_read_do_not_end_the_server() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("z.zone"),
        "@ 300 SOA ns hostmaster 1 3600 600 86400 60\n@ 300 NS ns\nns 300 A 192.0.2.1\n",
    )
    .unwrap();
    let port = free_port();
    let mut text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n"
    );
    for n in 0..5000 {
        text.push_str(&format!("[[zone]]\nname = \"z{n}.test\"\nfile = \"z.zone\"\n"));
    }
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let log = std::fs::File::create(dir.path().join("log")).unwrap();
    let mut child = ternd()
        .args(["--config", config.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // From exec to the first lines of main nothing can block a signal: let those pass
    // (a few milliseconds), then signal while the 5,000 zones' configuration is read.
    std::thread::sleep(Duration::from_millis(30));
    let until = Instant::now() + Duration::from_millis(400);
    while Instant::now() < until {
        for signal in [libc::SIGHUP, libc::SIGUSR1] {
            // SAFETY (test): signalling our own child.
            unsafe { libc::kill(pid, signal) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let addr = loopback(port);
    let answered =
        eventually(Duration::from_secs(30), || !dig_short(addr, "z4999.test", "SOA").is_empty());
    let status = child.try_wait().unwrap();
    let text = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
    assert!(status.is_none(), "ternd ended ({status:?}): {text}");
    assert!(answered, "{text}");
    child.kill().unwrap();
    let _ = child.wait();
}
