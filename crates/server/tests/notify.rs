//! NOTIFY out to the zone's own name servers (`notify-ns`): after a change, the name
//! servers of the apex NS RRset but the SOA's primary are told, at the addresses the
//! zone holds for them, port 53.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use common::*;
use tern_wire::message::MessageReader;
use tern_wire::Opcode;

const ZONE: &str =
    "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster SERIAL 7200 3600 1209600 300\n\
                    @ NS ns1\n@ NS ns2\nns1 A 127.0.0.76\nns2 A 127.0.0.77\n";

/// A name server's port 53 on a loopback address of its own (needs the right to bind
/// port 53: root or CAP_NET_BIND_SERVICE).
fn name_server(ip: [u8; 4]) -> Option<UdpSocket> {
    let socket = UdpSocket::bind(SocketAddr::from((ip, 53))).ok()?;
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    Some(socket)
}

#[test]
fn a_change_notifies_the_zones_name_servers_but_the_primary() {
    let (Some(ns1), Some(ns2)) = (name_server([127, 0, 0, 76]), name_server([127, 0, 0, 77]))
    else {
        eprintln!("skipped: port 53 cannot be bound here (not root)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("example.com.zone");
    std::fs::write(&file, ZONE.replace("SERIAL", "1")).unwrap();
    let port = free_port();
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[[zone]]\nname = \"example.com\"\nfile = \"{}\"\nnotify-ns = true\n",
        file.display()
    );
    std::fs::write(dir.path().join("ternd.toml"), config).unwrap();
    let conf = dir.path().join("ternd.toml");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let daemon =
        Daemon::spawn(&["--config", conf.to_str().unwrap()], addr, &dir.path().join("log"));
    std::fs::write(&file, ZONE.replace("SERIAL", "2")).unwrap();
    daemon.signal(libc::SIGHUP);
    let mut buf = [0u8; 512];
    let (len, from) = ns2.recv_from(&mut buf).expect("ns2 was not notified");
    let reader = MessageReader::new(&buf[..len]).unwrap();
    assert_eq!(reader.header().flags.opcode(), Opcode::NOTIFY);
    // Acknowledged, so it is not sent again.
    buf[2] |= 0x80;
    ns2.send_to(&buf[..len], from).unwrap();
    ns1.set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
    assert!(ns1.recv_from(&mut buf).is_err(), "the SOA's primary (ns1) was notified");
    let acknowledged = eventually(Duration::from_secs(5), || {
        daemon.log_text().contains("NOTIFY acknowledged zone=example.com. remote=ns2.example.com.")
    });
    assert!(acknowledged, "{}", daemon.log_text());
}

/// Issue #53 item 9: a remote's `via` is the address NOTIFY, SOA queries and transfer
/// requests to it are sent from. The primary allows transfers from 127.0.0.9 alone; the
/// secondary's primary remote has `via = "127.0.0.9"` and gets the zone, and the
/// primary's NOTIFY to a remote with the same `via` comes from that address.
#[test]
fn via_is_the_source_of_notify_soa_queries_and_transfers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("example.com.zone");
    std::fs::write(&file, ZONE.replace("SERIAL", "1")).unwrap();
    let told = UdpSocket::bind("127.0.0.1:0").unwrap();
    told.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let primary = started(
        dir.path(),
        "primary",
        &format!(
            "[[acl]]\nid = \"nine\"\naddress = \"127.0.0.9\"\naction = \"transfer\"\n\
             [[remote]]\nid = \"told\"\naddress = \"{}\"\nvia = \"127.0.0.9\"\n\
             [[zone]]\nname = \"example.com\"\nfile = \"{}\"\nacl = \"nine\"\nnotify = \"told\"\n",
            told.local_addr().unwrap(),
            file.display()
        ),
    );
    let secondary = started(
        dir.path(),
        "secondary",
        &format!(
            "[[remote]]\nid = \"up\"\naddress = \"{}\"\nvia = [\"127.0.0.9\", \"::1\"]\n\
             [[zone]]\nname = \"example.com\"\nprimary = \"up\"\n",
            primary.addr
        ),
    );
    let secondary_addr = secondary.addr;
    let served = eventually(Duration::from_secs(10), || {
        dig_short(secondary_addr, "example.com", "SOA").contains(" 1 7200 ")
    });
    assert!(served, "no transfer from 127.0.0.9: {}", secondary.log_text());

    std::fs::write(&file, ZONE.replace("SERIAL", "2")).unwrap();
    primary.signal(libc::SIGHUP);
    let mut buf = [0u8; 512];
    let (len, from) = told.recv_from(&mut buf).expect("the remote was not notified");
    assert_eq!(from.ip(), std::net::IpAddr::from([127, 0, 0, 9]), "NOTIFY sent from {from}");
    let reader = MessageReader::new(&buf[..len]).unwrap();
    assert_eq!(reader.header().flags.opcode(), Opcode::NOTIFY);
}

/// A `ternd` named `name` in `dir` (its configuration, log and storage named after it)
/// serving what `tables` configures, on a port of its own.
fn started(dir: &std::path::Path, name: &str, tables: &str) -> Daemon {
    let port = free_port();
    let config = dir.join(format!("{name}.toml"));
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"{name}-storage\"\n{tables}"
    );
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join(format!("{name}.log")))
}
