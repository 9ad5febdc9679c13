//! The real `ternd` as the secondary of a primary that serves over TLS only (RFC 9103),
//! played here by rustls on a loopback port: a wrong key pin is refused, said in the
//! log, and nothing is served; the right pin, given by a reload, brings the zone over
//! TLS. A `[[remote]]` with `tls = true` and no way to check the primary is a
//! configuration error that says what to add. (BIND 9.18 as the primary:
//! tests/interop, scenario `xot-in`.)
//!
//! The primary stops when dropped; every loop is bounded in count and time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::*;
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Rtype};

fn testdata(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tls/testdata").join(file)
}

fn pin(file: &str) -> String {
    std::fs::read_to_string(testdata(file)).unwrap().trim().to_owned()
}

/// A primary of `example.` (serial 7) over TLS, ALPN "dot", with ns1.example's
/// certificate, serving one connection at a time until dropped.
struct TlsPrimary {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handshakes: Arc<AtomicU32>,
    thread: Option<JoinHandle<()>>,
}

impl TlsPrimary {
    fn start() -> TlsPrimary {
        let chain = tern_server::tls::read_certificates(&testdata("ns1.pem")).unwrap();
        let key = tern_server::tls::read_key(&testdata("ns1.key")).unwrap();
        let mut config = ServerConfig::builder_with_provider(tern_server::tls::provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"dot".to_vec()];
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, handshakes) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU32::new(0)));
        let (stop2, handshakes2) = (Arc::clone(&stop), Arc::clone(&handshakes));
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                let Ok((tcp, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                tcp.set_nonblocking(false).unwrap();
                tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut tls =
                    StreamOwned::new(ServerConnection::new(Arc::clone(&config)).unwrap(), tcp);
                serve(&mut tls, &handshakes2);
            }
        });
        TlsPrimary { addr, stop, handshakes, thread: Some(thread) }
    }
}

impl Drop for TlsPrimary {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Answers the requests of one connection: SOA (one message) or AXFR (two).
fn serve(tls: &mut StreamOwned<ServerConnection, std::net::TcpStream>, handshakes: &AtomicU32) {
    for _ in 0..4 {
        let mut prefix = [0u8; 2];
        if tls.read_exact(&mut prefix).is_err() {
            return; // the handshake failed, or the client is done
        }
        if tls.conn.alpn_protocol() == Some(b"dot") {
            handshakes.fetch_add(1, Ordering::SeqCst);
        }
        let mut request = vec![0u8; usize::from(u16::from_be_bytes(prefix))];
        if tls.read_exact(&mut request).is_err() {
            return;
        }
        for answer in answers(&request) {
            let mut framed = u16::try_from(answer.len()).unwrap().to_be_bytes().to_vec();
            framed.extend_from_slice(&answer);
            if tls.write_all(&framed).is_err() {
                return;
            }
        }
    }
}

fn answers(request: &[u8]) -> Vec<Vec<u8>> {
    let mut reader = MessageReader::new(request).unwrap();
    let id = reader.header().id;
    let qtype = reader.question().unwrap().unwrap().qtype;
    let soa = "example. 300 SOA ns1.example. hostmaster.example. 7 3600 600 86400 300";
    match qtype {
        Rtype::SOA => vec![message(id, qtype, &[soa])],
        _ => vec![
            message(
                id,
                qtype,
                &[soa, "example. 300 NS ns1.example.", "ns1.example. 300 A 192.0.2.1"],
            ),
            message(id, qtype, &["www.example. 300 A 192.0.2.80", soa]),
        ],
    }
}

fn message(id: u16, qtype: Rtype, records: &[&str]) -> Vec<u8> {
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
    w.set_id(id);
    let mut flags = Flags(0);
    flags.set(Flags::QR, true);
    flags.set(Flags::AA, true);
    w.set_flags(flags);
    w.push_question(&"example.".parse::<Name>().unwrap(), qtype, Class::IN).unwrap();
    for record in records {
        let mut parts = record.splitn(4, ' ');
        let owner: Name = parts.next().unwrap().parse().unwrap();
        let ttl: u32 = parts.next().unwrap().parse().unwrap();
        let rtype = Rtype::from_mnemonic(parts.next().unwrap().as_bytes()).unwrap();
        let data = rdata::parse_str(rtype, parts.next().unwrap(), None).unwrap();
        w.push_record(Section::Answer, &owner, rtype, Class::IN, ttl, &data).unwrap();
    }
    w.finish().to_vec()
}

/// A secondary of `example.` from the TLS primary at `primary`, `remote` its remote's
/// TLS lines.
fn config(port: u16, primary: SocketAddr, remote: &str) -> String {
    format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[transfer]\ntimeout = \"2s\"\n\
         [[template]]\nid = \"default\"\nretry-min = \"1s\"\nretry-max = \"1s\"\n\
         [[remote]]\nid = \"p\"\naddress = \"{primary}\"\n{remote}\n\
         [[zone]]\nname = \"example.\"\nprimary = \"p\"\n"
    )
}

#[test]
fn a_wrong_pin_is_refused_and_the_right_one_brings_the_zone_over_tls() {
    let primary = TlsPrimary::start();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let path = dir.path().join("ternd.toml");
    let wrong = format!("tls = true\ncert-key = \"{}\"", pin("cert.pin"));
    std::fs::write(&path, config(port, primary.addr, &wrong)).unwrap();
    let log = dir.path().join("ternd.log");
    let ternd = Daemon::spawn_answering(&["--config", path.to_str().unwrap()], addr, &log);
    let expected =
        format!("key pin mismatch: got {}, expected one of {}", pin("ns1.pin"), pin("cert.pin"));
    let said = eventually(Duration::from_secs(10), || ternd.log_text().contains(&expected));
    assert!(said, "the mismatch is not logged: {}", ternd.log_text());
    assert_eq!(dig_soa(addr, "example.").0, "SERVFAIL", "nothing to serve yet");
    assert_eq!(primary.handshakes.load(Ordering::SeqCst), 0, "no request after a refused key");

    let right = format!("tls = true\ncert-key = \"{}\"", pin("ns1.pin"));
    std::fs::write(&path, config(port, primary.addr, &right)).unwrap();
    ternd.signal(libc::SIGHUP);
    let served = eventually(Duration::from_secs(10), || dig_soa(addr, "example.").1 == Some(7));
    assert!(served, "not transferred after the reload: {}", ternd.log_text());
    assert_eq!(dig_short(addr, "www.example.", "A").trim(), "192.0.2.80");
    let line = format!("peer={} kind=\"AXFR\" transport=\"tls\"", primary.addr);
    assert!(ternd.log_text().contains(&line), "{}", ternd.log_text());
    assert!(primary.handshakes.load(Ordering::SeqCst) >= 2, "the SOA query and the AXFR");
}

#[test]
fn tls_without_a_way_to_check_the_primary_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ternd.toml");
    std::fs::write(&path, config(free_port(), "127.0.0.1:853".parse().unwrap(), "tls = true"))
        .unwrap();
    let out = ternd().arg("--check-config").arg(&path).arg("--skip-zones").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("remote p: `tls = true` needs a way to authenticate the primary"),
        "{stderr}"
    );
    assert!(stderr.contains("tls-hostname") && stderr.contains("cert-key"), "{stderr}");
}
