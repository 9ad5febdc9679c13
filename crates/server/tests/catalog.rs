//! Catalog zones (RFC 9432), Tern to Tern: a producer lists its zones, a consumer serves
//! them as secondaries; zones added to and removed from the producer (with `ternctl`)
//! come and go on the consumer, which keeps serving them across a restart. Knot DNS and
//! BIND on either side are in `tests/interop` (scenario `catalogs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

fn member_zone(name: &str) -> String {
    format!("$ORIGIN {name}.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 60\n@ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\n")
}

/// The rcode and serial `addr` answers for `zone`'s SOA.
fn soa(addr: SocketAddr, zone: &str) -> (String, Option<u32>) {
    dig_soa(addr, zone)
}

fn served(addr: SocketAddr, zone: &str) -> bool {
    soa(addr, zone).0 == "NOERROR"
}

fn producer(dir: &Path, port: u16, consumer: SocketAddr) -> Daemon {
    for zone in ["m1.example", "m2.example", "m3.example"] {
        std::fs::write(dir.join(format!("{zone}.zone")), member_zone(zone)).unwrap();
    }
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [control]\nsocket = \"ctl.sock\"\n\
         [[remote]]\nid = \"consumer\"\naddress = \"{consumer}\"\n\
         [[acl]]\nid = \"lo\"\naddress = \"127.0.0.0/8\"\naction = \"transfer\"\n\
         [[template]]\nid = \"default\"\nacl = \"lo\"\ncatalog = \"catalog.example\"\n\
         [[zone]]\nname = \"catalog.example\"\ncatalog-role = \"producer\"\nnotify = \"consumer\"\n\
         [[zone]]\nname = \"m1.example\"\nfile = \"m1.example.zone\"\n\
         [[zone]]\nname = \"m2.example\"\nfile = \"m2.example.zone\"\ncatalog-group = \"blue\"\n"
    );
    let config = dir.join("producer.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join("producer.log"))
}

fn consumer(dir: &Path, port: u16, producer: SocketAddr) -> Daemon {
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [[remote]]\nid = \"producer\"\naddress = \"{producer}\"\n\
         [[template]]\nid = \"blue\"\nprimary = \"producer\"\nrefresh-min = \"2s\"\n\
         [[zone]]\nname = \"catalog.example\"\nprimary = \"producer\"\ncatalog-role = \"consumer\"\n\
         catalog-template = [\"default-members\", \"blue\"]\n\
         [[template]]\nid = \"default-members\"\n"
    );
    let config = dir.join("consumer.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join("consumer.log"))
}

fn ternctl(socket: &Path, args: &[&str]) -> String {
    let out = common::ternctl().arg("--socket").arg(socket).args(args).output().unwrap();
    assert!(out.status.success(), "ternctl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_consumer_serves_what_the_producer_lists() {
    let (p_dir, c_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (p_port, c_port) = (free_port(), free_port());
    let c_addr = SocketAddr::from(([127, 0, 0, 1], c_port));
    let p = producer(p_dir.path(), p_port, c_addr);
    let c = consumer(c_dir.path(), c_port, p.addr);
    let wait = |what: &str, check: &dyn Fn() -> bool| {
        assert!(eventually(Duration::from_secs(20), check), "{what}\nconsumer:\n{}", c.log_text());
    };
    wait("members served", &|| served(c_addr, "m1.example") && served(c_addr, "m2.example"));
    assert_eq!(soa(c_addr, "m3.example").0, "REFUSED");
    let log = c.log_text();
    assert!(log.contains("catalog member added"), "{log}");
    // The produced catalog reads as RFC 9432 says.
    let catalog = Command::new("dig")
        .args(["+short", "-p", &p_port.to_string(), "@127.0.0.1", "version.catalog.example", "TXT"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&catalog.stdout), "\"2\"\n");
    // A zone added on the producer appears on the consumer; one removed goes.
    let socket = p_dir.path().join("ctl.sock");
    let m3 = p_dir.path().join("m3.example.zone");
    ternctl(&socket, &["zone-add", "m3.example", "--file", m3.to_str().unwrap()]);
    wait("m3 added", &|| served(c_addr, "m3.example"));
    let kept = c_dir.path().join("storage/m3.example.zone");
    wait("m3 kept", &|| kept.exists());
    ternctl(&socket, &["zone-remove", "m3.example"]);
    wait("m3 removed", &|| soa(c_addr, "m3.example").0 == "REFUSED");
    wait("m3's copy removed", &|| !kept.exists());
    // A restart serves the members at once from their kept copies.
    drop(c);
    drop(p);
    let c = consumer(c_dir.path(), c_port, SocketAddr::from(([127, 0, 0, 1], free_port())));
    let wait_again = |check: &dyn Fn() -> bool| eventually(Duration::from_secs(10), check);
    assert!(
        wait_again(&|| served(c_addr, "m1.example") && served(c_addr, "m2.example")),
        "{}",
        c.log_text()
    );
}
