//! Zone transfers out: AXFR (RFC 5936) and IXFR (RFC 1995) as a stream of messages, one
//! per call of [`Transfer::next_message`], from one snapshot of the zone even while the
//! zone changes (the transfer holds that snapshot).
//!
//! * AXFR: the SOA, every other record (RRsets with their signatures, then the NSEC3
//!   chain), the SOA again (RFC 5936 §2.2). The question is in the first message only;
//!   every message has the query's ID, AA set, names compressed, and at most
//!   [`MESSAGE_LIMIT`] bytes (16 KiB: where compression pointers can reach).
//! * IXFR: the condensed difference from the client's serial to ours (RFC 1995 §4: the
//!   new SOA, the old SOA, records removed, the new SOA, records added, the new SOA), or
//!   the whole zone AXFR-style when the history does not reach back that far.
//! * TSIG: when the request was signed, every message is signed as RFC 8945 §5.3.1
//!   describes (the first over the request MAC, each later one over the prior MAC).
//!
//! An RRset is written whole when it fits; one too large for any single message is
//! split record by record.

use std::sync::Arc;

use tern_wire::message::{
    Compression, CompressionTable, Flags, MessageWriter, Owner, RrsetHead, Section,
};
use tern_wire::tsig::{self, SequenceSigner};
use tern_wire::{Class, Dname, Error, Name, NameBuf, Opcode, Rtype};
use tern_zone::{Changeset, Node, RecordData, Rrset, ZoneContents, APEX};

/// Largest transfer message. A compression pointer reaches only the first 16 KiB of a
/// message (RFC 1035 §4.1.4: 14-bit offsets), so in a bigger one every name written past
/// that point is a dead end for the names after it: on the 1M-delegation zone 64 KiB
/// messages took 98 MB and 175 ns per record, 16 KiB ones 79 MB and 162 ns.
pub const MESSAGE_LIMIT: usize = 16384;

/// The kind of transfer being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The whole zone, asked with AXFR.
    Axfr,
    /// The whole zone, asked with IXFR from a serial the history does not reach.
    IxfrFull,
    /// A difference, asked with IXFR.
    Ixfr,
}

impl Kind {
    /// As the logs name it, the same for transfers in and out: `AXFR`, `IXFR (whole
    /// zone)`, `IXFR`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Axfr => "AXFR",
            Kind::IxfrFull => "IXFR (whole zone)",
            Kind::Ixfr => "IXFR",
        }
    }
}

/// What was sent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Messages written.
    pub messages: u32,
    /// Records written.
    pub records: u64,
    /// Bytes written (without TCP length prefixes).
    pub bytes: u64,
}

/// What every message repeats from the request.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub id: u16,
    pub rd: bool,
    pub qname: NameBuf,
    pub qtype: Rtype,
    pub qclass: Class,
    /// The request had an OPT record (each message gets one), and its DO bit.
    pub edns: Option<bool>,
    pub udp_payload: u16,
}

/// Where an AXFR stands: which node (main tree, then the NSEC3 chain), which RRset of
/// it, and — for an RRset being split — which record and signature.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    chain: bool,
    node: u32,
    rrset: usize,
    record: usize,
    sig: usize,
    /// Where the node's owner is in the message being written, once written: its later
    /// RRsets point there without a compression lookup.
    owner_at: Option<u16>,
}

impl Cursor {
    /// On to the next node.
    fn next_node(&mut self) {
        *self = Cursor { chain: self.chain, node: self.node + 1, ..Cursor::default() };
    }
}

/// The body of the stream.
#[derive(Debug)]
enum Body {
    /// SOA, then the zone from the cursor, then SOA.
    Zone { started: bool, cursor: Cursor, ended: bool },
    /// The records of an IXFR, in order; the next to write.
    Records { records: Vec<RecordData>, next: usize },
}

/// An outgoing zone transfer (see the module comment).
pub struct Transfer {
    zone: Arc<ZoneContents>,
    kind: Kind,
    head: Head,
    body: Body,
    signer: Option<SequenceSigner>,
    clock: fn() -> u64,
    stats: TransferStats,
    from_serial: Option<u32>,
    /// Largest message.
    limit: usize,
    done: bool,
}

impl std::fmt::Debug for Transfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transfer({} {:?} serial {})", self.zone.origin(), self.kind, self.zone.serial())
    }
}

/// What writing one item did.
enum Wrote {
    /// The item is in the message.
    Item,
    /// The message is full: the item goes in the next one.
    Full,
    /// Nothing is left to write.
    End,
}

impl Transfer {
    pub(crate) fn new(
        zone: Arc<ZoneContents>,
        head: Head,
        change: Option<Changeset>,
        signer: Option<SequenceSigner>,
        clock: fn() -> u64,
    ) -> Transfer {
        let (kind, body, from_serial) = match change {
            Some(change) => {
                let from = change.from_serial();
                (Kind::Ixfr, Body::Records { records: ixfr_records(change), next: 0 }, from)
            }
            None => {
                let kind = if head.qtype == Rtype::IXFR { Kind::IxfrFull } else { Kind::Axfr };
                (kind, Body::Zone { started: false, cursor: Cursor::default(), ended: false }, None)
            }
        };
        Transfer {
            zone,
            kind,
            head,
            body,
            signer,
            clock,
            stats: TransferStats::default(),
            from_serial,
            limit: MESSAGE_LIMIT,
            done: false,
        }
    }

    /// The zone being sent.
    pub fn origin(&self) -> &Name {
        self.zone.origin()
    }

    /// The serial being sent.
    pub fn serial(&self) -> u32 {
        self.zone.serial()
    }

    /// For an incremental transfer, the client's serial.
    pub fn from_serial(&self) -> Option<u32> {
        self.from_serial
    }

    /// AXFR, IXFR or IXFR answered with the whole zone.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// What was sent so far.
    pub fn stats(&self) -> TransferStats {
        self.stats
    }

    /// Writes the next message into `out` (at least [`MESSAGE_LIMIT`] bytes) and returns
    /// its length; `None` once the transfer is complete.
    pub fn next_message(&mut self, out: &mut [u8], table: &mut CompressionTable) -> Option<usize> {
        if self.done {
            return None;
        }
        let first = self.stats.messages == 0;
        let mut w = self.start_message(out, table, first)?;
        if let Body::Zone { cursor, .. } = &mut self.body {
            cursor.owner_at = None; // a new message: the owner is not in it
        }
        let records_before = w.count(Section::Answer);
        loop {
            match self.write_item(&mut w) {
                Wrote::Item => {}
                Wrote::Full => break,
                Wrote::End => {
                    self.done = true;
                    break;
                }
            }
        }
        if w.count(Section::Answer) == records_before && !self.done {
            // Not even one item fits in an empty message: stop rather than loop.
            self.done = true;
        }
        self.finish_message(&mut w);
        self.stats.messages += 1;
        self.stats.records += u64::from(w.count(Section::Answer));
        self.stats.bytes += w.len() as u64;
        Some(w.len())
    }

    /// A message with the header and, in the first, the question; room kept for the
    /// OPT and TSIG records.
    fn start_message<'b>(
        &self,
        out: &'b mut [u8],
        table: &'b mut CompressionTable,
        first: bool,
    ) -> Option<MessageWriter<'b>> {
        let mut w = MessageWriter::new(out, self.limit, table).ok()?;
        w.set_compression(Compression::Table);
        w.set_id(self.head.id);
        let mut flags = Flags(Flags::QR | Flags::AA);
        flags.set_opcode(Opcode::QUERY);
        flags.set(Flags::RD, self.head.rd);
        w.set_flags(flags);
        if first {
            w.push_question(&self.head.qname, self.head.qtype, self.head.qclass).ok()?;
        }
        let tsig = self.signer.as_ref().map_or(0, |s| tsig::record_len(s.key()));
        w.reserve(self.head.edns.map_or(0, |_| 11) + tsig).ok()?;
        Some(w)
    }

    /// Instead of the transfer, a response with `rcode` and no records (signed when the
    /// request was): for a server that cannot start the transfer now. The transfer is
    /// over afterwards.
    pub fn refusal(
        &mut self,
        out: &mut [u8],
        table: &mut CompressionTable,
        rcode: tern_wire::Rcode,
    ) -> Option<usize> {
        self.done = true;
        let mut w = self.start_message(out, table, true)?;
        w.set_flag(Flags::AA, false);
        w.set_rcode(rcode);
        self.finish_message(&mut w);
        Some(w.len())
    }

    /// The OPT record and the signature.
    fn finish_message(&mut self, w: &mut MessageWriter<'_>) {
        if let Some(dnssec) = self.head.edns {
            let flags = if dnssec { tern_wire::edns::Edns::DO } else { 0 };
            let _ = w.push_opt(self.head.udp_payload, 0, flags);
        }
        if let Some(signer) = &mut self.signer {
            let _ = signer.sign(w, (self.clock)());
        }
    }

    /// Writes the next item of the body.
    fn write_item(&mut self, w: &mut MessageWriter<'_>) -> Wrote {
        match &mut self.body {
            Body::Records { records, next } => {
                let Some(record) = records.get(*next) else { return Wrote::End };
                match w.push_record(
                    Section::Answer,
                    &record.owner,
                    record.rtype,
                    Class::IN,
                    record.ttl,
                    &record.rdata,
                ) {
                    Ok(()) => {
                        *next += 1;
                        Wrote::Item
                    }
                    Err(_) => Wrote::Full,
                }
            }
            Body::Zone { started, cursor, ended } => {
                if *ended {
                    return Wrote::End;
                }
                if !*started || zone_done(&self.zone, cursor) {
                    if write_soa(w, &self.zone).is_none() {
                        return Wrote::Full;
                    }
                    if *started {
                        *ended = true;
                    }
                    *started = true;
                    return Wrote::Item;
                }
                write_zone_item(w, &self.zone, cursor)
            }
        }
    }
}

impl Transfer {
    /// The whole transfer as one message of at most `limit` bytes (IXFR over UDP);
    /// `None` when it does not fit.
    pub(crate) fn single_message(
        &mut self,
        out: &mut [u8],
        table: &mut CompressionTable,
        limit: usize,
    ) -> Option<usize> {
        self.limit = limit;
        let len = self.next_message(out, table)?;
        self.done.then_some(len)
    }

    /// The key signing the stream, if any (for tests and logs).
    pub fn key_name(&self) -> Option<&Dname> {
        self.signer.as_ref().map(|s| s.key().name())
    }
}

/// The records of an IXFR difference in order (RFC 1995 §4).
fn ixfr_records(change: Changeset) -> Vec<RecordData> {
    let (Some(from), Some(to)) = (change.soa_from, change.soa_to) else { return Vec::new() };
    let mut records = Vec::with_capacity(change.removed.len() + change.added.len() + 4);
    records.push(to.clone());
    records.push(from);
    records.extend(change.removed);
    records.push(to.clone());
    records.extend(change.added);
    records.push(to);
    records
}

/// Writes the apex SOA record (not its signatures); `None` when it does not fit.
fn write_soa(w: &mut MessageWriter<'_>, zone: &ZoneContents) -> Option<()> {
    let apex = zone.apex()?;
    let soa = apex.rrset(Rtype::SOA)?;
    let rdata = soa.rdatas().next()?;
    w.push_record(Section::Answer, apex.owner(), Rtype::SOA, Class::IN, soa.ttl, rdata).ok()
}

/// The node at the cursor (main tree, then chain); `None` past the end.
fn node_at<'z>(zone: &'z ZoneContents, cursor: &Cursor) -> Option<&'z Node> {
    if cursor.chain {
        zone.nsec3()?.node(cursor.node)
    } else {
        zone.node(cursor.node)
    }
}

/// Moves the cursor to the next node holding data; true when there is none.
fn zone_done(zone: &ZoneContents, cursor: &mut Cursor) -> bool {
    loop {
        match node_at(zone, cursor) {
            Some(node) if holds_data(node) => return false,
            Some(_) => cursor.next_node(),
            None if !cursor.chain => *cursor = Cursor { chain: true, ..Cursor::default() },
            None => return true,
        }
    }
}

fn holds_data(node: &Node) -> bool {
    !node.flags.intersects(tern_zone::Flags::PHANTOM | tern_zone::Flags::EMPTY) && !node.is_empty()
}

/// Writes the rest of the node at the cursor — each RRset whole, or as much of one as
/// fits when it must be split — and moves on to the next node. `Full` leaves the cursor
/// at what did not fit.
fn write_zone_item(w: &mut MessageWriter<'_>, zone: &ZoneContents, cursor: &mut Cursor) -> Wrote {
    let Some(node) = node_at(zone, cursor) else { return Wrote::End };
    let owner = node.owner();
    for rrset in node.rrsets().skip(cursor.rrset) {
        // The apex SOA itself opens and closes the stream; only its signatures go here.
        let skip_records = !cursor.chain && cursor.node == APEX && rrset.rtype == Rtype::SOA;
        if cursor.record == 0 && cursor.sig == 0 {
            let mark = w.mark();
            match write_whole(w, owner, cursor.owner_at, &rrset, skip_records) {
                Ok(at) => {
                    cursor.owner_at = at.or(cursor.owner_at);
                    cursor.rrset += 1;
                    continue;
                }
                Err(_) => w.rollback(mark),
            }
            if w.count(Section::Answer) > 0 {
                return Wrote::Full;
            }
        }
        // Too large for one message: as many records as fit, then the rest next time.
        if !write_split(w, owner, &rrset, skip_records, cursor) {
            return Wrote::Full;
        }
        *cursor = Cursor { rrset: cursor.rrset + 1, record: 0, sig: 0, ..*cursor };
    }
    cursor.next_node();
    Wrote::Item
}

/// The RRset and its signatures, all or nothing; returns where the owner is.
fn write_whole(
    w: &mut MessageWriter<'_>,
    owner: &Dname,
    owner_at: Option<u16>,
    rrset: &Rrset<'_>,
    skip_records: bool,
) -> Result<Option<u16>, Error> {
    let mut names_at = [None; 0];
    let mut owner_ref = owner_at.map_or(Owner::Name(owner), Owner::At);
    if !skip_records && rrset.has_records() {
        let head =
            RrsetHead { owner: owner_ref, rtype: rrset.rtype, class: Class::IN, ttl: rrset.ttl };
        if let Some(at) = w.push_rrset(Section::Answer, &head, rrset.rdatas(), &mut names_at)? {
            owner_ref = Owner::At(at);
        }
    }
    if rrset.sig_count > 0 {
        let head = RrsetHead {
            owner: owner_ref,
            rtype: Rtype::RRSIG,
            class: Class::IN,
            ttl: rrset.sig_ttl,
        };
        if let Some(at) = w.push_rrset(Section::Answer, &head, rrset.sigs(), &mut names_at)? {
            owner_ref = Owner::At(at);
        }
    }
    Ok(owner_ref.at())
}

/// Records and then signatures one by one from the cursor; true when the RRset is done.
fn write_split(
    w: &mut MessageWriter<'_>,
    owner: &Dname,
    rrset: &Rrset<'_>,
    skip_records: bool,
    cursor: &mut Cursor,
) -> bool {
    if !skip_records {
        for rdata in rrset.rdatas().skip(cursor.record) {
            if w.push_record(Section::Answer, owner, rrset.rtype, Class::IN, rrset.ttl, rdata)
                .is_err()
            {
                return false;
            }
            cursor.record += 1;
        }
    }
    for rdata in rrset.sigs().skip(cursor.sig) {
        if w.push_record(Section::Answer, owner, Rtype::RRSIG, Class::IN, rrset.sig_ttl, rdata)
            .is_err()
        {
            return false;
        }
        cursor.sig += 1;
    }
    true
}
