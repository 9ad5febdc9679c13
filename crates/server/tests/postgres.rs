//! Zones read from PostgreSQL (`[[zone]] database`, issue #54 item 2) against a real
//! PostgreSQL: a throw-away cluster per test (initdb, then `postgres` on a free loopback
//! port; as the `postgres` user when the tests run as root, since initdb refuses root),
//! PowerDNS's tables, and the triggers of `docs/postgres/notify.sql`. The zone is served
//! from its rows; inserts, updates and deletes are seen within 100 ms; the database
//! stopped and started again while ternd keeps answering; a malformed row reported with
//! its table and id.
//!
//! PostgreSQL's programs are found on the PATH or in `/usr/lib/postgresql/*/bin`
//! (Debian's `postgresql`, which scripts/test-all.sh installs).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// PowerDNS's generic PostgreSQL schema's two tables, as far as Tern reads them (with
/// the columns it ignores, so that a row is written as PowerDNS writes it).
const TABLES: &str = "
CREATE TABLE domains (
  id SERIAL PRIMARY KEY, name VARCHAR(255) NOT NULL UNIQUE, master VARCHAR(128),
  last_check INT, type TEXT NOT NULL DEFAULT 'NATIVE', notified_serial BIGINT,
  account VARCHAR(40), options TEXT, catalog TEXT);
CREATE TABLE records (
  id BIGSERIAL PRIMARY KEY, domain_id INT REFERENCES domains(id) ON DELETE CASCADE,
  name VARCHAR(255), type VARCHAR(10), content VARCHAR(65535), ttl INT, prio INT,
  disabled BOOL DEFAULT 'f', ordername VARCHAR(255), auth BOOL DEFAULT 't');
CREATE INDEX records_domain_id ON records(domain_id);
";

/// The zone `pg.test` as PowerDNS keeps it: names without their final dot, MX's
/// preference in `prio`, an empty non-terminal (no type) and a disabled row.
const ZONE: &str = "
INSERT INTO domains (name) VALUES ('pg.test');
INSERT INTO records (domain_id, name, type, content, ttl, prio, disabled) VALUES
  (1, 'pg.test', 'SOA', 'ns.pg.test hostmaster.pg.test 1 3600 600 86400 60', 3600, NULL, false),
  (1, 'pg.test', 'NS', 'ns.pg.test', 3600, NULL, false),
  (1, 'ns.pg.test', 'A', '192.0.2.53', 3600, NULL, false),
  (1, 'www.pg.test', 'A', '192.0.2.1', 300, NULL, false),
  (1, 'pg.test', 'MX', 'mail.pg.test', 300, 10, false),
  (1, 'off.pg.test', 'A', '192.0.2.99', 300, NULL, true),
  (1, 'b.a.pg.test', 'TXT', '\"deep\"', 300, NULL, false);
INSERT INTO records (domain_id, name, type, content, auth) VALUES (1, 'a.pg.test', NULL, NULL, true);
";

/// A throw-away PostgreSQL cluster, stopped and removed when dropped.
struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    /// Who runs it (`None`: this process's user).
    user: Option<&'static str>,
    dir: tempfile::TempDir,
}

impl Postgres {
    /// initdb and start a cluster on a free loopback port.
    fn start() -> Postgres {
        let bin = postgres_bin();
        let dir = tempfile::tempdir().unwrap();
        let root = unsafe { libc::geteuid() } == 0; // SAFETY (test): a plain getter.
        let user = root.then_some("postgres");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if let Some(user) = user {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            run(Command::new("chown").arg(user).arg(&data));
        }
        let postgres = Postgres { bin, data, port: free_port(), user, dir };
        let data = postgres.data.to_str().unwrap().to_owned();
        postgres.run_pg("initdb", &["-D", &data, "-A", "trust", "-U", "postgres", "-E", "UTF8"]);
        postgres.ctl_start();
        postgres
    }

    /// `pg_ctl start`, waiting until it takes connections.
    fn ctl_start(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off",
            self.port
        );
        let log = self.data.join("server.log");
        let data = self.data.to_str().unwrap();
        self.run_pg(
            "pg_ctl",
            &["-D", data, "-o", &options, "-l", log.to_str().unwrap(), "-w", "start"],
        );
    }

    /// `pg_ctl stop -m fast`: connections are cut at once.
    fn ctl_stop(&self) {
        self.run_pg("pg_ctl", &["-D", self.data.to_str().unwrap(), "-m", "fast", "-w", "stop"]);
    }

    fn run_pg(&self, program: &str, args: &[&str]) {
        run(self.pg_command(program).args(args).current_dir(self.dir.path()));
    }

    /// PostgreSQL's `program`, run by the cluster's user.
    fn pg_command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    fn url(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname=postgres", self.port)
    }

    /// Runs `sql` (statements separated by `;`) and returns when it is committed.
    fn sql(&self, sql: &str) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let (client, connection) =
                tokio_postgres::connect(&self.url(), tokio_postgres::NoTls).await.unwrap();
            let driver = tokio::spawn(connection);
            client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
            drop(client);
            let _ = driver.await;
        });
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data.to_str().unwrap().to_owned();
        let stop = ["-D", &data, "-m", "immediate", "stop"];
        let _ = self.pg_command("pg_ctl").args(stop).output();
    }
}

/// The directory of initdb, pg_ctl and postgres.
fn postgres_bin() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    let debian = || {
        let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        found.sort();
        found.pop()
    };
    on_path.or_else(debian).expect("no PostgreSQL (initdb): scripts/test-all.sh installs it")
}

fn run(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A database with PowerDNS's tables, the triggers and `pg.test`.
fn database() -> Postgres {
    let postgres = Postgres::start();
    let triggers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/postgres/notify.sql");
    postgres.sql(TABLES);
    postgres.sql(&std::fs::read_to_string(triggers).unwrap());
    postgres.sql(ZONE);
    postgres
}

struct Served {
    addr: SocketAddr,
    daemon: Daemon,
    dir: tempfile::TempDir,
    /// ternd's starts so far (each writes a log of its own).
    starts: usize,
}

impl Served {
    /// `ternctl COMMAND pg.test`: its exit success and its output.
    fn ctl(&self, command: &str) -> (bool, String) {
        let socket = self.dir.path().join("ternd.sock");
        let out = ternctl().arg("--socket").arg(socket).args([command, "pg.test"]).output();
        let out = out.unwrap();
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text.into_owned())
    }

    /// Kills ternd (SIGKILL: nothing is written on the way out) and waits until it is gone.
    fn kill(&mut self) {
        self.daemon.signal(libc::SIGKILL);
        assert!(self.daemon.wait(Duration::from_secs(5)).is_some(), "ternd did not die");
    }

    /// Starts ternd again on the same configuration and storage, once it is following.
    fn start(&mut self) {
        self.starts += 1;
        self.daemon = spawn(self.dir.path(), self.addr, self.starts);
        assert!(self.following(1, Duration::from_secs(10)), "{}", self.daemon.log_text());
    }

    /// Waits until ternd follows the database for the `times`th time.
    fn following(&self, times: usize, limit: Duration) -> bool {
        eventually(limit, || {
            self.daemon.log_text().matches("following the database's changes").count() >= times
        })
    }
}

fn serve(postgres: &Postgres, database_extra: &str) -> Served {
    serve_with(postgres, database_extra, "")
}

/// [`serve`] with `tail` after the zone's lines (more of its settings, more tables).
fn serve_with(postgres: &Postgres, database_extra: &str, tail: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ternd.sock\"\n\
         [[acl]]\nid = \"local\"\naddress = \"127.0.0.0/8\"\naction = [\"transfer\", \"update\"]\n\
         [[database]]\nid = \"pdns\"\nurl = \"{}\"\n{database_extra}\
         [[zone]]\nname = \"pg.test\"\ndatabase = \"pdns\"\nacl = [\"local\"]\n{tail}",
        postgres.url()
    );
    std::fs::write(dir.path().join("ternd.toml"), text).unwrap();
    let daemon = spawn(dir.path(), addr, 1);
    let served = Served { addr, daemon, dir, starts: 1 };
    assert!(served.following(1, Duration::from_secs(10)), "{}", served.daemon.log_text());
    served
}

/// ternd on `dir`'s configuration, its `start`th start.
fn spawn(dir: &Path, addr: SocketAddr, start: usize) -> Daemon {
    let file = dir.join("ternd.toml");
    let log = dir.join(if start == 1 { "log".to_owned() } else { format!("log.{start}") });
    Daemon::spawn(&["--config", file.to_str().unwrap()], addr, &log)
}

/// An IXFR of `pg.test` from `serial`, asked with dig: its records, split in fields.
fn ixfr(addr: SocketAddr, serial: u32) -> Vec<Vec<String>> {
    let out = Command::new("dig")
        .args(["+tries=1", "+time=2", "-p", &addr.port().to_string(), "@127.0.0.1"])
        .args(["pg.test".to_owned(), format!("IXFR={serial}")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let fields = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    text.lines().filter(|l| !l.starts_with(';') && !l.trim().is_empty()).map(fields).collect()
}

/// The serials of an IXFR's SOA records, in order.
fn soa_serials(records: &[Vec<String>]) -> Vec<&str> {
    let soa = |r: &&Vec<String>| r.get(3).is_some_and(|t| t == "SOA");
    records.iter().filter(soa).map(|r| r[6].as_str()).collect()
}

/// True when `records` hold `name` A `address` (TTL `ttl`).
fn holds(records: &[Vec<String>], name: &str, ttl: &str, address: &str) -> bool {
    records.iter().any(|r| r == &[name, ttl, "IN", "A", address])
}

/// Waits until a first change is served (serial 2), so that the changes timed after it
/// do not wait for connections to be made.
fn warm_up(postgres: &Postgres, served: &Served) {
    postgres.sql("UPDATE records SET ttl = 301 WHERE name = 'www.pg.test'");
    let changed = || dig_soa(served.addr, "pg.test").1 == Some(2);
    assert!(eventually(Duration::from_secs(5), changed), "{}", served.daemon.log_text());
}

/// The A records of `name` at `addr`, asked over UDP and read with Tern's own message
/// reader (quicker than starting dig, for timing).
fn addresses(addr: SocketAddr, name: &str) -> Vec<String> {
    use tern_wire::message::{MessageReader, Section};
    let Some(answer) = udp_ask(addr, &query(9, name)) else { return Vec::new() };
    let mut reader = MessageReader::new(&answer).unwrap();
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    let mut found = Vec::new();
    while let Some(rr) = reader.record(&mut scratch).unwrap() {
        if rr.section == Section::Answer && rr.rtype == tern_wire::Rtype::A {
            found.push(tern_wire::rdata::to_text(rr.rtype, rr.rdata));
        }
    }
    found
}

/// Runs `sql` and measures how long until `seen` holds (polled every millisecond).
fn time_until(postgres: &Postgres, sql: &str, mut seen: impl FnMut() -> bool) -> Duration {
    postgres.sql(sql);
    let committed = Instant::now();
    while !seen() {
        assert!(committed.elapsed() < Duration::from_secs(5), "{sql}: not seen in 5 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    committed.elapsed()
}

#[test]
fn a_database_zone_is_served_and_follows_its_rows_within_100_ms() {
    let postgres = database();
    let served = serve(&postgres, "");
    let addr = served.addr;
    assert_eq!(dig_soa(addr, "pg.test"), ("NOERROR".into(), Some(1)));
    assert_eq!(dig_short(addr, "www.pg.test", "A").trim(), "192.0.2.1");
    assert_eq!(dig_short(addr, "pg.test", "MX").trim(), "10 mail.pg.test.");
    assert_eq!(dig_short(addr, "b.a.pg.test", "TXT").trim(), "\"deep\"");
    assert_eq!(dig_short(addr, "off.pg.test", "A").trim(), "", "disabled rows are not served");
    warm_up(&postgres, &served);
    // Read once at start (its first load waited for the follower to listen), once for
    // the change.
    let log = served.daemon.log_text();
    let loads = log.lines().filter(|l| l.contains("zone loaded") && l.contains("pg.test"));
    assert_eq!(loads.count(), 2, "{log}");
    let insert = "INSERT INTO records (domain_id, name, type, content, ttl) \
                  VALUES (1, 'new.pg.test', 'A', '192.0.2.7', 60)";
    let update = "UPDATE records SET content = '192.0.2.8' WHERE name = 'www.pg.test'";
    let delete = "DELETE FROM records WHERE name = 'new.pg.test'";
    let took = [
        time_until(&postgres, insert, || addresses(addr, "new.pg.test") == ["192.0.2.7"]),
        time_until(&postgres, update, || addresses(addr, "www.pg.test") == ["192.0.2.8"]),
        time_until(&postgres, delete, || addresses(addr, "new.pg.test").is_empty()),
    ];
    eprintln!("insert, update, delete seen after {took:?}");
    for (what, took) in ["insert", "update", "delete"].iter().zip(&took) {
        assert!(*took < Duration::from_millis(100), "{what} seen after {took:?}");
    }
    // The database's serial did not change: each change raised it by `increment`, and an
    // IXFR from 1 holds them.
    assert_eq!(dig_soa(addr, "pg.test").1, Some(5));
    let records = ixfr(addr, 1);
    let serials = soa_serials(&records);
    assert_eq!(serials, ["5", "1", "5", "5"], "one condensed difference from 1 to 5: {records:?}");
    let www = |ttl: &str, address: &str| holds(&records, "www.pg.test.", ttl, address);
    assert!(www("300", "192.0.2.1") && www("301", "192.0.2.8"), "{records:?}");
    // The database is the only source: a transaction is refused.
    let (ok, text) = served.ctl("zone-begin");
    assert!(!ok && text.contains("read from its database"), "{text}");
}

#[test]
fn the_zone_keeps_answering_while_the_database_is_down_and_follows_it_again() {
    let postgres = database();
    let served = serve(&postgres, "");
    let addr = served.addr;
    postgres.ctl_stop();
    assert!(eventually(Duration::from_secs(5), || served
        .daemon
        .log_text()
        .contains("database connection lost")));
    // A reload while it is down fails and keeps the zone.
    let (ok, text) = served.ctl("zone-reload");
    assert!(!ok && text.contains("database pdns"), "{text}");
    assert_eq!(addresses(addr, "www.pg.test"), ["192.0.2.1"]);
    assert_eq!(dig_soa(addr, "pg.test"), ("NOERROR".into(), Some(1)));
    postgres.ctl_start();
    assert!(served.following(2, Duration::from_secs(10)), "{}", served.daemon.log_text());
    let insert = "INSERT INTO records (domain_id, name, type, content) \
                  VALUES (1, 'back.pg.test', 'A', '192.0.2.77')";
    let took = time_until(&postgres, insert, || addresses(addr, "back.pg.test") == ["192.0.2.77"]);
    assert!(took < Duration::from_millis(100), "seen after {took:?}");
}

#[test]
fn a_malformed_row_is_reported_with_its_table_and_id() {
    let postgres = database();
    // Row 9 does not read; row 10, in the same transaction, does.
    let insert = "INSERT INTO records (id, domain_id, name, type, content) VALUES \
                  (9, 1, 'bad.pg.test', 'A', 'not-an-address'), \
                  (10, 1, 'good.pg.test', 'A', '192.0.2.10')";
    // With on-bad-row = "refuse", the change is refused and the zone keeps what it
    // served; the error names the row.
    let strict = serve(&postgres, "on-bad-row = \"refuse\"\n");
    postgres.sql(insert);
    let refused = || strict.daemon.log_text().contains("table records, id 9");
    assert!(eventually(Duration::from_secs(5), refused), "{}", strict.daemon.log_text());
    assert_eq!(addresses(strict.addr, "good.pg.test"), Vec::<String>::new());
    assert_eq!(dig_soa(strict.addr, "pg.test"), ("NOERROR".into(), Some(1)));
    let (ok, text) = strict.ctl("zone-reload");
    assert!(!ok && text.contains("table records, id 9"), "{text}");
    drop(strict);
    // By default the row is left out, reported with its table and id, and the rest is
    // served.
    let lenient = serve(&postgres, "");
    assert_eq!(addresses(lenient.addr, "good.pg.test"), ["192.0.2.10"]);
    let log = lenient.daemon.log_text();
    let line = log.lines().find(|l| l.contains("row does not read"));
    let line = line.unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("records") && line.contains("id=9"), "{line}");
}

#[test]
fn a_restart_keeps_the_serial_and_the_ixfr_history() {
    let postgres = database();
    let mut served = serve(&postgres, "");
    warm_up(&postgres, &served); // serial 2
    let insert = "INSERT INTO records (domain_id, name, type, content, ttl) \
                  VALUES (1, 'new.pg.test', 'A', '192.0.2.7', 60)";
    time_until(&postgres, insert, || addresses(served.addr, "new.pg.test") == ["192.0.2.7"]);
    assert_eq!(dig_soa(served.addr, "pg.test").1, Some(3));
    let copy = served.dir.path().join("storage/pg.test.zone");
    assert!(eventually(Duration::from_secs(5), || copy.is_file()), "no kept copy");
    // Killed and started again, the database unchanged (its SOA row still says 1): the
    // serial and the history are those served before.
    served.kill();
    served.start();
    assert_eq!(dig_soa(served.addr, "pg.test").1, Some(3), "{}", served.daemon.log_text());
    let records = ixfr(served.addr, 1);
    assert_eq!(soa_serials(&records), ["3", "1", "3", "3"], "{records:?}");
    assert!(holds(&records, "new.pg.test.", "60", "192.0.2.7"), "{records:?}");
    // A change made while ternd is down is committed at the start under a higher serial,
    // and secondaries get it by IXFR.
    served.kill();
    postgres.sql("DELETE FROM records WHERE name = 'new.pg.test'");
    served.start();
    assert_eq!(dig_soa(served.addr, "pg.test").1, Some(4), "{}", served.daemon.log_text());
    assert_eq!(addresses(served.addr, "new.pg.test"), Vec::<String>::new());
    let records = ixfr(served.addr, 3);
    assert_eq!(soa_serials(&records), ["4", "3", "4", "4"], "{records:?}");
    assert!(holds(&records, "new.pg.test.", "60", "192.0.2.7"), "removed: {records:?}");
    assert_eq!(soa_serials(&ixfr(served.addr, 1)), ["4", "1", "4", "4"]);
    // The copy lost: the version last served is not known, so the serial rises above
    // every serial the journal shows and an IXFR from before gets the whole zone.
    served.kill();
    std::fs::remove_file(&copy).unwrap();
    served.start();
    assert_eq!(dig_soa(served.addr, "pg.test").1, Some(5), "{}", served.daemon.log_text());
    let records = ixfr(served.addr, 4);
    assert_eq!(soa_serials(&records), ["5", "5"], "the whole zone: {records:?}");
    assert!(holds(&records, "www.pg.test.", "301", "192.0.2.1"), "{records:?}");
    assert!(eventually(Duration::from_secs(5), || copy.is_file()), "the copy is written again");
}

/// Knot DNS (`knotd`) as a secondary of `pg.test` from `primary`, on `port`: notified
/// without a key from loopback; its log in `dir/knot.log`. Killed when dropped.
struct Knot {
    child: std::process::Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Knot {
    fn start(dir: &Path, port: u16, primary: SocketAddr) -> Knot {
        let work = dir.display();
        let conf = format!(
            "server:\n  rundir: {work}\n  listen: 127.0.0.1@{port}\n  udp-workers: 1\n  \
             tcp-workers: 1\n  background-workers: 1\nlog:\n  - target: stderr\n    any: info\n\
             database:\n  storage: {work}\nremote:\n  - id: tern\n    address: {}@{}\n\
             acl:\n  - id: notify\n    address: 127.0.0.0/8\n    action: notify\n\
             template:\n  - id: default\n    storage: {work}\n    semantic-checks: off\n\
             zone:\n  - domain: pg.test\n    master: tern\n    acl: notify\n    \
             file: {work}/pg.test.zone\n",
            primary.ip(),
            primary.port()
        );
        let path = dir.join("knot.conf");
        std::fs::write(&path, conf).unwrap();
        let log = dir.join("knot.log");
        let child = Command::new("knotd")
            .arg("-c")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("no knotd (Knot DNS): scripts/test-all.sh installs it");
        Knot { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), log }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Knot's log lines of finished incoming transfers of `kind` (`AXFR`, `IXFR`).
    fn transfers(&self, kind: &str) -> usize {
        let text = self.log_text();
        let incoming = format!("{kind}, incoming");
        text.lines().filter(|l| l.contains(&incoming) && l.contains("finished")).count()
    }
}

impl Drop for Knot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_knot_secondary_follows_the_database_by_ixfr() {
    let postgres = database();
    let knot_port = free_port();
    let tail = format!(
        "notify = [\"knot\"]\n[[remote]]\nid = \"knot\"\naddress = \"127.0.0.1:{knot_port}\"\n"
    );
    let served = serve_with(&postgres, "", &tail);
    let knot_dir = tempfile::tempdir().unwrap();
    let knot = Knot::start(knot_dir.path(), knot_port, served.addr);
    let first = || dig_soa(knot.addr, "pg.test").1 == Some(1);
    assert!(eventually(Duration::from_secs(10), first), "{}", knot.log_text());
    assert_eq!(knot.transfers("AXFR"), 1, "{}", knot.log_text());
    let changes = [
        (
            "INSERT INTO records (domain_id, name, type, content, ttl) \
             VALUES (1, 'new.pg.test', 'A', '192.0.2.7', 60)",
            ("new.pg.test", vec!["192.0.2.7"]),
        ),
        (
            "UPDATE records SET content = '192.0.2.8' WHERE name = 'www.pg.test'",
            ("www.pg.test", vec!["192.0.2.8"]),
        ),
        ("DELETE FROM records WHERE name = 'new.pg.test'", ("new.pg.test", vec![])),
    ];
    for (n, (sql, (name, want))) in changes.into_iter().enumerate() {
        postgres.sql(sql);
        let serial = u32::try_from(n).unwrap() + 2;
        let seen = || dig_soa(knot.addr, "pg.test").1 == Some(serial);
        assert!(eventually(Duration::from_secs(10), seen), "{sql}: {}", knot.log_text());
        assert_eq!(addresses(knot.addr, name), want, "{sql}");
        assert_eq!(knot.transfers("IXFR"), n + 1, "{sql}: by IXFR: {}", knot.log_text());
    }
    assert_eq!(knot.transfers("AXFR"), 1, "no whole transfer after the first: {}", knot.log_text());
}
