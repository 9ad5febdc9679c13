//! doq_load: many queries in flight over a few persistent connections, DNS over QUIC
//! (RFC 9250), DNS over TLS (RFC 7858) or plain TCP (RFC 7766): the load of
//! `bench/doq.py`, which compares the server's CPU per query over them with one client
//! shape.
//!
//! `doq_load -m doq|dot|tcp -p PORT -f QUERIES.bin --ca CERT.pem [-s ADDR] [-n NAME]
//! [-c CONNECTIONS] [-q IN_FLIGHT] [-l SECONDS] [--count QUERIES]`
//!
//! CONNECTIONS connections (default 4) are opened first (TLS 1.3, ALPN `doq` or `dot`,
//! the server's certificate checked against CERT.pem for NAME, default `ns.bench.test`),
//! then each keeps IN_FLIGHT queries (default 100) outstanding until SECONDS have passed
//! (default 8) or, with `--count`, until that many answers have come in all together.
//! Queries come from QUIC/TCP-framed QUERIES.bin (each behind its 2-byte length, as
//! `bench/datasets.py` writes them), in turn.
//!
//! * doq: every query on a stream of its own, its ID set to 0 (§4.2.1), the stream
//!   finished after it; the answer is read to the stream's end and checked (ID 0, QR).
//! * dot: queries pipelined on the connection, each in a TLS record (and a write) of
//!   its own as room frees up, as dnsperf sends them; answers read in any order and
//!   checked (QR).
//! * tcp: the same as dot without TLS (CERT.pem is not read).
//!
//! Everything runs on one thread (pin it with `taskset`). Prints one line:
//! `completed=N failed=N seconds=S qps=Q`.
//!
//! Build: `cargo build --release -p ternd --example doq_load`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::crypto::rustls::QuicClientConfig;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::ClientConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;

/// A query must be answered within this time, or it counts as failed.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// The command line.
#[derive(Debug)]
struct Args {
    quic: bool,
    /// Plain TCP: dot's load without TLS.
    plain: bool,
    server: SocketAddr,
    name: String,
    ca: String,
    queries: Vec<Vec<u8>>,
    connections: usize,
    in_flight: usize,
    seconds: f64,
    count: Option<u64>,
}

/// What the loops counted, and when they stop.
#[derive(Debug)]
struct Counts {
    completed: Cell<u64>,
    failed: Cell<u64>,
    next_query: Cell<usize>,
    deadline: Instant,
    limit: u64,
}

impl Counts {
    /// Whether another query may be sent.
    fn more(&self) -> bool {
        Instant::now() < self.deadline && self.completed.get() + self.failed.get() < self.limit
    }

    /// The next query of `queries`, in turn.
    fn next<'q>(&self, queries: &'q [Vec<u8>]) -> &'q [u8] {
        let index = self.next_query.get();
        self.next_query.set(index.wrapping_add(1));
        &queries[index % queries.len()]
    }

    fn count(&self, ok: bool) {
        let cell = if ok { &self.completed } else { &self.failed };
        cell.set(cell.get() + 1);
    }
}

fn main() {
    let args = Rc::new(parse_args());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    let (elapsed, counts) = local.block_on(&runtime, async {
        match (args.quic, args.plain) {
            (true, _) => run_doq(&args, Arc::new(client_config(&args))).await,
            (false, false) => run_dot(&args, Arc::new(client_config(&args))).await,
            (false, true) => run_tcp(&args).await,
        }
    });
    let (done, failed) = (counts.completed.get(), counts.failed.get());
    let seconds = elapsed.as_secs_f64();
    println!(
        "completed={done} failed={failed} seconds={seconds:.3} qps={:.0}",
        done as f64 / seconds
    );
}

fn counts(args: &Args) -> Rc<Counts> {
    Rc::new(Counts {
        completed: Cell::new(0),
        failed: Cell::new(0),
        next_query: Cell::new(0),
        deadline: Instant::now() + Duration::from_secs_f64(args.seconds),
        limit: args.count.unwrap_or(u64::MAX),
    })
}

/// DoQ: the connections first, then IN_FLIGHT loops on each, a stream per query.
async fn run_doq(args: &Rc<Args>, tls: Arc<ClientConfig>) -> (Duration, Rc<Counts>) {
    let crypto = QuicClientConfig::try_from(tls).unwrap();
    let bind: SocketAddr =
        if args.server.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().unwrap();
    let mut endpoint = quinn::Endpoint::client(bind).unwrap();
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let mut conns = Vec::new();
    for _ in 0..args.connections {
        conns.push(endpoint.connect(args.server, &args.name).unwrap().await.unwrap());
    }
    let counts = counts(args);
    let started = Instant::now();
    let mut loops = tokio::task::JoinSet::new();
    for conn in &conns {
        for _ in 0..args.in_flight {
            let (conn, args, counts) = (conn.clone(), args.clone(), counts.clone());
            loops.spawn_local(async move {
                while counts.more() {
                    let query = counts.next(&args.queries);
                    let ok = tokio::time::timeout(QUERY_TIMEOUT, doq_exchange(&conn, query)).await;
                    counts.count(matches!(ok, Ok(Ok(true))));
                }
            });
        }
    }
    while loops.join_next().await.is_some() {}
    let elapsed = started.elapsed();
    for conn in conns {
        conn.close(0u32.into(), b"");
    }
    endpoint.wait_idle().await;
    (elapsed, counts)
}

/// One query on a new stream (ID 0), its answer read to the stream's end; true if it
/// is an answer with ID 0.
async fn doq_exchange(
    conn: &quinn::Connection,
    framed: &[u8],
) -> Result<bool, Box<dyn std::error::Error>> {
    let (mut send, mut recv) = conn.open_bi().await?;
    let mut query = framed.to_vec();
    query[2..4].fill(0);
    send.write_all(&query).await?;
    send.finish()?;
    let answer = recv.read_to_end(65537).await?;
    Ok(answer.len() >= 14 && answer[2..4] == [0, 0] && answer[4] & 0x80 != 0)
}

/// DoT: the connections first, then on each a writer keeping IN_FLIGHT queries out and
/// a reader taking the answers.
async fn run_dot(args: &Rc<Args>, tls: Arc<ClientConfig>) -> (Duration, Rc<Counts>) {
    let connector = TlsConnector::from(tls);
    let mut streams = Vec::new();
    for _ in 0..args.connections {
        let tcp = TcpStream::connect(args.server).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let name = ServerName::try_from(args.name.clone()).unwrap();
        streams.push(connector.connect(name, tcp).await.unwrap());
    }
    pipelined(args, streams).await
}

/// Plain TCP: dot's load without TLS.
async fn run_tcp(args: &Rc<Args>) -> (Duration, Rc<Counts>) {
    let mut streams = Vec::new();
    for _ in 0..args.connections {
        let tcp = TcpStream::connect(args.server).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        streams.push(tcp);
    }
    pipelined(args, streams).await
}

/// On each of `streams` a writer keeping IN_FLIGHT queries out and a reader taking the
/// answers, until the run's end.
async fn pipelined<S>(args: &Rc<Args>, streams: Vec<S>) -> (Duration, Rc<Counts>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + 'static,
{
    let counts = counts(args);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for stream in streams {
        let (mut reader, mut writer) = tokio::io::split(stream);
        let room = Rc::new(Semaphore::new(args.in_flight));
        let (args, counts_w, counts_r) = (args.clone(), counts.clone(), counts.clone());
        let room_r = room.clone();
        tasks.spawn_local(async move {
            while counts_w.more() {
                let Ok(permit) = room.acquire().await else { break };
                permit.forget();
                // A TLS record (and a write) per query, as a stub resolver or dnsperf
                // sends them.
                if writer.write_all(counts_w.next(&args.queries)).await.is_err() {
                    break;
                }
            }
            room.close();
            let _ = writer.shutdown().await;
        });
        tasks.spawn_local(async move {
            let mut answer = vec![0u8; 65535];
            loop {
                let read = tokio::time::timeout(QUERY_TIMEOUT, dot_read(&mut reader, &mut answer));
                match read.await {
                    Ok(Ok(Some(ok))) => counts_r.count(ok),
                    _ => break,
                }
                room_r.add_permits(1);
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    (started.elapsed(), counts)
}

/// One answer off a DoT connection: Some(whether it is a response), None at its end.
async fn dot_read<R: AsyncReadExt + Unpin>(
    reader: &mut R,
    buf: &mut [u8],
) -> std::io::Result<Option<bool>> {
    let mut length = [0u8; 2];
    if reader.read_exact(&mut length).await.is_err() {
        return Ok(None);
    }
    let len = usize::from(u16::from_be_bytes(length));
    reader.read_exact(&mut buf[..len]).await?;
    Ok(Some(len >= 12 && buf[2] & 0x80 != 0))
}

/// TLS 1.3 with the certificate of `--ca` as the only root, ALPN by mode.
fn client_config(args: &Args) -> ClientConfig {
    let pem = std::fs::read(&args.ca).unwrap_or_else(|e| panic!("{}: {e}", args.ca));
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile_certs(&pem) {
        roots.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![if args.quic { b"doq".to_vec() } else { b"dot".to_vec() }];
    config
}

/// The certificates of a PEM file.
fn rustls_pemfile_certs(pem: &[u8]) -> Vec<CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::pem_slice_iter(pem).map(Result::unwrap).collect()
}

fn parse_args() -> Args {
    let usage = "usage: doq_load -m doq|dot|tcp -p PORT -f QUERIES.bin --ca CERT.pem [-s ADDR] \
                 [-n NAME] [-c CONNECTIONS] [-q IN_FLIGHT] [-l SECONDS] [--count QUERIES]";
    let mut argv = std::env::args().skip(1);
    let (mut mode, mut port, mut file, mut ca) = (None, None, None, None);
    let mut host = "127.0.0.1".to_string();
    let mut name = "ns.bench.test".to_string();
    let (mut connections, mut in_flight, mut seconds, mut count) = (4, 100, 8.0, None);
    while let Some(flag) = argv.next() {
        let mut value = || argv.next().unwrap_or_else(|| panic!("{usage}"));
        match flag.as_str() {
            "-m" => mode = Some(value()),
            "-p" => port = Some(value().parse::<u16>().expect(usage)),
            "-f" => file = Some(value()),
            "--ca" => ca = Some(value()),
            "-s" => host = value(),
            "-n" => name = value(),
            "-c" => connections = value().parse().expect(usage),
            "-q" => in_flight = value().parse().expect(usage),
            "-l" => seconds = value().parse().expect(usage),
            "--count" => count = Some(value().parse().expect(usage)),
            _ => panic!("{usage}"),
        }
    }
    let (quic, plain) = match mode.as_deref() {
        Some("doq") => (true, false),
        Some("dot") => (false, false),
        Some("tcp") => (false, true),
        _ => panic!("{usage}"),
    };
    let server = SocketAddr::new(host.parse().expect(usage), port.expect(usage));
    let queries = read_queries(&file.expect(usage));
    let ca = if plain { ca.unwrap_or_default() } else { ca.expect(usage) };
    Args { quic, plain, server, name, ca, queries, connections, in_flight, seconds, count }
}

/// The framed queries of `path` (each with its 2-byte length).
fn read_queries(path: &str) -> Vec<Vec<u8>> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut queries = Vec::new();
    let mut rest = data.as_slice();
    while let [hi, lo, ..] = *rest {
        let end = 2 + usize::from(u16::from_be_bytes([hi, lo]));
        if end < 14 || end > rest.len() {
            break;
        }
        let (query, tail) = rest.split_at(end);
        queries.push(query.to_vec());
        rest = tail;
    }
    assert!(!queries.is_empty(), "{path}: no queries");
    queries
}
