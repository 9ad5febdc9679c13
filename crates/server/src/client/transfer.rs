//! A zone transfer in (AXFR, IXFR) over TCP or TLS: the request, then messages read
//! until the closing SOA, each checked (ID, RCODE, TSIG) and its records fed to
//! `tern_zone::transfer`. Bounded by `[transfer] max-zone-size` bytes, by `max-time-in`
//! from the connection to the last message, and by `idle-timeout-in` without a byte
//! from the primary (see [`Deadline`]).

use tern_wire::message::{MessageReader, Section};
use tern_wire::tsig::{SequenceStep, SequenceVerifier, TsigRecord, TsigStatus};
use tern_wire::{Dname, NameBuilder, Opcode, Rcode, Rtype};
use tern_zone::transfer::Incoming;
use tern_zone::RecordData;

use tern_control::clock::unix_now;

use super::stream::{self, Connection, Deadline};
use super::{request, ClientError, Limits, Peer, Result, TransferIn};

/// Transfers `zone`: IXFR from `ours` (our SOA) when given, else AXFR.
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
    let deadline = Deadline::new(limits.max_time, limits.idle);
    let connection = stream::send(peer, &message, limits.timeout.min(limits.max_time))?;
    let mut reader =
        Stream { connection, incoming, verifier: None, limits, deadline, bytes: 0, messages: 0 };
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

/// Whether `message` answers `request` (its ID, and QR set); its RCODE.
fn check_ours(message: &[u8], request: &[u8]) -> Result<Rcode> {
    let reader = MessageReader::new(message).map_err(|e| ClientError::Broken(e.to_string()))?;
    let flags = reader.header().flags;
    if message.get(..2) != request.get(..2) || !flags.has(tern_wire::message::Flags::QR) {
        return Err(ClientError::Broken("a message that is not ours".into()));
    }
    Ok(Rcode::from_parts(flags.rcode_bits(), 0))
}

/// The messages of one transfer being read.
struct Stream {
    connection: Box<dyn Connection>,
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

    /// One length-prefixed message, counted against `max-zone-size`.
    fn read_message(&mut self, buf: &mut [u8]) -> Result<usize> {
        let len = self.deadline.read_message(self.connection.as_mut(), buf)?;
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
