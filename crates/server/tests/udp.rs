//! The UDP data plane, in-process with the test handler: answers, batches, drops,
//! garbage, the answer's source address on a wildcard socket, and the stop drain.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use common::*;

const ONE_WORKER: &str = "[server]\nlisten = [\"127.0.0.1:0\"]\nudp-workers = 1\ntcp-workers = 1\n";

#[test]
fn answers_a_query() {
    let server = start(ONE_WORKER);
    let addr = server.local_addrs()[0];
    let q = query(0x1234, "www.example.com");
    let answer = udp_ask(addr, &q).expect("an answer");
    assert_eq!(answer.len(), q.len());
    assert_eq!(id_of(&answer), 0x1234);
    assert_eq!(answer[2], q[2] | 0x80);
    let ctx = udp_ask(addr, &query(7, "ctx")).unwrap();
    assert_eq!(&ctx[12..], format!("udp {addr} - 1232").as_bytes());
}

#[test]
fn every_query_of_a_burst_is_answered_by_several_workers() {
    let server = start("[server]\nlisten = [\"127.0.0.1:0\"]\nudp-workers = 2\ntcp-workers = 1\n");
    let addr = server.local_addrs()[0];
    let clients: Vec<UdpSocket> = (0..8).map(|_| udp_client()).collect();
    let per_client = 40u16;
    for id in 0..per_client {
        for client in &clients {
            client.send_to(&query(id, "burst.test"), addr).unwrap();
        }
    }
    for client in &clients {
        let mut seen = vec![false; usize::from(per_client)];
        let mut buf = [0u8; 512];
        for _ in 0..per_client {
            let (len, from) = client.recv_from(&mut buf).expect("answer within 2 s");
            assert_eq!(from, addr);
            seen[usize::from(id_of(&buf[..len]))] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
    // Counters are updated just after a batch is sent.
    let want = 8 * u64::from(per_client);
    assert!(eventually(Duration::from_secs(1), || server.stats().udp_received == want));
}

#[test]
fn dropped_and_garbage_datagrams_get_no_answer_and_harm_nothing() {
    let server = start(ONE_WORKER);
    let addr = server.local_addrs()[0];
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    socket.send_to(&query(1, "drop.test"), addr).unwrap();
    socket.send_to(&[], addr).unwrap();
    socket.send_to(&[0xff; 5], addr).unwrap();
    socket.send_to(&vec![0xab; 65507], addr).unwrap(); // largest IPv4 UDP payload
    assert!(socket.recv_from(&mut [0u8; 512]).is_err(), "no answer to any of them");
    assert!(udp_ask(addr, &query(2, "after.test")).is_some(), "still serving");
    assert!(eventually(Duration::from_secs(1), || server.stats().udp_received == 5));
}

#[test]
fn large_query_is_read_whole_and_answer_is_capped_by_payload_max() {
    let server =
        start("[server]\nlisten = [\"127.0.0.1:0\"]\nudp-workers = 1\nudp-payload-max = 4096\n");
    let addr = server.local_addrs()[0];
    let mut big_query = query(9, "echo.test");
    big_query.resize(3000, 0);
    assert_eq!(udp_ask(addr, &big_query).unwrap().len(), 3000);
    assert_eq!(udp_ask(addr, &query(10, "big")).unwrap().len(), 4096);
    big_query.resize(5000, 0); // the echo would exceed 4096: the handler declines
    assert!(udp_ask(addr, &big_query).is_none());
}

/// Bound to 0.0.0.0, a query to 127.0.0.2 is answered from 127.0.0.2 (IP_PKTINFO).
#[test]
fn answer_leaves_from_the_address_asked_ipv4() {
    let port = free_port();
    let server = start(&format!("[server]\nlisten = [\"0.0.0.0:{port}\"]\nudp-workers = 1\n"));
    assert_eq!(server.local_addrs()[0].port(), port);
    for ip in ["127.0.0.2", "127.0.0.3", "127.0.0.1"] {
        let target: SocketAddr = format!("{ip}:{port}").parse().unwrap();
        let socket = UdpSocket::bind("0.0.0.0:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        socket.send_to(&query(3, "ctx"), target).unwrap();
        let mut buf = [0u8; 512];
        let (len, from) = socket.recv_from(&mut buf).expect("an answer");
        assert_eq!(from, target, "answer must come from the address asked");
        assert_eq!(&buf[12..len], format!("udp {target} - 1232").as_bytes(), "ctx.local");
    }
}

#[test]
fn answer_leaves_from_the_address_asked_ipv6() {
    if UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("skipped: no IPv6 loopback");
        return;
    }
    let server = start("[server]\nlisten = [\"[::]:0\", \"0.0.0.0:0\"]\nudp-workers = 1\n");
    let port = server.local_addrs()[0].port();
    let target: SocketAddr = format!("[::1]:{port}").parse().unwrap();
    let socket = UdpSocket::bind("[::]:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    socket.send_to(&query(4, "ctx"), target).unwrap();
    let mut buf = [0u8; 512];
    let (len, from) = socket.recv_from(&mut buf).expect("an answer");
    assert_eq!(from, target);
    assert_eq!(&buf[12..len], format!("udp {target} - 1232").as_bytes());
    // The same worker also polls the IPv4 wildcard socket.
    let v4 = server.local_addrs()[1];
    assert!(udp_ask(SocketAddr::from(([127, 0, 0, 1], v4.port())), &query(5, "x")).is_some());
}

#[test]
fn stop_answers_what_is_queued_and_returns_quickly() {
    let server = start(ONE_WORKER);
    let addr = server.local_addrs()[0];
    let socket = udp_client();
    for id in 0..20 {
        socket.send_to(&query(id, "late.test"), addr).unwrap();
    }
    let started = Instant::now();
    let report = server.shutdown();
    assert!(started.elapsed() < Duration::from_secs(2), "stop took {:?}", started.elapsed());
    let mut answered = 0;
    let mut buf = [0u8; 512];
    socket.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    while socket.recv_from(&mut buf).is_ok() {
        answered += 1;
    }
    assert_eq!(answered, 20);
    assert_eq!(report.stats.udp_sent, 20);
}
