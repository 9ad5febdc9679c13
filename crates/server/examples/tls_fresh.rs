//! tls_fresh: DNS over TLS (RFC 7858) with a new TLS connection for every query, the
//! load of `bench/tls.py`'s `fresh` part (the TLS counterpart of `bench/tools/tcp-fresh`).
//!
//! `tls_fresh -p PORT -f QUERIES.bin [-s ADDR] [-c CONCURRENCY] [-l SECONDS] [-r]
//! [-t aes128|aes256]`
//!
//! CONCURRENCY loops on one thread, each: connect, TLS 1.3 handshake (ALPN `dot`, key
//! exchange X25519), one query from QUERIES.bin (TCP framing: a 2-byte length, then the
//! message), its answer read and checked (ID, QR), close_notify, and the socket closed
//! with an RST (linger 0) so that the client does not run out of ports in TIME_WAIT.
//! Every read first asks the kernel to acknowledge at once (`TCP_QUICKACK`): a server
//! that writes its session tickets and its answer apart without `TCP_NODELAY` would
//! otherwise hold the answer until this client's delayed ACK (40 ms), and the loops
//! would measure that wait, not the server. Every connection must end within 2 s.
//! Cipher suites are offered in rustls's order (TLS_AES_256_GCM_SHA384 first, as
//! OpenSSL's clients do); `-t` offers one alone: `aes128` (TLS_AES_128_GCM_SHA256) or
//! `aes256` (TLS_AES_256_GCM_SHA384). With `-r` handshakes resume (RFC 8446 §2.2):
//! tickets the server sent on earlier connections are kept (rustls's in-memory store)
//! and each is offered once; without it no ticket is kept.
//!
//! The server's certificate is not checked (nor its handshake signature): a measuring
//! tool spends as little as it can, so that one client core can keep a server core busy.
//! An OpenSSL 3.0 client spends about 2.5 times the server's CPU on a handshake here,
//! and could not. Prints one line: `completed=N failed=N resumed=N seconds=S qps=Q`.
//!
//! Build: `cargo build --profile perf -p ternd --example tls_fresh`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::cell::Cell;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, HandshakeKind, SignatureScheme};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// A connection must end within this time, or it counts as failed.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// The command line.
#[derive(Debug)]
struct Args {
    server: SocketAddr,
    queries: Vec<Vec<u8>>,
    concurrency: usize,
    seconds: f64,
    resume: bool,
    suite: Option<rustls::SupportedCipherSuite>,
}

/// What the loops counted.
#[derive(Debug, Default)]
struct Counts {
    completed: Cell<u64>,
    failed: Cell<u64>,
    resumed: Cell<u64>,
    next_query: Cell<usize>,
}

fn main() {
    let args = parse_args();
    let connector = TlsConnector::from(Arc::new(client_config(args.resume, args.suite)));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let counts = Rc::new(Counts::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let args = Rc::new(args);
    let local = tokio::task::LocalSet::new();
    for _ in 0..args.concurrency {
        let (args, counts, connector) = (args.clone(), counts.clone(), connector.clone());
        local.spawn_local(async move { run_loop(&args, &counts, &connector, deadline).await });
    }
    runtime.block_on(local);
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "completed={} failed={} resumed={} seconds={seconds:.3} qps={:.1}",
        counts.completed.get(),
        counts.failed.get(),
        counts.resumed.get(),
        counts.completed.get() as f64 / seconds
    );
}

/// One loop: a connection after another until `deadline`.
async fn run_loop(args: &Args, counts: &Counts, connector: &TlsConnector, deadline: Instant) {
    while Instant::now() < deadline {
        let index = counts.next_query.get();
        counts.next_query.set(index.wrapping_add(1));
        let query = &args.queries[index % args.queries.len()];
        let once =
            tokio::time::timeout(CONNECTION_TIMEOUT, exchange(args.server, connector, query));
        match once.await {
            Ok(Ok(resumed)) => {
                counts.completed.set(counts.completed.get() + 1);
                counts.resumed.set(counts.resumed.get() + u64::from(resumed));
            }
            _ => counts.failed.set(counts.failed.get() + 1),
        }
    }
}

/// One connection, one query: whether its handshake resumed a session.
async fn exchange(
    server: SocketAddr,
    connector: &TlsConnector,
    query: &[u8],
) -> std::io::Result<bool> {
    let tcp = TcpStream::connect(server).await?;
    tcp.set_nodelay(true)?;
    socket2::SockRef::from(&tcp).set_linger(Some(Duration::ZERO))?;
    let name = ServerName::IpAddress(server.ip().into());
    let mut tls = connector.connect(name, QuickAck(tcp)).await?;
    let resumed = tls.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
    tls.write_all(query).await?;
    let mut length = [0u8; 2];
    tls.read_exact(&mut length).await?;
    let mut answer = vec![0u8; usize::from(u16::from_be_bytes(length))];
    tls.read_exact(&mut answer).await?;
    let ok = answer.len() >= 12 && answer[..2] == query[2..4] && answer[2] & 0x80 != 0;
    tls.get_mut().1.send_close_notify();
    let _ = tls.flush().await;
    match ok {
        true => Ok(resumed),
        false => Err(std::io::Error::other("not the answer to the query")),
    }
}

/// A TCP stream that acknowledges what it has received before each read.
#[derive(Debug)]
struct QuickAck(TcpStream);

impl AsyncRead for QuickAck {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let _ = socket2::SockRef::from(&self.0).set_tcp_quickack(true);
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

/// TLS 1.3, ALPN `dot`, X25519, no certificate check; tickets kept only for `resume`;
/// only `suite` if given.
fn client_config(resume: bool, suite: Option<rustls::SupportedCipherSuite>) -> ClientConfig {
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.kx_groups = vec![rustls::crypto::aws_lc_rs::kx_group::X25519];
    if let Some(suite) = suite {
        provider.cipher_suites = vec![suite];
    }
    let schemes = provider.signature_verification_algorithms.supported_schemes();
    let mut config = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(schemes)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"dot".to_vec()];
    config.resumption = match resume {
        true => Resumption::in_memory_sessions(1024),
        false => Resumption::disabled(),
    };
    config
}

/// Takes any certificate and any handshake signature (see the module comment).
#[derive(Debug)]
struct AnyCertificate(Vec<SignatureScheme>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.clone()
    }
}

fn parse_args() -> Args {
    let usage = "usage: tls_fresh -p PORT -f QUERIES.bin [-s ADDR] [-c CONCURRENCY] \
                 [-l SECONDS] [-r] [-t aes128|aes256]";
    let mut argv = std::env::args().skip(1);
    let (mut addr, mut port, mut file) = ("127.0.0.1".to_owned(), None, None);
    let (mut concurrency, mut seconds, mut resume, mut suite) = (8, 10.0, false, None);
    while let Some(flag) = argv.next() {
        if flag == "-r" {
            resume = true;
            continue;
        }
        let value = argv.next().unwrap_or_else(|| panic!("{flag} needs a value\n{usage}"));
        match flag.as_str() {
            "-s" => addr = value,
            "-p" => port = Some(value.parse::<u16>().expect("a port")),
            "-f" => file = Some(value),
            "-c" => concurrency = value.parse().expect("a count"),
            "-l" => seconds = value.parse().expect("seconds"),
            "-t" => suite = Some(cipher_suite(&value)),
            _ => panic!("unknown option {flag}\n{usage}"),
        }
    }
    let (Some(port), Some(file)) = (port, file) else { panic!("{usage}") };
    let server = SocketAddr::new(addr.parse().expect("an IP address"), port);
    assert!(concurrency >= 1 && seconds > 0.0, "{usage}");
    Args { server, queries: read_queries(&file), concurrency, seconds, resume, suite }
}

fn cipher_suite(name: &str) -> rustls::SupportedCipherSuite {
    use rustls::crypto::aws_lc_rs::cipher_suite;
    match name {
        "aes128" => cipher_suite::TLS13_AES_128_GCM_SHA256,
        "aes256" => cipher_suite::TLS13_AES_256_GCM_SHA384,
        _ => panic!("-t {name}: expected aes128 or aes256"),
    }
}

/// The framed queries of `path` (each with its 2-byte length).
fn read_queries(path: &str) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut queries = Vec::new();
    let mut rest = data.as_slice();
    while rest.len() >= 2 {
        let end = 2 + usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        if end < 14 || end > rest.len() {
            break;
        }
        queries.push(rest[..end].to_vec());
        rest = &rest[end..];
    }
    assert!(!queries.is_empty(), "{path}: no queries");
    queries
}
