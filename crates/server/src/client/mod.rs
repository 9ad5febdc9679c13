//! The server as a client of other servers: the SOA query of a refresh, zone transfers
//! in (AXFR, IXFR, [`transfer`]), NOTIFY out and updates forwarded to a primary, each
//! signed with the remote's TSIG key when it has one and checked as RFC 8945 §5.3 says.
//! A remote with `tls` is reached over TLS ([`tls`], RFC 9103) for all but NOTIFY,
//! which stays on UDP (RFC 9103 changes only transfers).
//!
//! These calls block (with timeouts on every step) and run on the control plane's
//! blocking threads, never on the data plane. What the records of a transfer mean is
//! `tern_zone::transfer`'s; this module moves messages. Every read of a stream waits at
//! most the smaller of its idle timeout and what is left of the whole
//! ([`stream::Deadline`]), so that a primary sending a record now and then, or a byte
//! at a time, cannot hold a transfer slot (and the zone's refresh) for longer than
//! `max-time-in`.

pub mod stream;
pub mod tls;
pub mod transfer;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::tsig::{self, Key, Mac, TsigFields, TsigStatus};
use tern_wire::{Class, Dname, Opcode, Rcode, Rtype};
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
        transfer::transfer(peer, zone, soa, limits)
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

    fn rrset(
        &self,
        peer: Peer<'_>,
        owner: &Dname,
        rtype: Rtype,
        timeout: Duration,
    ) -> Result<Vec<Vec<u8>>> {
        rrset(peer, owner, rtype, timeout)
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

/// Sends `message` over TLS and reads the answer to it, within `timeout` in all.
fn tls_exchange(
    peer: Peer<'_>,
    message: &[u8],
    mac: Option<&Mac>,
    timeout: Duration,
) -> Result<Vec<u8>> {
    let mut connection = stream::send(peer, message, timeout)?;
    let answer = stream::read_answer(connection.as_mut(), timeout)?;
    check_answer(&answer, message, peer.key, mac)?;
    Ok(answer)
}

/// The serial of `zone` at the remote (the SOA query of a refresh, RFC 1034 §4.3.5),
/// over UDP, or over TLS to a remote that has it (a zone kept private is
/// asked about privately too).
pub fn soa_serial(peer: Peer<'_>, zone: &Dname, timeout: Duration) -> Result<u32> {
    let (message, mac) = request(Opcode::QUERY, zone, Rtype::SOA, None, peer.key)?;
    let answer = match peer.tls {
        Some(_) => tls_exchange(peer, &message, mac.as_ref(), timeout)?,
        None => udp_exchange(peer, &message, mac.as_ref(), timeout)?,
    };
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

/// The RDATA of `owner`'s `rtype` RRset in `peer`'s answer (over UDP, or TLS when
/// `peer` has it): empty for NXDOMAIN or NODATA; another rcode is an error.
pub fn rrset(
    peer: Peer<'_>,
    owner: &Dname,
    rtype: Rtype,
    timeout: Duration,
) -> Result<Vec<Vec<u8>>> {
    let (message, mac) = request(Opcode::QUERY, owner, rtype, None, peer.key)?;
    let answer = match peer.tls {
        Some(_) => tls_exchange(peer, &message, mac.as_ref(), timeout),
        None => udp_exchange(peer, &message, mac.as_ref(), timeout),
    };
    let answer = match answer {
        Err(ClientError::Rcode(Rcode::NXDOMAIN)) => return Ok(Vec::new()),
        other => other?,
    };
    let mut reader = MessageReader::new(&answer).map_err(|e| ClientError::Broken(e.to_string()))?;
    let mut scratch = vec![0u8; 65535];
    let mut rdatas = Vec::new();
    while let Ok(Some(record)) = reader.record(&mut scratch) {
        if record.section == Section::Answer
            && record.rtype == rtype
            && record.owner.eq_ignore_case(owner)
        {
            rdatas.push(record.rdata.to_vec());
        }
    }
    Ok(rdatas)
}

/// Sends a NOTIFY for `zone` with its current SOA (RFC 1996 §3.7) and waits for the
/// acknowledgement.
pub fn notify(peer: Peer<'_>, zone: &Dname, soa: &RecordData, timeout: Duration) -> Result<()> {
    let (message, mac) =
        request(Opcode::NOTIFY, zone, Rtype::SOA, Some((Section::Answer, soa)), peer.key)?;
    udp_exchange(peer, &message, mac.as_ref(), timeout).map(drop)
}

/// Sends a dynamic update as it was received (its TSIG record, if any, untouched) to a
/// primary over TCP — over TLS to a remote that has it: an update carries zone data —
/// and returns the primary's answer (RFC 2136 §6), which must be an UPDATE answer with
/// the request's ID. The answer is relayed to the client as it is, so it is not judged
/// here: the client checks its signature.
pub fn forward(peer: Peer<'_>, message: &[u8], timeout: Duration) -> Result<Vec<u8>> {
    let mut connection = stream::send(peer, message, timeout)?;
    let answer = stream::read_answer(connection.as_mut(), timeout)?;
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
