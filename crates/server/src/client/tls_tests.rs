//! The TLS client against a primary played here by rustls on a loopback port: SOA
//! queries and transfers over TLS, each way of checking the primary, and each way the
//! handshake fails, with the words of its error. Every server thread serves one
//! connection and ends; every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Rtype};

use super::*;
use crate::client::{soa_serial, transfer, ClientError, Limits, Peer};

fn testdata(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/tls/testdata").join(file)
}

fn pin(file: &str) -> Pin {
    Pin::parse(&std::fs::read_to_string(testdata(file)).unwrap()).unwrap()
}

/// How a primary asks for client certificates.
#[derive(Clone, Copy, PartialEq)]
enum Mutual {
    No,
    /// Required by TLS (an alert without one).
    Required,
    /// Asked for, not required by TLS (see [`Primary::start_dropping`]).
    Dropped,
}

/// The primary's TLS: ns1.example's certificate, ALPN `alpn`, client certificates as
/// `mutual` says.
fn server_config(alpn: &[&[u8]], mutual: bool) -> Arc<ServerConfig> {
    server_config_asking(alpn, if mutual { Mutual::Required } else { Mutual::No })
}

fn server_config_asking(alpn: &[&[u8]], mutual: Mutual) -> Arc<ServerConfig> {
    let chain = crate::tls::read_certificates(&testdata("ns1.pem")).unwrap();
    let key = crate::tls::read_key(&testdata("ns1.key")).unwrap();
    let builder = ServerConfig::builder_with_provider(crate::tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap();
    let builder = if mutual == Mutual::No {
        builder.with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        for ca in crate::tls::read_certificates(&testdata("ca.pem")).unwrap() {
            roots.add(ca).unwrap();
        }
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), crate::tls::provider());
        let verifier = match mutual {
            Mutual::Dropped => verifier.allow_unauthenticated().build().unwrap(),
            _ => verifier.build().unwrap(),
        };
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder.with_single_cert(chain, key).unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// A primary serving `example.` at serial 7 over TLS to one connection.
struct Primary {
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Primary {
    fn start(config: Arc<ServerConfig>) -> Primary {
        Primary::start_dropping(config, false)
    }

    /// With `drop_anonymous`, a client without a certificate is dropped after its
    /// request, without a word (as BIND does).
    fn start_dropping(config: Arc<ServerConfig>, drop_anonymous: bool) -> Primary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let thread = std::thread::spawn(move || {
            let Ok((tcp, _)) = listener.accept() else { return };
            tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut tls = StreamOwned::new(ServerConnection::new(config).unwrap(), tcp);
            let Some(request) = read_framed(&mut tls) else { return };
            if drop_anonymous && tls.conn.peer_certificates().is_none() {
                return;
            }
            for answer in answers(&request) {
                let mut framed = u16::try_from(answer.len()).unwrap().to_be_bytes().to_vec();
                framed.extend_from_slice(&answer);
                if tls.write_all(&framed).is_err() {
                    return;
                }
            }
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
        Primary { addr, thread: Some(thread) }
    }

    /// A TCP port that accepts and says nothing.
    fn silent() -> Primary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let thread = std::thread::spawn(move || {
            let Ok((mut tcp, _)) = listener.accept() else { return };
            tcp.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            // The ClientHello, then nothing until the client gives up.
            while matches!(tcp.read(&mut [0u8; 4096]), Ok(n) if n > 0) {}
        });
        Primary { addr, thread: Some(thread) }
    }
}

impl Drop for Primary {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(100));
            let _ = thread.join();
        }
    }
}

fn read_framed(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut prefix = [0u8; 2];
    stream.read_exact(&mut prefix).ok()?;
    let mut message = vec![0u8; usize::from(u16::from_be_bytes(prefix))];
    stream.read_exact(&mut message).ok()?;
    Some(message)
}

/// The answers to an SOA query (one message) or an AXFR (two messages).
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

fn strict(hostname: Option<&str>, ca: Option<&str>, pins: Vec<Pin>) -> RemoteTls {
    let (hostname, pins) = (hostname.map(str::to_owned), pins.iter().map(|p| p.0).collect());
    RemoteTls { check: Check::Strict { hostname, ca: ca.map(testdata), pins }, client: None }
}

/// The serial the primary at `addr` serves, asked over TLS as `remote` says.
fn ask(addr: SocketAddr, remote: &RemoteTls) -> Result<u32, ClientError> {
    let tls = remote.clone().into_tls();
    let peer = Peer { addr, key: None, source: None, tls: Some(&tls) };
    soa_serial(peer, &"example.".parse::<Name>().unwrap(), Duration::from_secs(3))
}

fn dot() -> Arc<ServerConfig> {
    server_config(&[ALPN_DOT], false)
}

#[test]
fn the_pinned_key_gets_the_serial() {
    let primary = Primary::start(dot());
    let remote = strict(None, None, vec![pin("cert.pin"), pin("ns1.pin")]);
    assert_eq!(ask(primary.addr, &remote).unwrap(), 7);
}

#[test]
fn another_key_is_refused_with_both_pins_said() {
    let primary = Primary::start(dot());
    let error = ask(primary.addr, &strict(None, None, vec![pin("cert.pin")])).unwrap_err();
    let expected =
        format!("key pin mismatch: got {}, expected one of {}", pin("ns1.pin"), pin("cert.pin"));
    assert!(matches!(&error, ClientError::Tls(why) if why == &expected), "{error}");
}

#[test]
fn the_name_checked_against_the_ca() {
    let primary = Primary::start(dot());
    assert_eq!(ask(primary.addr, &strict(Some("ns1.example"), Some("ca.pem"), vec![])).unwrap(), 7);
    let primary = Primary::start(dot());
    let both = strict(Some("ns1.example"), Some("ca.pem"), vec![pin("ns1.pin")]);
    assert_eq!(ask(primary.addr, &both).unwrap(), 7, "name and pin together");
}

#[test]
fn a_wrong_name_or_ca_or_pin_beside_the_name_is_refused() {
    let primary = Primary::start(dot());
    let error =
        ask(primary.addr, &strict(Some("ns2.example"), Some("ca.pem"), vec![])).unwrap_err();
    assert!(
        error.to_string().contains("certificate for ns2.example not valid for that name"),
        "{error}"
    );
    let primary = Primary::start(dot());
    // A CA that did not issue ns1.example's certificate (a self-signed one).
    let error =
        ask(primary.addr, &strict(Some("ns1.example"), Some("cert.pem"), vec![])).unwrap_err();
    assert!(error.to_string().contains("not issued by a CA of `tls-ca`"), "{error}");
    let primary = Primary::start(dot());
    let pinned = strict(Some("ns1.example"), Some("ca.pem"), vec![pin("cert.pin")]);
    let error = ask(primary.addr, &pinned).unwrap_err();
    assert!(error.to_string().contains("key pin mismatch"), "{error}");
}

#[test]
fn opportunistic_takes_any_certificate() {
    let primary = Primary::start(dot());
    let remote = RemoteTls { check: Check::Opportunistic, client: None };
    assert_eq!(ask(primary.addr, &remote).unwrap(), 7);
}

#[test]
fn alpn_dot_is_required() {
    let primary = Primary::start(server_config(&[b"h2"], false));
    let error = ask(primary.addr, &strict(None, None, vec![pin("ns1.pin")])).unwrap_err();
    assert!(error.to_string().contains("ALPN refused"), "{error}");
    let primary = Primary::start(server_config(&[], false));
    let error = ask(primary.addr, &strict(None, None, vec![pin("ns1.pin")])).unwrap_err();
    assert!(error.to_string().contains("ALPN refused: the primary did not select"), "{error}");
}

#[test]
fn a_primary_that_never_answers_the_handshake_times_out() {
    let primary = Primary::silent();
    let tls = strict(None, None, vec![pin("ns1.pin")]).into_tls();
    let peer = Peer { addr: primary.addr, key: None, source: None, tls: Some(&tls) };
    let started = Instant::now();
    let error = soa_serial(peer, &"example.".parse::<Name>().unwrap(), Duration::from_millis(300))
        .unwrap_err();
    assert!(error.to_string().contains("no TLS handshake within"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn mutual_tls_presents_the_client_certificate() {
    let primary = Primary::start(server_config(&[ALPN_DOT], true));
    let mut remote = strict(None, None, vec![pin("ns1.pin")]);
    remote.client = Some((testdata("client.pem"), testdata("client.key")));
    assert_eq!(ask(primary.addr, &remote).unwrap(), 7);
    let primary = Primary::start(server_config(&[ALPN_DOT], true));
    let error = ask(primary.addr, &strict(None, None, vec![pin("ns1.pin")])).unwrap_err();
    assert!(error.to_string().contains("requires a client certificate"), "{error}");
}

#[test]
fn a_primary_that_drops_a_client_without_certificate_is_understood() {
    let config = server_config_asking(&[ALPN_DOT], Mutual::Dropped);
    let primary = Primary::start_dropping(config, true);
    let error = ask(primary.addr, &strict(None, None, vec![pin("ns1.pin")])).unwrap_err();
    assert!(error.to_string().contains("asked for a client certificate"), "{error}");
    let config = server_config_asking(&[ALPN_DOT], Mutual::Dropped);
    let primary = Primary::start_dropping(config, true);
    let mut remote = strict(None, None, vec![pin("ns1.pin")]);
    remote.client = Some((testdata("client.pem"), testdata("client.key")));
    assert_eq!(ask(primary.addr, &remote).unwrap(), 7, "with a certificate: served");
}

#[test]
fn a_zone_is_transferred_over_tls() {
    let primary = Primary::start(dot());
    let tls = strict(None, None, vec![pin("ns1.pin")]).into_tls();
    let peer = Peer { addr: primary.addr, key: None, source: None, tls: Some(&tls) };
    let limits = Limits {
        timeout: Duration::from_secs(3),
        max_size: 1 << 20,
        max_time: Duration::from_secs(5),
        idle: Duration::from_secs(3),
    };
    let got = transfer::transfer(peer, &"example.".parse::<Name>().unwrap(), None, limits).unwrap();
    assert_eq!((got.messages, got.records), (2, 5));
}

#[test]
fn files_that_cannot_be_used_are_said() {
    let mut remote = strict(Some("ns1.example"), Some("missing-ca.pem"), vec![]);
    assert!(prepare(&remote).unwrap_err().contains("missing-ca.pem"));
    remote = strict(None, None, vec![pin("ns1.pin")]);
    remote.client = Some((testdata("client.pem"), testdata("ns1.key")));
    assert!(prepare(&remote).is_err(), "a key that is not the certificate's");
    // Said by the connection that needed them.
    let primary = Primary::start(dot());
    let error =
        ask(primary.addr, &strict(Some("ns1.example"), Some("ns1.key"), vec![])).unwrap_err();
    assert!(error.to_string().contains("ns1.key: no certificate in it"), "{error}");
}

#[test]
fn the_configuration_is_made_once_and_kept() {
    let primary = Primary::start(dot());
    let tls = strict(None, None, vec![pin("ns1.pin")]).into_tls();
    let peer = Peer { addr: primary.addr, key: None, source: None, tls: Some(&tls) };
    assert!(tls.prepared.get().is_none());
    soa_serial(peer, &"example.".parse::<Name>().unwrap(), Duration::from_secs(3)).unwrap();
    let first = Arc::clone(tls.prepared.get().expect("kept"));
    let primary = Primary::start(dot());
    let peer = Peer { addr: primary.addr, ..peer };
    soa_serial(peer, &"example.".parse::<Name>().unwrap(), Duration::from_secs(3)).unwrap();
    assert!(Arc::ptr_eq(&first, tls.prepared.get().unwrap()), "the same configuration");
}
