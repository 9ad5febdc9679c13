//! The server as a client of other servers: the SOA query of a refresh, zone transfers
//! in (AXFR, IXFR), NOTIFY out and updates forwarded to a primary, each signed with the remote's TSIG key when it has
//! one and checked as RFC 8945 §5.3 says.
//!
//! These calls block (with timeouts on every step) and run on the control plane's
//! blocking threads, never on the data plane. What the records of a transfer mean is
//! `tern_zone::transfer`'s; this module moves messages. A transfer in is bounded by
//! `[transfer] max-zone-size` bytes, by `max-time-in` from the connection to the last
//! message, and by `idle-timeout-in` without a byte from the primary: each read waits at
//! most the smaller of the idle timeout and what is left of the whole, so that a primary
//! sending a record now and then, or a byte at a time, cannot hold a transfer slot (and
//! the zone's refresh) for longer than `max-time-in`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::tsig::{
    self, Key, Mac, SequenceStep, SequenceVerifier, TsigFields, TsigRecord, TsigStatus,
};
use tern_wire::{Class, Dname, NameBuilder, Opcode, Rcode, Rtype};
use tern_zone::transfer::Incoming;
use tern_zone::RecordData;

use tern_control::clock::unix_now;

pub use tern_control::peer::{ClientError, Limits, Peer, TransferIn};

/// The server's sockets, as the control plane's [`Network`](tern_control::peer::Network):
/// the functions below.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sockets;

impl tern_control::peer::Network for Sockets {
    fn soa_serial(&self, peer: Peer<'_>, zone: &Dname, timeout: Duration) -> Result<u32> {
        soa_serial(peer, zone, timeout)
    }

    fn transfer(
        &self,
        peer: Peer<'_>,
        zone: &Dname,
        soa: Option<&RecordData>,
        limits: Limits,
    ) -> Result<TransferIn> {
        transfer(peer, zone, soa, limits)
    }

    fn notify(
        &self,
        peer: Peer<'_>,
        zone: &Dname,
        soa: &RecordData,
        timeout: Duration,
    ) -> Result<()> {
        notify(peer, zone, soa, timeout)
    }

    fn forward(&self, peer: Peer<'_>, message: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        forward(peer, message, timeout)
    }

    fn addresses(&self, host: &tern_wire::Name) -> std::io::Result<Vec<std::net::IpAddr>> {
        let host = host.to_string();
        let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(host.trim_end_matches('.'), 53))?;
        Ok(addrs.map(|a| a.ip()).collect())
    }
}

type Result<T> = std::result::Result<T, ClientError>;

/// A request message, signed when `key` is given; returns it and its MAC.
fn request(
    opcode: Opcode,
    zone: &Dname,
    qtype: Rtype,
    soa: Option<(Section, &RecordData)>,
    key: Option<&Key>,
) -> Result<(Vec<u8>, Option<Mac>)> {
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let broken =
        |e: tern_wire::Error| ClientError::Broken(format!("cannot write the request: {e}"));
    let mut w = MessageWriter::new(&mut buf, 65535, &mut table).map_err(broken)?;
    w.set_id(random_id());
    let mut flags = Flags(0);
    flags.set_opcode(opcode);
    if opcode == Opcode::NOTIFY {
        flags.set(Flags::AA, true); // RFC 1996 §3.7
    }
    w.set_flags(flags);
    w.push_question(zone, qtype, Class::IN).map_err(broken)?;
    if let Some((section, soa)) = soa {
        w.push_record(section, &soa.owner, Rtype::SOA, Class::IN, soa.ttl, &soa.rdata)
            .map_err(broken)?;
    }
    let mac = match key {
        Some(key) => Some(w.sign_tsig(key, None, &TsigFields::at(unix_now())).map_err(broken)?),
        None => None,
    };
    Ok((w.finish().to_vec(), mac))
}

/// A message ID nobody can guess easily (RFC 5452 §4.3 asks for it on queries).
fn random_id() -> u16 {
    let mut bytes = [0u8; 2];
    if crate::random::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        return nanos as u16;
    }
    u16::from_be_bytes(bytes)
}

/// Checks an answer's header against the request, and its TSIG when we signed.
fn check_answer(answer: &[u8], request: &[u8], key: Option<&Key>, mac: Option<&Mac>) -> Result<()> {
    let reader = MessageReader::new(answer).map_err(|e| ClientError::Broken(e.to_string()))?;
    let header = reader.header();
    let id = request.get(..2).ok_or_else(|| ClientError::Broken("empty request".into()))?;
    if !header.flags.has(Flags::QR) || answer.get(..2) != Some(id) {
        return Err(ClientError::Broken("not an answer to our request".into()));
    }
    if let (Some(key), Some(mac)) = (key, mac) {
        let keys = std::slice::from_ref(key);
        match tsig::verify_message(answer, keys, Some(mac.as_slice()), unix_now()) {
            Ok(Some(outcome)) if outcome.status == TsigStatus::Ok => {}
            Ok(Some(outcome)) => return Err(ClientError::Tsig(tsig_status(outcome.status))),
            Ok(None) => {
                let rcode = Rcode::from_parts(header.flags.rcode_bits(), 0);
                if rcode != Rcode::NOERROR {
                    return Err(ClientError::Rcode(rcode));
                }
                return Err(ClientError::Tsig("the answer is not signed".into()));
            }
            Err(e) => return Err(ClientError::Tsig(e.to_string())),
        }
    }
    let rcode = Rcode::from_parts(header.flags.rcode_bits(), 0);
    if rcode != Rcode::NOERROR {
        return Err(ClientError::Rcode(rcode));
    }
    Ok(())
}

/// Sends `message` over UDP and waits for the answer to it (up to three tries).
fn udp_exchange(
    peer: Peer<'_>,
    message: &[u8],
    mac: Option<&Mac>,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let socket =
        UdpSocket::bind(SocketAddr::new(source(peer), 0)).map_err(|e| via_error(peer, e))?;
    socket.connect(peer.addr)?;
    let per_try = (timeout / 3).max(Duration::from_millis(200));
    socket.set_read_timeout(Some(per_try))?;
    let mut buf = vec![0u8; 65535];
    let mut last = ClientError::Io(std::io::ErrorKind::TimedOut.into());
    for _ in 0..3 {
        socket.send(message)?;
        let deadline = Instant::now() + per_try;
        while Instant::now() < deadline {
            let n = match socket.recv(&mut buf) {
                Ok(n) => n,
                Err(e) => {
                    last = e.into();
                    break;
                }
            };
            let answer = buf.get(..n).unwrap_or_default();
            match check_answer(answer, message, peer.key, mac) {
                Err(ClientError::Broken(_)) => continue, // a stray datagram: keep waiting
                Err(e) => return Err(e),
                Ok(()) => return Ok(answer.to_vec()),
            }
        }
    }
    Err(last)
}

/// The serial of `zone` at the remote (the SOA query of a refresh, RFC 1034 §4.3.5).
pub fn soa_serial(peer: Peer<'_>, zone: &Dname, timeout: Duration) -> Result<u32> {
    let (message, mac) = request(Opcode::QUERY, zone, Rtype::SOA, None, peer.key)?;
    let answer = udp_exchange(peer, &message, mac.as_ref(), timeout)?;
    let mut reader = MessageReader::new(&answer).map_err(|e| ClientError::Broken(e.to_string()))?;
    let mut scratch = vec![0u8; 65535];
    while let Ok(Some(record)) = reader.record(&mut scratch) {
        if record.section == Section::Answer
            && record.rtype == Rtype::SOA
            && record.owner.eq_ignore_case(zone)
        {
            return tern_zone::records::soa_serial(record.rdata)
                .ok_or_else(|| ClientError::Broken("malformed SOA".into()));
        }
    }
    Err(ClientError::Broken(format!("no SOA of {zone} in the answer")))
}

/// Sends a NOTIFY for `zone` with its current SOA (RFC 1996 §3.7) and waits for the
/// acknowledgement.
pub fn notify(peer: Peer<'_>, zone: &Dname, soa: &RecordData, timeout: Duration) -> Result<()> {
    let (message, mac) =
        request(Opcode::NOTIFY, zone, Rtype::SOA, Some((Section::Answer, soa)), peer.key)?;
    udp_exchange(peer, &message, mac.as_ref(), timeout).map(drop)
}

/// Transfers `zone` over TCP: IXFR from `ours` (our SOA) when given, else AXFR.
pub fn transfer(
    peer: Peer<'_>,
    zone: &Dname,
    ours: Option<&RecordData>,
    limits: Limits,
) -> Result<TransferIn> {
    let (qtype, incoming) = match ours.and_then(RecordData::soa_serial) {
        Some(serial) => (Rtype::IXFR, Incoming::ixfr(zone, serial)),
        None => (Rtype::AXFR, Incoming::axfr(zone)),
    };
    let soa = ours.filter(|_| qtype == Rtype::IXFR).map(|soa| (Section::Authority, soa));
    let (message, mac) = request(Opcode::QUERY, zone, qtype, soa, peer.key)?;
    let deadline = Deadline::new(limits);
    let stream = tcp_send(peer, &message, limits.timeout.min(limits.max_time))?;
    let mut reader =
        Stream { tcp: stream, incoming, verifier: None, limits, deadline, bytes: 0, messages: 0 };
    if let (Some(key), Some(mac)) = (peer.key, mac.as_ref()) {
        reader.verifier = Some(SequenceVerifier::new(key, mac.as_slice()));
    }
    reader.read_all(&message)?;
    let (messages, bytes) = (reader.messages, reader.bytes);
    let records = reader.incoming.records();
    let outside = reader.incoming.outside().clone();
    let received = reader.incoming.finish().map_err(|e| ClientError::Broken(e.to_string()))?;
    Ok(TransferIn { received, messages, records, bytes, outside })
}

/// When a transfer in must be over, and how long it may wait for a byte.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    end: Instant,
    max_time: Duration,
    idle: Duration,
}

impl Deadline {
    /// From now, as `limits` say.
    fn new(limits: Limits) -> Deadline {
        Deadline {
            end: Instant::now() + limits.max_time,
            max_time: limits.max_time,
            idle: limits.idle,
        }
    }

    /// Fills `buf` from `tcp`, each read waiting at most the idle timeout or what is
    /// left of the whole, whichever is less.
    fn read_exact(&self, tcp: &mut TcpStream, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
            let left = self.end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::TooLong(self.max_time));
            }
            let wait = self.idle.min(left);
            tcp.set_read_timeout(Some(wait))?;
            match tcp.read(rest) {
                Ok(0) => return Err(cut_short(std::io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) && wait < self.idle => {
                    return Err(ClientError::TooLong(self.max_time))
                }
                Err(e) if is_timeout(&e) => return Err(ClientError::Idle(self.idle)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// A read that timed out (`SO_RCVTIMEO` gives `WouldBlock` on Unix).
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// Sends a dynamic update as it was received (its TSIG record, if any, untouched) to a
/// primary over TCP and returns the primary's answer (RFC 2136 §6), which must be an
/// UPDATE answer with the request's ID. The answer is relayed to the client as it is,
/// so it is not judged here: the client checks its signature.
pub fn forward(peer: Peer<'_>, message: &[u8], timeout: Duration) -> Result<Vec<u8>> {
    let mut stream = tcp_send(peer, message, timeout)?;
    let mut prefix = [0u8; 2];
    stream.read_exact(&mut prefix).map_err(cut_short)?;
    let mut answer = vec![0u8; usize::from(u16::from_be_bytes(prefix))];
    stream.read_exact(&mut answer).map_err(cut_short)?;
    let header = MessageReader::new(&answer).map_err(|e| ClientError::Broken(e.to_string()))?;
    let (id, flags) = (header.header().id, header.header().flags);
    let request_id = message.first_chunk::<2>().map(|b| u16::from_be_bytes(*b));
    if !flags.has(Flags::QR) || flags.opcode() != Opcode::UPDATE || Some(id) != request_id {
        return Err(ClientError::Broken("not the answer to the forwarded update".into()));
    }
    Ok(answer)
}

/// The local address to send to `peer` from: its `via`, else the unspecified address of
/// its family (the kernel chooses).
fn source(peer: Peer<'_>) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    peer.source.unwrap_or(if peer.addr.is_ipv6() {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    })
}

/// A socket that cannot take the remote's `via` address, said so.
fn via_error(peer: Peer<'_>, e: std::io::Error) -> ClientError {
    match peer.source {
        Some(via) => ClientError::Io(std::io::Error::new(
            e.kind(),
            format!("cannot send from {via} (the remote's `via`): {e}"),
        )),
        None => ClientError::Io(e),
    }
}

/// A TCP connection to `peer` from its `via` address when it has one.
fn tcp_connect(peer: Peer<'_>, timeout: Duration) -> Result<TcpStream> {
    let Some(via) = peer.source else {
        return Ok(TcpStream::connect_timeout(&peer.addr, timeout)?);
    };
    let domain = socket2::Domain::for_address(peer.addr);
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.bind(&SocketAddr::new(via, 0).into()).map_err(|e| via_error(peer, e))?;
    socket.connect_timeout(&peer.addr.into(), timeout)?;
    Ok(socket.into())
}

/// Connects to `peer` over TCP (every step within `timeout`) and sends `message`.
fn tcp_send(peer: Peer<'_>, message: &[u8], timeout: Duration) -> Result<TcpStream> {
    let mut stream = tcp_connect(peer, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
    let len =
        u16::try_from(message.len()).map_err(|_| ClientError::Broken("request too long".into()))?;
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(message);
    stream.write_all(&framed)?;
    Ok(stream)
}

/// A TSIG verdict in words (TSIG error codes named as RFC 8945 §3 names them, not as
/// the RCODEs that share their numbers).
fn tsig_status(status: TsigStatus) -> String {
    let name = |rcode: Rcode| match rcode.0 {
        16 => "BADSIG".to_owned(),
        17 => "BADKEY".to_owned(),
        18 => "BADTIME".to_owned(),
        22 => "BADTRUNC".to_owned(),
        _ => rcode.to_string(),
    };
    match status {
        TsigStatus::Ok => "verified".into(),
        TsigStatus::BadKey => "the answer is signed with a key we do not expect (BADKEY)".into(),
        TsigStatus::BadSig => "the answer's signature does not verify (BADSIG)".into(),
        TsigStatus::BadTime => "the answer's time is outside the fudge (BADTIME)".into(),
        TsigStatus::BadTrunc => "the answer's MAC is truncated too much (BADTRUNC)".into(),
        TsigStatus::Peer(error) => format!("the remote refused our signature: {}", name(error)),
    }
}

/// A connection that ended before the transfer did says so.
fn cut_short(e: std::io::Error) -> ClientError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            ClientError::Broken("the primary closed the connection mid-transfer".into())
        }
        _ => e.into(),
    }
}

/// Whether `message` answers `request` (its ID, and QR set); its RCODE.
fn check_ours(message: &[u8], request: &[u8]) -> Result<Rcode> {
    let reader = MessageReader::new(message).map_err(|e| ClientError::Broken(e.to_string()))?;
    let flags = reader.header().flags;
    if message.get(..2) != request.get(..2) || !flags.has(Flags::QR) {
        return Err(ClientError::Broken("a message that is not ours".into()));
    }
    Ok(Rcode::from_parts(flags.rcode_bits(), 0))
}

/// The messages of one transfer being read.
struct Stream {
    tcp: TcpStream,
    incoming: Incoming,
    verifier: Option<SequenceVerifier>,
    limits: Limits,
    deadline: Deadline,
    bytes: u64,
    messages: u64,
}

impl Stream {
    /// Reads messages until the transfer's closing SOA.
    fn read_all(&mut self, request: &[u8]) -> Result<()> {
        let mut buf = vec![0u8; 65535];
        let mut scratch = vec![0u8; 65535];
        while !self.incoming.is_done() {
            let len = self.read_message(&mut buf)?;
            let message = buf.get(..len).unwrap_or_default();
            let rcode = check_ours(message, request)?;
            // The records are read (into the transfer, not yet published) before the
            // MAC is checked, so that the message is walked once: a message that fails
            // fails the whole transfer.
            let tsig = self.records(message, &mut scratch)?;
            self.check(message, tsig, rcode)?;
        }
        if let Some(verifier) = &self.verifier {
            if !verifier.last_was_signed() {
                return Err(ClientError::Tsig("the last message is not signed".into()));
            }
        }
        Ok(())
    }

    /// One length-prefixed message.
    fn read_message(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut prefix = [0u8; 2];
        self.deadline.read_exact(&mut self.tcp, &mut prefix)?;
        let len = usize::from(u16::from_be_bytes(prefix));
        let body =
            buf.get_mut(..len).ok_or_else(|| ClientError::Broken("message too long".into()))?;
        self.deadline.read_exact(&mut self.tcp, body)?;
        self.messages += 1;
        self.bytes += len as u64;
        if self.bytes > self.limits.max_size {
            return Err(ClientError::TooLarge(self.limits.max_size));
        }
        Ok(len)
    }

    /// RCODE and TSIG of one message, whose TSIG record (if any) starts at `tsig`.
    fn check(&mut self, message: &[u8], tsig: Option<usize>, rcode: Rcode) -> Result<()> {
        if let Some(verifier) = &mut self.verifier {
            let found = tsig.map(|at| TsigRecord::parse_at(message, at)).transpose();
            let step = found.and_then(|found| verifier.verify_found(message, found, unix_now()));
            match step {
                Ok(SequenceStep::Signed(TsigStatus::Ok) | SequenceStep::Unsigned) => {}
                Ok(SequenceStep::Signed(TsigStatus::Peer(error))) => {
                    return Err(ClientError::Tsig(format!("the primary reports {error}")))
                }
                Ok(SequenceStep::Signed(status)) => {
                    return Err(ClientError::Tsig(format!("{status:?}")))
                }
                Err(_) if rcode != Rcode::NOERROR => return Err(ClientError::Rcode(rcode)),
                Err(e) => return Err(ClientError::Tsig(e.to_string())),
            }
        }
        if rcode != Rcode::NOERROR {
            return Err(ClientError::Rcode(rcode));
        }
        Ok(())
    }

    /// Feeds the answer records of one message to the transfer; where its TSIG record
    /// starts, if it has one.
    fn records(&mut self, message: &[u8], scratch: &mut [u8]) -> Result<Option<usize>> {
        let mut reader =
            MessageReader::new(message).map_err(|e| ClientError::Broken(e.to_string()))?;
        let mut owner = NameBuilder::new();
        loop {
            let record = match reader.record_in(&mut owner, scratch) {
                Ok(Some(record)) => record,
                Ok(None) => return Ok(reader.tsig_offset()),
                Err(e) => return Err(ClientError::Broken(e.to_string())),
            };
            if record.section != Section::Answer {
                continue;
            }
            self.incoming.record_read(&record).map_err(|e| ClientError::Broken(e.to_string()))?;
        }
    }
}
