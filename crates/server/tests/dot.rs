//! DNS over TLS (RFC 7858) and zone transfers over TLS (RFC 9103, Tern as primary), as
//! an operator meets them (issue 52): `kdig +tls` and `dig +tls` against the real
//! `ternd`, padding, pipelining on one connection, a flood of unfinished handshakes,
//! certificates replaced by `ternctl reload`, access rules that require TLS and a
//! client's key, and clear errors for certificates that cannot be used.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, PublicKeyData};

const ZONE: &str = "$ORIGIN dot.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 60\n\
    @ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\n";
/// The name the server's certificate is for.
const HOST: &str = "ns.dot.test";

/// A CA, a server certificate it signed, and the files they are in.
struct Pki {
    dir: PathBuf,
    ca: CertifiedIssuer<'static, KeyPair>,
}

impl Pki {
    fn new(dir: &Path) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(rcgen::DnType::CommonName, "Tern test CA");
        let ca = CertifiedIssuer::self_signed(params, ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let pki = Pki { dir: dir.to_owned(), ca };
        pki.issue("server", HOST, true);
        pki
    }

    /// A certificate for `name` in `NAME.pem` and its key in `NAME.key` (signed by the
    /// CA, or by itself); its key's pin.
    fn issue(&self, file: &str, name: &str, by_ca: bool) -> String {
        let key = KeyPair::generate().unwrap();
        let params = CertificateParams::new(vec![name.to_owned()]).unwrap();
        let cert = match by_ca {
            true => params.signed_by(&key, &self.ca).unwrap(),
            false => params.self_signed(&key).unwrap(),
        };
        std::fs::write(self.dir.join(format!("{file}.pem")), cert.pem()).unwrap();
        std::fs::write(self.dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
        pin(&key.subject_public_key_info())
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).to_str().unwrap().to_owned()
    }
}

/// The base64 SHA-256 of a SubjectPublicKeyInfo, computed here with openssl's
/// command line tools' definition (RFC 7858 §4.2).
fn pin(spki: &[u8]) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, spki);
    tern_wire::base64::encode(digest.as_ref())
}

/// A `ternd` serving `dot.test` on UDP/TCP and DoT, with `extra` configuration.
struct Served {
    addr: SocketAddr,
    dot: SocketAddr,
    file: PathBuf,
    _daemon: Daemon,
    pki: Pki,
    _dir: tempfile::TempDir,
}

fn config_text(port: u16, dot: u16, extra: &str) -> String {
    format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ternd.sock\"\n\
         [tls]\nlisten = [\"127.0.0.1:{dot}\"]\ncertificate = \"server.pem\"\nkey = \"server.key\"\n\
         {extra}\n[[zone]]\nname = \"dot.test\"\nfile = \"dot.test.zone\"\n"
    )
}

fn serve(extra: &str) -> Served {
    serve_with(extra, "")
}

/// [`serve`] with `zone` settings added to the zone's table.
fn serve_with(extra: &str, zone: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    std::fs::write(dir.path().join("dot.test.zone"), ZONE).unwrap();
    let (port, dot) = (free_port(), free_port());
    let file = dir.path().join("ternd.toml");
    std::fs::write(&file, config_text(port, dot, extra) + zone).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let daemon =
        Daemon::spawn(&["--config", file.to_str().unwrap()], addr, &dir.path().join("log"));
    let dot = SocketAddr::from(([127, 0, 0, 1], dot));
    Served { addr, dot, file, _daemon: daemon, pki, _dir: dir }
}

/// kdig at `addr` over TLS, checking the server's certificate against the test CA and
/// name, with `args`; its output.
fn kdig(served: &Served, args: &[&str]) -> String {
    let out = Command::new("kdig")
        .args(["+retry=0", "+timeout=3", "-p", &served.dot.port().to_string()])
        .arg(format!("@{}", served.dot.ip()))
        .arg(format!("+tls-ca={}", served.pki.path("ca.pem")))
        .arg(format!("+tls-hostname={HOST}"))
        .args(args)
        .output()
        .expect("kdig (knot-dnsutils) runs");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn kdig_and_dig_are_answered_over_tls_with_padding() {
    let served = serve("");
    let answer = kdig(&served, &["www.dot.test", "A"]);
    assert!(answer.contains("www.dot.test.") && answer.contains("192.0.2.1"), "{answer}");
    assert!(answer.contains("TLS1.3"), "TLS 1.3 by default: {answer}");
    // The server's choice of suite, whatever the client's order (GnuTLS lists AES-256
    // first): AES-128-GCM, whose key schedule is SHA-256.
    assert!(answer.contains("(AES-128-GCM)"), "{answer}");
    // RFC 8467 §4.1: the response padded to a block of 468 bytes.
    assert!(answer.contains("PADDING") && answer.contains("Received 468 B"), "{answer}");
    // The pin kdig checks is the server key's (RFC 7858 §4.2), computed by kdig.
    let key = std::fs::read_to_string(served.pki.path("server.key")).unwrap();
    let spki = KeyPair::from_pem(&key).unwrap().subject_public_key_info();
    let pinned = Command::new("kdig")
        .args(["+retry=0", "+timeout=3", "-p", &served.dot.port().to_string(), "@127.0.0.1"])
        .arg(format!("+tls-pin={}", pin(&spki)))
        .args(["+short", "www.dot.test"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&pinned.stdout).trim(), "192.0.2.1");
    // A wrong pin: kdig refuses the server.
    let wrong = Command::new("kdig")
        .args(["+retry=0", "+timeout=3", "-p", &served.dot.port().to_string(), "@127.0.0.1"])
        .arg(format!("+tls-pin={}", pin(b"another key")))
        .args(["+short", "www.dot.test"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&wrong.stdout).contains("192.0.2.1"));
    // BIND's dig, opportunistic.
    let dig = Command::new("dig")
        .args(["+tls", "+tries=1", "+time=3", "+short", "-p", &served.dot.port().to_string()])
        .args(["@127.0.0.1", "www.dot.test"])
        .output()
        .expect("dig (bind9-dnsutils) runs");
    assert_eq!(String::from_utf8_lossy(&dig.stdout).trim(), "192.0.2.1");
    // Plain TCP on the DNS port is not padded.
    let tcp = Command::new("kdig")
        .args(["+tcp", "+retry=0", "-p", &served.addr.port().to_string(), "@127.0.0.1"])
        .arg("www.dot.test")
        .output()
        .unwrap();
    let tcp = String::from_utf8_lossy(&tcp.stdout);
    assert!(tcp.contains("192.0.2.1") && !tcp.contains("PADDING"), "{tcp}");
}

/// A rustls client trusting the test CA, presenting `client` (a certificate and key
/// file stem) when given.
fn tls_client(pki: &Pki, client: Option<&str>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match client {
        None => builder.with_no_client_auth(),
        Some(stem) => {
            use rustls::pki_types::pem::PemObject;
            let chain = vec![rustls::pki_types::CertificateDer::from_pem_file(
                pki.path(&format!("{stem}.pem")),
            )
            .unwrap()];
            let key =
                rustls::pki_types::PrivateKeyDer::from_pem_file(pki.path(&format!("{stem}.key")))
                    .unwrap();
            builder.with_client_auth_cert(chain, key).unwrap()
        }
    };
    config.alpn_protocols = vec![b"dot".to_vec()];
    Arc::new(config)
}

type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// A TLS connection to `addr` with `config`, the handshake done.
fn tls_connect(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> Tls {
    let tcp = tcp_connect(addr);
    let name = rustls::pki_types::ServerName::try_from(HOST).unwrap();
    let connection = rustls::ClientConnection::new(config, name).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).unwrap();
    }
    tls
}

/// The certificate the server presented on `tls`, DER.
fn presented(tls: &Tls) -> Vec<u8> {
    tls.conn.peer_certificates().unwrap()[0].to_vec()
}

/// The certificate in the PEM file `path`, DER.
fn certificate_file(path: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_file(path).unwrap().to_vec()
}

fn tls_ask(tls: &mut Tls, message: &[u8]) -> Option<Vec<u8>> {
    tls.write_all(&framed(message)).ok()?;
    tls_read(tls)
}

fn tls_read(tls: &mut Tls) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    tls.read_exact(&mut len).ok()?;
    let mut message = vec![0u8; usize::from(u16::from_be_bytes(len))];
    tls.read_exact(&mut message).ok()?;
    Some(message)
}

#[test]
fn pipelined_queries_on_one_connection_are_all_answered() {
    let served = serve("");
    let mut tls = tls_connect(served.dot, tls_client(&served.pki, None));
    let mut batch = Vec::new();
    for id in 0..200u16 {
        batch.extend_from_slice(&framed(&query(id, "www.dot.test")));
    }
    tls.write_all(&batch).unwrap();
    let mut ids: Vec<u16> = (0..200).map(|_| id_of(&tls_read(&mut tls).unwrap())).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..200).collect::<Vec<u16>>());
}

/// Raises this process's soft limit on open files to its hard limit (at most 8192), for
/// a test that holds many sockets.
fn raise_open_files() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY (test): reading and setting this process's own limit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max.min(8192);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// 1,000 connections from 127.0.0.2 that start a handshake and never finish it, and 200
/// that send nothing: a client at 127.0.0.1 is answered at once all the same, and the
/// flood is cut down to the per-client cap, then closed at the handshake timeout.
#[test]
fn unfinished_handshakes_from_one_address_never_block_another() {
    raise_open_files();
    let served = serve("handshake-timeout = \"2s\"\nmax-connections-per-client = 16\n");
    let mut flood = Vec::new();
    // The first bytes of a TLS record carrying a ClientHello, and then nothing.
    let partial_hello = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01];
    for n in 0..1200 {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None);
        let socket = socket.unwrap();
        socket.bind(&SocketAddr::from(([127, 0, 0, 2], 0)).into()).unwrap();
        if socket.connect(&served.dot.into()).is_err() {
            continue;
        }
        let mut stream: TcpStream = socket.into();
        if n % 6 != 0 {
            let _ = stream.write_all(&partial_hello);
        }
        flood.push(stream);
    }
    let started = Instant::now();
    let answer = kdig(&served, &["+short", "www.dot.test"]);
    assert!(answer.contains("192.0.2.1"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    // The flood holds at most 16 connections: the others are closed as soon as the
    // server accepts them (some may still wait in the kernel's queue for a moment).
    let open = |flood: &mut Vec<TcpStream>| {
        flood.retain_mut(|s| !closed_within(s, Duration::from_millis(5)));
        flood.len()
    };
    assert!(eventually(Duration::from_secs(1), || open(&mut flood) <= 16), "{}", flood.len());
    // Those left are closed at the handshake timeout.
    assert!(eventually(Duration::from_secs(4), || open(&mut flood) == 0), "{}", flood.len());
    drop(served);
}

/// kdig over QUIC at `addr`, pinning the server's key to `pin`: whether it answered.
fn kdig_quic_pinned(addr: SocketAddr, pin: &str) -> bool {
    let out = Command::new("kdig")
        .args(["+retry=0", "+timeout=3", "-p", &addr.port().to_string(), "@127.0.0.1"])
        .arg(format!("+tls-pin={pin}"))
        .args(["+quic", "+short", "www.dot.test"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("192.0.2.1")
}

#[test]
fn a_reload_takes_a_new_certificate_and_keeps_established_connections() {
    let quic = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let served = serve(&format!("[quic]\nlisten = \"{quic}\"\n"));
    let spki = |pki: &Pki| {
        let key = std::fs::read_to_string(pki.path("server.key")).unwrap();
        pin(&KeyPair::from_pem(&key).unwrap().subject_public_key_info())
    };
    let old_pin = spki(&served.pki);
    assert!(kdig_quic_pinned(quic, &old_pin), "DoQ with the first certificate");
    let client = tls_client(&served.pki, None);
    let mut before = tls_connect(served.dot, Arc::clone(&client));
    assert_eq!(presented(&before), certificate_file(&served.pki.path("server.pem")));
    // The certificate is renewed with a new key, in the same files.
    served.pki.issue("server", HOST, true);
    let renewed = certificate_file(&served.pki.path("server.pem"));
    assert_ne!(presented(&before), renewed);
    let reload = ternctl_reload(&served);
    assert!(reload.status.success(), "{}", text(&reload));
    let after = tls_connect(served.dot, Arc::clone(&client));
    assert_eq!(presented(&after), renewed, "new connections get the new certificate");
    let answer = tls_ask(&mut before, &query(7, "www.dot.test")).expect("still served");
    assert_eq!(id_of(&answer), 7);
    // DoQ presents the new certificate too.
    let new_pin = spki(&served.pki);
    assert!(kdig_quic_pinned(quic, &new_pin) && !kdig_quic_pinned(quic, &old_pin));
    // A key that does not belong to the certificate: the reload says so, exits 1, and
    // the certificate in force stays.
    let other = KeyPair::generate().unwrap();
    std::fs::write(served.pki.path("server.key"), other.serialize_pem()).unwrap();
    let reload = ternctl_reload(&served);
    assert!(!reload.status.success());
    let said = text(&reload);
    assert!(said.contains("[tls] not applied") && said.contains("server.pem"), "{said}");
    let still = tls_connect(served.dot, client);
    assert_eq!(presented(&still), renewed);
}

/// The metrics, in the Prometheus text format.
fn scrape(http: SocketAddr) -> String {
    let mut stream = tcp_connect(http);
    stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

/// The value of the metric line that starts with `series`.
fn metric(text: &str, series: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with(series)).unwrap_or_else(|| panic!("{series}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// A returning client resumes its session with a ticket (no full handshake); the
/// metrics count TLS queries apart from TCP's, the handshakes resumed and the
/// certificate's end.
#[test]
fn sessions_resume_and_the_metrics_count_tls_apart() {
    let http = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let served = serve(&format!("[http]\nlisten = \"{http}\"\n"));
    let client = tls_client(&served.pki, None);
    let mut first = tls_connect(served.dot, Arc::clone(&client));
    assert_eq!(first.conn.handshake_kind(), Some(rustls::HandshakeKind::Full));
    // rustls lists TLS_AES_256_GCM_SHA384 first; the server picks AES-128.
    let suite = first.conn.negotiated_cipher_suite().unwrap().suite();
    assert_eq!(suite, rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    // The tickets come after the handshake: an answer read takes them in.
    assert!(tls_ask(&mut first, &query(1, "www.dot.test")).is_some());
    let mut again = tls_connect(served.dot, client);
    assert_eq!(again.conn.handshake_kind(), Some(rustls::HandshakeKind::Resumed));
    assert!(tls_ask(&mut again, &query(2, "www.dot.test")).is_some());
    let text = scrape(http);
    assert_eq!(metric(&text, "tern_queries_total{transport=\"tls\"}"), 2.0, "{text}");
    assert_eq!(metric(&text, "tern_queries_total{transport=\"tcp\"}"), 0.0);
    assert_eq!(metric(&text, "tern_tls_accepted_total"), 2.0);
    assert_eq!(metric(&text, "tern_tls_resumed_total"), 1.0);
    assert_eq!(metric(&text, "tern_tls_connections"), 2.0);
    let expiry = metric(&text, "tern_tls_certificate_expiry_timestamp_seconds");
    let cert = certificate_file(&served.pki.path("server.pem"));
    assert_eq!(Some(expiry as i64), tern_server::tls::not_after(&cert));
    assert!(expiry > 1.9e9, "rcgen's default end is 4096: {expiry}");
}

/// An expired certificate is served (opportunistic clients still connect) with an error
/// in the log at start, and at each reload.
#[test]
fn an_expired_certificate_is_an_error_in_the_log() {
    let served = serve("");
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec![HOST.to_owned()]).unwrap();
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    let cert = params.signed_by(&key, &served.pki.ca).unwrap();
    std::fs::write(served.pki.path("server.pem"), cert.pem()).unwrap();
    std::fs::write(served.pki.path("server.key"), key.serialize_pem()).unwrap();
    assert!(ternctl_reload(&served).status.success());
    let log = served._daemon.log_text();
    assert!(log.contains("TLS certificate expired"), "{log}");
    let strict = kdig(&served, &["+short", "www.dot.test"]);
    assert!(!strict.contains("192.0.2.1"), "a client that checks refuses it: {strict}");
}

fn ternctl_reload(served: &Served) -> std::process::Output {
    let socket = served.file.with_file_name("ternd.sock");
    ternctl().args(["--socket", socket.to_str().unwrap(), "reload"]).output().unwrap()
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// AXFR of `dot.test` by kdig over TLS, presenting `client` (a certificate stem) when
/// given; whether the zone came.
fn axfr_over_tls(served: &Served, client: Option<&str>) -> bool {
    let mut args = vec!["dot.test".to_owned(), "AXFR".to_owned()];
    if let Some(stem) = client {
        args.push(format!("+tls-certfile={}", served.pki.path(&format!("{stem}.pem"))));
        args.push(format!("+tls-keyfile={}", served.pki.path(&format!("{stem}.key"))));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = kdig(served, &args);
    out.contains("www.dot.test.") && out.contains("192.0.2.1")
}

fn axfr_over_tcp(served: &Served) -> bool {
    let out = Command::new("kdig")
        .args(["+retry=0", "+timeout=3", "-p", &served.addr.port().to_string(), "@127.0.0.1"])
        .args(["dot.test", "AXFR"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("192.0.2.1")
}

/// RFC 9103: a primary can require transfers over TLS, and name the secondary by its
/// certificate's key (a pin), or by a certificate its CA signed (mutual TLS).
#[test]
fn transfers_can_require_tls_and_the_secondarys_key() {
    let dir = tempfile::tempdir().unwrap();
    let pins = Pki::new(dir.path());
    let allowed = pins.issue("allowed", "secondary.dot.test", false);
    let acl = format!(
        "[[acl]]\nid = \"xot\"\naction = \"transfer\"\ncert-key = \"{allowed}\"\n\
         [[acl]]\nid = \"any-tls\"\naction = \"transfer\"\naddress = \"127.0.0.2\"\ntls = true\n"
    );
    let served = serve_with(&acl, "acl = [\"xot\", \"any-tls\"]\n");
    // The served PKI is another one: copy the client's files next to it.
    for file in ["allowed.pem", "allowed.key"] {
        std::fs::copy(pins.path(file), served.pki.path(file)).unwrap();
    }
    served.pki.issue("stranger", "stranger.dot.test", false);
    assert!(axfr_over_tls(&served, Some("allowed")), "the pinned key may transfer");
    assert!(!axfr_over_tls(&served, Some("stranger")), "another key may not");
    assert!(!axfr_over_tls(&served, None), "nor a client without a certificate");
    assert!(!axfr_over_tcp(&served), "nor anyone over plain TCP");
}

/// Mutual TLS: a certificate the client CA signed satisfies `client-cert`; beside it, a
/// self-signed certificate is still taken for its key by a `cert-key` rule.
#[test]
fn mutual_tls_allows_certificates_the_client_ca_signed() {
    let dir = tempfile::tempdir().unwrap();
    let others = Pki::new(dir.path());
    let pinned = others.issue("pinned", "pinned.dot.test", false);
    let acl = format!(
        "client-ca = \"ca.pem\"\n[[acl]]\nid = \"mtls\"\naction = \"transfer\"\nclient-cert = true\n\
         [[acl]]\nid = \"pin\"\naction = \"transfer\"\ncert-key = \"{pinned}\"\n"
    );
    let served = serve_with(&acl, "acl = [\"mtls\", \"pin\"]\n");
    for file in ["pinned.pem", "pinned.key"] {
        std::fs::copy(others.path(file), served.pki.path(file)).unwrap();
    }
    served.pki.issue("secondary", "secondary.dot.test", true);
    served.pki.issue("stranger", "stranger.dot.test", false);
    assert!(axfr_over_tls(&served, Some("secondary")), "signed by the client CA");
    assert!(axfr_over_tls(&served, Some("pinned")), "self-signed, named by its pin");
    assert!(!axfr_over_tls(&served, None), "no certificate: refused");
    assert!(!axfr_over_tls(&served, Some("stranger")), "neither signed nor pinned: refused");
    assert!(kdig(&served, &["+short", "www.dot.test"]).contains("192.0.2.1"), "queries still");
    assert!(!axfr_over_tcp(&served));
}

/// Certificates that cannot be used stop the start with the file and why; a missing
/// certificate is a configuration error with its line.
#[test]
fn unusable_certificates_are_reported_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    std::fs::write(dir.path().join("dot.test.zone"), ZONE).unwrap();
    let start = |tls: &str| {
        let text = format!(
            "[server]\nlisten = [\"127.0.0.1:{}\"]\nstorage = \"storage\"\n[tls]\n{tls}\n\
             [[zone]]\nname = \"dot.test\"\nfile = \"dot.test.zone\"\n",
            free_port()
        );
        let file = dir.path().join("ternd.toml");
        std::fs::write(&file, text).unwrap();
        let out = ternd().args(["--config", file.to_str().unwrap()]).output().unwrap();
        assert!(!out.status.success());
        text_of(&out)
    };
    let listen = format!("listen = \"127.0.0.1:{}\"\n", free_port());
    let said = start(&listen);
    assert!(said.contains("ternd.toml:4") && said.contains("`certificate` and `key`"), "{said}");
    let said = start(&format!("{listen}certificate = \"missing.pem\"\nkey = \"server.key\""));
    assert!(said.contains("missing.pem") && said.contains("No such file"), "{said}");
    let said = start(&format!("{listen}certificate = \"server.key\"\nkey = \"server.key\""));
    assert!(said.contains("server.key: no certificate in it"), "{said}");
    pki.issue("other", HOST, true);
    let said = start(&format!("{listen}certificate = \"server.pem\"\nkey = \"other.key\""));
    assert!(said.contains("server.pem and") && said.contains("other.key"), "{said}");
}

fn text_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
}

/// Tern to Tern over TLS: a secondary that checks the primary's key and presents its own
/// certificate, and a primary that allows transfers to that certificate's key alone.
#[test]
fn a_tern_secondary_fetches_over_mutual_tls_from_a_tern_primary() {
    let dir = tempfile::tempdir().unwrap();
    let clients = Pki::new(dir.path());
    let client_pin = clients.issue("secondary", "secondary.dot.test", false);
    let acl =
        format!("[[acl]]\nid = \"xot\"\naction = \"transfer\"\ncert-key = \"{client_pin}\"\n");
    let primary = serve_with(&acl, "acl = \"xot\"\n");
    let key = std::fs::read_to_string(primary.pki.path("server.key")).unwrap();
    let server_pin = pin(&KeyPair::from_pem(&key).unwrap().subject_public_key_info());
    let secondary = |client_cert: bool| {
        let port = free_port();
        let cert = match client_cert {
            true => format!(
                "tls-client-certificate = \"{}\"\ntls-client-key = \"{}\"\n",
                clients.path("secondary.pem"),
                clients.path("secondary.key")
            ),
            false => String::new(),
        };
        let text = format!(
            "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
             storage = \"storage-{port}\"\n[[remote]]\nid = \"p\"\naddress = \"{}\"\n\
             tls = true\ncert-key = \"{server_pin}\"\n{cert}\
             [[zone]]\nname = \"dot.test\"\nprimary = \"p\"\n",
            primary.dot
        );
        let file = dir.path().join(format!("secondary-{port}.toml"));
        std::fs::write(&file, text).unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = dir.path().join(format!("secondary-{port}.log"));
        (Daemon::spawn(&["--config", file.to_str().unwrap()], addr, &log), addr)
    };
    let (with_cert, addr) = secondary(true);
    let served = eventually(Duration::from_secs(10), || {
        dig_short(addr, "www.dot.test", "A").contains("192.0.2.1")
    });
    assert!(served, "{}", with_cert.log_text());
    assert!(with_cert.log_text().contains("transport=\"tls\""), "{}", with_cert.log_text());
    let (without, addr) = secondary(false);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!dig_short(addr, "www.dot.test", "A").contains("192.0.2.1"), "no certificate");
    assert!(without.log_text().contains("REFUSED"), "{}", without.log_text());
}
