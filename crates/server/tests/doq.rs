//! DNS over QUIC (RFC 9250) through the real `ternd` binary, with a quinn client and a
//! self-signed certificate made here: queries on one stream each and on parallel
//! streams, zone transfers on the query's stream (allowed by an ACL, refused without),
//! protocol errors (a message ID, a keepalive option), the stream cap, slow queries, 0-RTT (plain queries answered, an
//! UPDATE held until the handshake, and never applied when the handshake does not
//! complete, as for a replay), Retry and the per-client cap, the close on stop, and
//! two independent clients: dnspython over DoQ (aioquic) and `kdig +quic` (Knot DNS).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use quinn::crypto::rustls::QuicClientConfig;
use quinn::{Connection, Endpoint, ReadError, VarInt};
use tern_wire::message::{MessageReader, Section};
use tern_wire::{rdata, Rcode};

const ZONE_HEAD: &str = "$ORIGIN example.com.\n$TTL 300\n\
                         @ SOA ns1 hostmaster 1 7200 3600 1209600 300\n\
                         @ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n";
const OTHER: &str = "$ORIGIN other.example.\n$TTL 300\n\
                     @ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.54\n";
/// Records in example.com. beyond the head: enough for a transfer of several messages.
const HOSTS: usize = 3000;

/// A running `ternd` with DoQ, its certificate, and its addresses.
struct Server {
    _dir: tempfile::TempDir,
    daemon: Daemon,
    quic: SocketAddr,
    http: SocketAddr,
    cert: Vec<u8>,
    cert_path: PathBuf,
    /// A client certificate and key (DER) whose pin `other.example`'s transfer rule
    /// names (`cert-key`).
    client_cert: (Vec<u8>, Vec<u8>),
}

/// Starts `ternd` with DoQ; `quic_extra` goes in `[quic]`, `io_timeout` in `[tcp]`.
fn server(quic_extra: &str, io_timeout: &str) -> Server {
    server_with(None, quic_extra, io_timeout)
}

/// [`server`], with the `ternd` binary `binary` instead of this build's.
fn server_with(binary: Option<&Path>, quic_extra: &str, io_timeout: &str) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let client = rcgen::generate_simple_self_signed(vec!["secondary".to_owned()]).unwrap();
    // The SubjectPublicKeyInfo, from its PEM form ("PUBLIC KEY").
    let pem = client.signing_key.public_key_pem();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let spki = tern_wire::base64::decode(&body).unwrap();
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &spki);
    let client_pin = tern_wire::base64::encode(digest.as_ref());
    std::fs::write(path.join("cert.pem"), made.cert.pem()).unwrap();
    std::fs::write(path.join("client.pem"), client.cert.pem()).unwrap();
    std::fs::write(path.join("client.key"), client.signing_key.serialize_pem()).unwrap();
    std::fs::write(path.join("key.pem"), made.signing_key.serialize_pem()).unwrap();
    let mut zone = ZONE_HEAD.to_owned();
    for i in 0..HOSTS {
        zone.push_str(&format!("host{i} A 10.0.{}.{}\n", i >> 8, i & 255));
    }
    std::fs::write(path.join("example.com.zone"), zone).unwrap();
    std::fs::write(path.join("other.example.zone"), OTHER).unwrap();
    let (port, quic_port, http_port) = (free_port(), free_port(), free_port());
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 2\n\
         storage = \"storage\"\n[tcp]\nio-timeout = \"{io_timeout}\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\nhandshake-timeout = \"1s\"\n\
         [quic]\nlisten = \"127.0.0.1:{quic_port}\"\n{quic_extra}\n\
         [http]\nlisten = \"127.0.0.1:{http_port}\"\n\
         [[acl]]\nid = \"t\"\naddress = \"127.0.0.1\"\naction = \"transfer\"\n\
         [[acl]]\nid = \"u\"\naddress = \"127.0.0.1\"\naction = \"update\"\n\
         [[acl]]\nid = \"pin\"\naction = \"transfer\"\ncert-key = \"{client_pin}\"\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nacl = [\"t\", \"u\"]\n\
         [[zone]]\nname = \"other.example\"\nfile = \"other.example.zone\"\nacl = [\"pin\"]\n"
    );
    std::fs::write(path.join("ternd.toml"), config).unwrap();
    let conf = path.join("ternd.toml");
    let dns = SocketAddr::from(([127, 0, 0, 1], port));
    let args = ["--config", conf.to_str().unwrap()];
    let daemon = match binary {
        None => Daemon::spawn(&args, dns, &path.join("log")),
        Some(binary) => {
            let log = std::fs::File::create(path.join("log")).unwrap();
            let child = Command::new(binary).args(args).stderr(log).spawn().unwrap();
            let daemon = Daemon { child, addr: dns, log: path.join("log") };
            let loaded =
                eventually(Duration::from_secs(20), || daemon.log_text().contains("load done"));
            assert!(loaded, "{}", daemon.log_text());
            daemon
        }
    };
    Server {
        quic: SocketAddr::from(([127, 0, 0, 1], quic_port)),
        http: SocketAddr::from(([127, 0, 0, 1], http_port)),
        cert: made.cert.der().to_vec(),
        cert_path: path.join("cert.pem"),
        client_cert: (client.cert.der().to_vec(), client.signing_key.serialize_der()),
        daemon,
        _dir: dir,
    }
}

impl Server {
    /// The value of the counter or gauge `name` (with `labels`, as `{k="v"}`) in a scrape.
    fn metric(&self, name: &str) -> u64 {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(self.http).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(name));
        let value = line.and_then(|l| l.split_whitespace().nth(1));
        value.unwrap_or_else(|| panic!("no {name} in the scrape")).parse().unwrap()
    }
}

/// A client endpoint trusting `cert`, offering ALPN `doq` and 0-RTT; a second
/// connection from the same endpoint resumes the first one's session.
fn client(cert: &[u8]) -> Endpoint {
    client_with(cert, None)
}

/// [`client`], presenting `identity` (a certificate and its key, DER) when given.
fn client_with(cert: &[u8], identity: Option<&(Vec<u8>, Vec<u8>)>) -> Endpoint {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(cert.to_vec())).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots);
    let mut tls = match identity {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => {
            let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(key.clone()));
            builder.with_client_auth_cert(vec![CertificateDer::from(chain.clone())], key).unwrap()
        }
    };
    tls.alpn_protocols = vec![b"doq".to_vec()];
    tls.enable_early_data = true;
    let crypto = QuicClientConfig::try_from(Arc::new(tls)).unwrap();
    let mut endpoint = Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    endpoint
}

async fn connect(endpoint: &Endpoint, server: SocketAddr) -> Connection {
    let connecting = endpoint.connect(server, "localhost").unwrap();
    tokio::time::timeout(Duration::from_secs(5), connecting).await.unwrap().unwrap()
}

/// A query of `qtype` for `name` (ID 0 unless said).
fn question(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = query(id, name);
    let len = q.len();
    q[len - 4..len - 2].copy_from_slice(&qtype.to_be_bytes());
    q
}

/// Sends `message` on a new stream and reads every message of the answer until the
/// server ends the stream.
async fn exchange(conn: &Connection, message: &[u8]) -> Result<Vec<Vec<u8>>, ReadError> {
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    send.write_all(&framed(message)).await.unwrap();
    send.finish().unwrap();
    read_messages(&mut recv).await
}

async fn read_messages(recv: &mut quinn::RecvStream) -> Result<Vec<Vec<u8>>, ReadError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = recv.read_chunk(usize::MAX, true).await? {
        bytes.extend_from_slice(&chunk.bytes);
    }
    let mut messages = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        messages.push(rest[2..2 + len].to_vec());
        rest = &rest[2 + len..];
    }
    assert!(rest.is_empty(), "a partial message at the end");
    Ok(messages)
}

/// The RCODE and the answer section's records as `TYPE RDATA`.
fn answer(message: &[u8]) -> (Rcode, Vec<String>) {
    let mut reader = MessageReader::new(message).unwrap();
    let rcode = Rcode::from(u16::from(reader.header().flags.rcode_bits()));
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    let mut records = Vec::new();
    while let Some(rr) = reader.record(&mut scratch).unwrap() {
        if rr.section == Section::Answer {
            records.push(format!("{} {}", rr.rtype, rdata::to_text(rr.rtype, rr.rdata)));
        }
    }
    (rcode, records)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// One query answered on its stream (ID 0, the server ends the stream), then 16 queries
/// on parallel streams of the same connection, each answered on its own stream.
#[test]
fn queries_on_one_and_on_parallel_streams() {
    let server = server("", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let messages = exchange(&conn, &question(0, "www.example.com", 1)).await.unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(id_of(&messages[0]), 0);
        assert_eq!(answer(&messages[0]), (Rcode::NOERROR, vec!["A 192.0.2.80".to_owned()]));
        let asks = (0..16).map(|i| {
            let conn = conn.clone();
            async move {
                let name = format!("host{i}.example.com");
                exchange(&conn, &question(0, &name, 1)).await.unwrap()
            }
        });
        let answers = futures_join(asks.collect()).await;
        for (i, messages) in answers.iter().enumerate() {
            assert_eq!(messages.len(), 1);
            assert_eq!(answer(&messages[0]).1, [format!("A 10.0.0.{i}")], "stream {i}");
        }
    });
    assert!(server.metric("tern_quic_streams_total") >= 17);
    assert_eq!(server.metric("tern_quic_handshakes_total"), 1);
}

/// Runs `futures` at once on this task and returns their outputs in order.
async fn futures_join<T: Send + 'static>(
    futures: Vec<impl std::future::Future<Output = T> + Send + 'static>,
) -> Vec<T> {
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

/// AXFR over QUIC (RFC 9250 §4.2): every message of the transfer on the query's
/// stream, the SOA first and last, every record there; a zone without a transfer rule
/// is refused, on the same connection.
#[test]
fn a_transfer_over_quic_needs_the_acl() {
    let server = server("", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let messages = exchange(&conn, &question(0, "example.com", 252)).await.unwrap();
        assert!(messages.len() > 1, "{} messages", messages.len());
        let records: Vec<String> = messages.iter().flat_map(|m| answer(m).1).collect();
        assert!(records.first().unwrap().starts_with("SOA "));
        assert!(records.last().unwrap().starts_with("SOA "));
        assert_eq!(records.len(), HOSTS + 5, "SOA, NS, ns1, www, the hosts, SOA");
        assert!(messages.iter().all(|m| id_of(m) == 0 && answer(m).0 == Rcode::NOERROR));
        let refused = exchange(&conn, &question(0, "other.example", 252)).await.unwrap();
        assert_eq!(refused.len(), 1);
        assert_ne!(answer(&refused[0]).0, Rcode::NOERROR);
        assert!(answer(&refused[0]).1.is_empty());
    });
}

/// A transfer rule naming a client certificate's pin (`cert-key`) matches over QUIC as
/// over TLS: the client presenting it gets the zone; without it, refused.
#[test]
fn a_transfer_over_quic_with_a_pinned_client_certificate() {
    let server = server("", "2s");
    runtime().block_on(async {
        let with = client_with(&server.cert, Some(&server.client_cert));
        let conn = connect(&with, server.quic).await;
        let messages = exchange(&conn, &question(0, "other.example", 252)).await.unwrap();
        let records: Vec<String> = messages.iter().flat_map(|m| answer(m).1).collect();
        assert_eq!(answer(&messages[0]).0, Rcode::NOERROR);
        assert!(records.len() >= 3 && records.first().unwrap().starts_with("SOA "), "{records:?}");
        let without = client(&server.cert);
        let conn = connect(&without, server.quic).await;
        let refused = exchange(&conn, &question(0, "other.example", 252)).await.unwrap();
        assert_ne!(answer(&refused[0]).0, Rcode::NOERROR);
    });
}

/// RFC 9250 §4.2.1: a query with an ID other than 0 closes the connection with
/// DOQ_PROTOCOL_ERROR (2).
#[test]
fn a_nonzero_message_id_closes_the_connection() {
    let server = server("", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let _ = exchange(&conn, &question(7, "www.example.com", 1)).await;
        closed_with_protocol_error(&conn).await;
    });
    assert_eq!(server.metric("tern_quic_protocol_errors_total"), 1);
}

/// RFC 9250 §5.5.2: a query carrying an edns-tcp-keepalive option closes the connection
/// with DOQ_PROTOCOL_ERROR (2); the same query with another option (NSID) is answered.
#[test]
fn a_keepalive_option_closes_the_connection() {
    let server = server("", "2s");
    let with_option = |code: u8| {
        let mut q = question(0, "www.example.com", 1);
        q[11] = 1; // ARCOUNT: the OPT record
        q.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 4, 0, code, 0, 0]);
        q
    };
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let messages = exchange(&conn, &with_option(3)).await.unwrap();
        assert_eq!(answer(&messages[0]).1, ["A 192.0.2.80"], "NSID asked: answered");
        let _ = exchange(&conn, &with_option(11)).await;
        closed_with_protocol_error(&conn).await;
    });
    assert_eq!(server.metric("tern_quic_protocol_errors_total"), 1);
}

/// Waits (up to 2 s) for the server to close `conn` with DOQ_PROTOCOL_ERROR (2).
async fn closed_with_protocol_error(conn: &Connection) {
    let closed = tokio::time::timeout(Duration::from_secs(2), conn.closed()).await.unwrap();
    match closed {
        quinn::ConnectionError::ApplicationClosed(close) => {
            assert_eq!(close.error_code, VarInt::from_u32(2));
        }
        other => panic!("closed otherwise: {other}"),
    }
}

/// With `max-streams-per-connection = 2`, a third stream cannot be opened while two
/// queries are in progress; it can once one is answered.
#[test]
fn the_stream_cap_holds() {
    let server = server("max-streams-per-connection = 2", "5s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let query = framed(&question(0, "www.example.com", 1));
        let (mut first, mut first_recv) = conn.open_bi().await.unwrap();
        let (mut second, _second_recv) = conn.open_bi().await.unwrap();
        // Half a query each: both stay open.
        first.write_all(&query[..5]).await.unwrap();
        second.write_all(&query[..5]).await.unwrap();
        let third = tokio::time::timeout(Duration::from_millis(500), conn.open_bi()).await;
        assert!(third.is_err(), "a third stream opened while two are in progress");
        first.write_all(&query[5..]).await.unwrap();
        first.finish().unwrap();
        assert_eq!(read_messages(&mut first_recv).await.unwrap().len(), 1);
        let third = tokio::time::timeout(Duration::from_secs(2), conn.open_bi()).await;
        assert!(third.is_ok(), "no third stream once the first was answered");
    });
}

/// A query trickled a byte every 100 ms is cut off: the stream is reset with
/// DOQ_REQUEST_CANCELLED (3) once the I/O timeout from its start has passed, and the
/// connection goes on serving.
#[test]
fn a_trickled_query_is_reset_after_the_io_timeout() {
    let server = server("", "500ms");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let (mut send, mut recv) = conn.open_bi().await.unwrap();
        let query = framed(&question(0, "www.example.com", 1));
        let started = Instant::now();
        let trickle = async move {
            for byte in &query {
                if send.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let (read, ()) = tokio::join!(read_messages(&mut recv), trickle);
        let took = started.elapsed();
        assert!(
            matches!(read, Err(ReadError::Reset(code)) if code == VarInt::from_u32(3)),
            "{read:?}"
        );
        assert!(took >= Duration::from_millis(450) && took < Duration::from_secs(2), "{took:?}");
        let messages = exchange(&conn, &question(0, "www.example.com", 1)).await.unwrap();
        assert_eq!(answer(&messages[0]).1, ["A 192.0.2.80"]);
    });
    assert_eq!(server.metric("tern_quic_streams_reset_total"), 1);
}

/// An UPDATE adding `name` A 192.0.2.99 to example.com., ID 0.
fn update(name: &str) -> Vec<u8> {
    let mut message = update_adding(0, "example.com.", name, "192.0.2.99");
    message[..2].copy_from_slice(&[0, 0]);
    message
}

/// The A records of `name` over QUIC, on a new connection.
async fn lookup(endpoint: &Endpoint, server: SocketAddr, name: &str) -> Vec<String> {
    let conn = connect(endpoint, server).await;
    let messages = exchange(&conn, &question(0, name, 1)).await.unwrap();
    answer(&messages[0]).1
}

/// 0-RTT (RFC 9250 §4.5), through a relay that holds back the client's handshake
/// packets. A returning client's query sent in 0-RTT is answered at once, before the
/// handshake completes; an UPDATE sent in 0-RTT waits for the handshake and is applied
/// once it completes; the same kind of UPDATE whose handshake never completes (the
/// client's handshake packets never reach the server, as with a replay of its first
/// flight) is never applied.
#[test]
fn zero_rtt_answers_queries_and_holds_the_rest_until_the_handshake() {
    let server = server("", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        // A first connection, for the session ticket.
        let first = connect(&endpoint, server.quic).await;
        let _ = exchange(&first, &question(0, "www.example.com", 1)).await.unwrap();
        first.close(VarInt::from_u32(0), b"");

        let late = Relay::start(server.quic, Some(Duration::from_millis(400)));
        let (conn, accepted) =
            endpoint.connect(late.addr, "localhost").unwrap().into_0rtt().unwrap();
        let (www, early) = (question(0, "www.example.com", 1), update("early.example.com."));
        let started = Instant::now();
        let timed = |message| {
            let conn = conn.clone();
            async move { (exchange(&conn, message).await.unwrap(), started.elapsed()) }
        };
        let ((query, query_took), (updated, update_took)) =
            tokio::join!(timed(&www), timed(&early));
        assert!(accepted.await, "the server took the 0-RTT data");
        assert_eq!(answer(&query[0]).1, ["A 192.0.2.80"]);
        assert!(query_took < Duration::from_millis(300), "query answered after {query_took:?}");
        assert_eq!(answer(&updated[0]).0, Rcode::NOERROR);
        assert!(update_took >= Duration::from_millis(400), "update answered after {update_took:?}");
        assert_eq!(lookup(&endpoint, server.quic, "early.example.com").await, ["A 192.0.2.99"]);

        // The replay: the client's handshake packets never arrive.
        let never = Relay::start(server.quic, None);
        let (conn, _) = endpoint.connect(never.addr, "localhost").unwrap().into_0rtt().unwrap();
        let replayed_update = update("replayed.example.com.");
        let replayed = exchange(&conn, &replayed_update);
        let _ = tokio::time::timeout(Duration::from_secs(3), replayed).await;
        // The server gave up on the handshake (1 s) and dropped what it held.
        let dropped = eventually(Duration::from_secs(3), || {
            server.metric("tern_quic_early_dropped_total") == 1
        });
        assert!(dropped, "the held UPDATE was not dropped");
        assert!(lookup(&endpoint, server.quic, "replayed.example.com").await.is_empty());
    });
    assert_eq!(server.metric("tern_quic_early_held_total"), 2);
    assert_eq!(server.metric("tern_quic_handshakes_failed_total{reason=\"timeout\"}"), 1);
}

/// A UDP relay from a client to `server` that passes the client's datagrams at once
/// while they hold only Initial and 0-RTT packets (its first flight), and the others
/// (its handshake packets and all that follow) after `hold`, or never (`None`: the
/// server never completes the handshake, as with a replay).
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Relay {
    fn start(server: SocketAddr, hold: Option<Duration>) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        for socket in [&front, &back] {
            socket.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let client = Arc::new(std::sync::Mutex::new(None::<SocketAddr>));
        let (front2, back2) = (front.try_clone().unwrap(), back.try_clone().unwrap());
        let (stop1, stop2, client2) = (Arc::clone(&stop), Arc::clone(&stop), Arc::clone(&client));
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stop1.load(Ordering::Relaxed) {
                let Ok((n, from)) = front.recv_from(&mut buf) else { continue };
                *client.lock().unwrap() = Some(from);
                let datagram = buf[..n].to_vec();
                match (first_flight(&datagram), hold) {
                    (true, _) => drop(back.send_to(&datagram, server)),
                    (false, Some(hold)) => {
                        let back = back.try_clone().unwrap();
                        std::thread::spawn(move || {
                            std::thread::sleep(hold);
                            let _ = back.send_to(&datagram, server);
                        });
                    }
                    (false, None) => {}
                }
            }
        });
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stop2.load(Ordering::Relaxed) {
                if let Ok(n) = back2.recv(&mut buf) {
                    if let Some(client) = *client2.lock().unwrap() {
                        let _ = front2.send_to(&buf[..n], client);
                    }
                }
            }
        });
        Relay { addr, stop }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Whether every QUIC packet of `datagram` is an Initial or a 0-RTT packet (RFC 9000
/// §17.2: long headers, types 0 and 1).
fn first_flight(mut datagram: &[u8]) -> bool {
    fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
        let len = 1 << (bytes.first()? >> 6);
        let mut value = u64::from(bytes.first()? & 0x3f);
        for b in bytes.get(1..len)? {
            value = value << 8 | u64::from(*b);
        }
        Some((value, len))
    }
    while let Some(&first) = datagram.first() {
        let kind = (first >> 4) & 0x03;
        if first & 0x80 == 0 || kind > 1 || datagram.len() < 7 {
            return false;
        }
        let mut at = 5;
        let dcid = usize::from(datagram[at]);
        at += 1 + dcid;
        let Some(&scid) = datagram.get(at) else { return false };
        at += 1 + usize::from(scid);
        if kind == 0 {
            let Some((token, n)) = datagram.get(at..).and_then(varint) else { return false };
            at += n + token as usize;
        }
        let Some((length, n)) = datagram.get(at..).and_then(varint) else { return false };
        at += n + length as usize;
        datagram = datagram.get(at..).unwrap_or_default();
    }
    true
}

/// dnspython over DoQ (it uses aioquic), an independent client: a query and an AXFR.
/// `tests/doq/dnspython_doq.py` says what it checks.
#[test]
fn dnspython_queries_and_transfers_over_quic() {
    let server = server("", "2s");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/doq/dnspython_doq.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--server", &server.quic.to_string(), "--ca", server.cert_path.to_str().unwrap()])
        .args(["--hosts", &HOSTS.to_string()])
        .output()
        .unwrap();
    let said = format!(
        "{}{}\nternd: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        server.daemon.log_text()
    );
    assert!(out.status.success(), "{said}");
    assert!(said.contains("query ok") && said.contains("axfr ok"), "{said}");
}

/// `retry-above = 0`: every new client must first prove its address with a Retry
/// packet (RFC 9000 §8.1); quinn's client follows it and is served. A client over
/// `max-connections-per-client` is refused without a handshake.
#[test]
fn retry_and_the_per_client_cap() {
    let server = server("retry-above = 0\nmax-connections-per-client = 1", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let messages = exchange(&conn, &question(0, "www.example.com", 1)).await.unwrap();
        assert_eq!(answer(&messages[0]).1, ["A 192.0.2.80"]);
        let second = endpoint.connect(server.quic, "localhost").unwrap();
        let refused = tokio::time::timeout(Duration::from_secs(5), second).await.unwrap();
        assert!(
            matches!(&refused, Err(quinn::ConnectionError::ConnectionClosed(c))
                if u64::from(c.error_code) == 0x2),
            "{refused:?}"
        );
        drop(conn);
    });
    assert_eq!(server.metric("tern_quic_retries_total"), 2, "both attempts were asked");
    assert_eq!(server.metric("tern_quic_refused_total"), 1);
    assert_eq!(server.metric("tern_quic_handshakes_total"), 1);
}

/// On SIGTERM, an open connection is closed with DOQ_NO_ERROR (0), and ternd stops
/// cleanly.
#[test]
fn stopping_closes_connections_with_no_error() {
    let mut server = server("", "2s");
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let _ = exchange(&conn, &question(0, "www.example.com", 1)).await.unwrap();
        server.daemon.signal(libc::SIGTERM);
        let closed = tokio::time::timeout(Duration::from_secs(5), conn.closed()).await.unwrap();
        match closed {
            quinn::ConnectionError::ApplicationClosed(close) => {
                assert_eq!(close.error_code, VarInt::from_u32(0));
            }
            other => panic!("closed otherwise: {other}"),
        }
    });
    let status = server.daemon.wait(Duration::from_secs(5)).expect("ternd did not stop");
    assert!(status.success(), "{status:?}");
}

/// `kdig +quic` (Knot DNS's client, libngtcp2 and GnuTLS), another independent client:
/// a query with the certificate verified for `localhost` (and refused for another
/// name), and an AXFR of the whole zone.
#[test]
fn kdig_queries_and_transfers_over_quic() {
    let server = server("", "2s");
    let kdig = |args: &[&str]| {
        let out = Command::new("kdig")
            .arg(format!("+tls-ca={}", server.cert_path.display()))
            .args(args)
            .args(["+quic", "+timeout=3", "+retry=0", "-p", &server.quic.port().to_string()])
            .arg(format!("@{}", server.quic.ip()))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let said = kdig(&["+tls-hostname=localhost", "www.example.com", "A"]);
    assert!(said.contains(";; QUIC session (QUICv1)"), "{said}");
    assert!(said.contains("status: NOERROR") && said.contains("192.0.2.80"), "{said}");
    let said = kdig(&["+tls-hostname=wrong.example", "www.example.com", "A"]);
    assert!(!said.contains("192.0.2.80"), "{said}");
    let said = kdig(&["+tls-hostname=localhost", "example.com", "AXFR"]);
    assert!(
        said.contains(&format!("{} records)", HOSTS + 5)),
        "{}",
        &said[said.len().saturating_sub(300)..]
    );
    // `other.example` goes only to the client whose certificate's key is pinned.
    let dir = server.cert_path.parent().unwrap();
    let certfile = format!("+tls-certfile={}", dir.join("client.pem").display());
    let keyfile = format!("+tls-keyfile={}", dir.join("client.key").display());
    let said = kdig(&["+tls-hostname=localhost", &certfile, &keyfile, "other.example", "AXFR"]);
    assert!(said.contains("other.example.") && said.contains("records)"), "{said}");
    let said = kdig(&["+tls-hostname=localhost", "other.example", "AXFR"]);
    assert!(!said.contains("records)"), "{said}");
}

/// Server CPU time (user and system, all threads) of the process `pid`.
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY (test): sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap();
    Duration::from_micros(ticks * 1_000_000 / hz)
}

/// Not a check, a measurement (`cargo test -p ternd --test doq -- --ignored
/// --nocapture cpu_per_query`, with `TERND=target/release/ternd` for the release
/// binary): the server's CPU time per query over one persistent connection, TCP with
/// 100 queries pipelined at once, DoQ with 100 streams at once.
#[test]
#[ignore]
fn cpu_per_query_over_quic_and_tcp() {
    let binary = std::env::var_os("TERND").map(PathBuf::from);
    let server = server_with(binary.as_deref(), "", "2s");
    let pid = server.daemon.child.id();
    // Enough for a few hundred clock ticks of server CPU each (TCP costs far less).
    const TCP_QUERIES: usize = 1_000_000;
    const QUERIES: usize = 50_000;
    const AT_ONCE: usize = 100;
    let tcp_addr = server.daemon.addr;
    let before = cpu_of(pid);
    let mut stream = tcp_connect(tcp_addr);
    let batch: Vec<u8> =
        (0..AT_ONCE).flat_map(|_| framed(&question(0, "www.example.com", 1))).collect();
    for _ in 0..TCP_QUERIES / AT_ONCE {
        std::io::Write::write_all(&mut stream, &batch).unwrap();
        for _ in 0..AT_ONCE {
            tcp_read(&mut stream).unwrap();
        }
    }
    let tcp = cpu_of(pid) - before;
    let before = cpu_of(pid);
    runtime().block_on(async {
        let endpoint = client(&server.cert);
        let conn = connect(&endpoint, server.quic).await;
        let query = question(0, "www.example.com", 1);
        for _ in 0..QUERIES / AT_ONCE {
            let asks = (0..AT_ONCE).map(|_| {
                let (conn, query) = (conn.clone(), query.clone());
                async move { exchange(&conn, &query).await.unwrap() }
            });
            futures_join(asks.collect()).await;
        }
    });
    let quic = cpu_of(pid) - before;
    let per = |d: Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
    let (tcp, quic) = (per(tcp, TCP_QUERIES), per(quic, QUERIES));
    println!("server CPU per query: TCP {tcp:.2} µs, DoQ {quic:.2} µs, DoQ/TCP {:.1}", quic / tcp);
}
