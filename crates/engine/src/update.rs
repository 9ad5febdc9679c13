//! Dynamic UPDATE (RFC 2136) as pure functions: a message and a zone snapshot in, a
//! [`Changeset`] or a refusal (response code and reason) out; no I/O, no clock (the
//! caller passes the time for the serial policy).
//!
//! The steps are RFC 2136 §3's, in its order:
//! * §3.1 the zone section — exactly one entry of type SOA, else FORMERR; class IN, else
//!   NOTIMP (as BIND and Knot DNS answer); the apex of a zone we serve, else NOTAUTH;
//! * §3.3 who may update ([`crate::access`]): a rule must let the client and key update
//!   the zone at all, else REFUSED. A signed zone (DNSKEY at the apex) is REFUSED too,
//!   until online signing exists;
//! * §3.2 the prerequisites, against the zone as it is (`prereq`);
//! * §3.4.1 the update section's prescan: NOTZONE for a name outside the zone, FORMERR
//!   for a wrong class, TTL, type or RDATA; and §3.3 per record: every record must be
//!   allowed by the access rules, else REFUSED;
//! * §3.4.2 the updates, one after the other (`work`), turned into one changeset from
//!   the current SOA to the next serial ([`SerialPolicy`]), unless the update itself
//!   replaced the SOA with a higher serial. An update that changes nothing gives an
//!   empty changeset (the serial stays).
//!
//! All or nothing (§3.4): a refusal changes nothing. On the server the special path
//! (`signed`) does the checks that do not depend on the zone's contents and hands an
//! [`UpdateRequest`] over; the zone's writer computes the changeset against the version
//! it will replace ([`UpdateRequest::changes`]: RFC 2136 §3.7 serializes updates with
//! their prerequisites), applies it, makes it durable, and then writes the answer with
//! [`UpdateRequest::answer`] (header and zone section echoed, signed with the request's
//! key when it was signed; RFC 2136 §3.8).

mod edit;
mod prereq;
mod rdatas;
mod serial;
mod work;

use std::net::IpAddr;
use std::sync::Arc;

use tern_wire::edns::Edns;
use tern_wire::message::{
    with_table, CompressionTable, Flags, MessageReader, MessageWriter, Section,
};
use tern_wire::tsig::{self, Key, TsigFields};
use tern_wire::{Class, Dname, Name, Opcode, Rcode, Rtype};
use tern_zone::records::rfc2181_ttl;
use tern_zone::{Changeset, ChangesetError, Denial, RecordData, ZoneContents};

use crate::access::{Access, TlsClient, Who};
use crate::Transport;

pub use edit::Edit;
pub use serial::SerialPolicy;

/// How updates change a zone, as configured for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdatePolicy {
    /// How the serial rises when an update leaves the SOA alone.
    pub serial: SerialPolicy,
    /// The zone is signed by this server (online signing): updates to it are taken,
    /// and signed as they are committed. Otherwise a signed zone refuses them.
    pub signed_here: bool,
}

impl UpdatePolicy {
    /// `soa` with the serial this policy gives it next at `now` (seconds since the
    /// epoch).
    pub fn next_soa(&self, soa: &RecordData, now: u64) -> RecordData {
        let next = self.serial.next(soa.soa_serial().unwrap_or(0), now);
        let rdata = tern_zone::records::with_soa_serial(&soa.rdata, next).unwrap_or_default();
        RecordData { rdata, ..soa.clone() }
    }
}

/// Why an update was not applied: the response code, and a reason to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateRefusal {
    /// The response code of the answer.
    pub rcode: Rcode,
    /// What was wrong, for the log (never sent).
    pub reason: String,
}

impl UpdateRefusal {
    fn new(rcode: Rcode, reason: impl Into<String>) -> UpdateRefusal {
        UpdateRefusal { rcode, reason: reason.into() }
    }

    /// The refusal for a changeset [`ZoneContents::apply`] rejected: REFUSED for a
    /// change the zone cannot hold (a semantic error such as a CNAME at a delegation, an
    /// RRset grown past 65,535 records), SERVFAIL when the changeset does not fit the
    /// version it was applied to (it should have been computed against that version).
    pub fn from_apply(error: &tern_zone::Error) -> UpdateRefusal {
        let rcode = match error {
            tern_zone::Error::Changeset(ChangesetError::WrongStart { .. })
            | tern_zone::Error::Changeset(ChangesetError::Mismatch(_)) => Rcode::SERVFAIL,
            _ => Rcode::REFUSED,
        };
        UpdateRefusal::new(rcode, format!("the change does not apply: {error}"))
    }
}

impl std::fmt::Display for UpdateRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rcode, self.reason)
    }
}

/// One record of the prerequisite or update section, as received.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    owner: Name,
    rtype: Rtype,
    class: Class,
    ttl: u32,
    rdata: Vec<u8>,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {} {}", self.owner, self.ttl, self.class, self.rtype)
    }
}

/// An UPDATE message as read: its zone section and records (the additional section is
/// not used).
#[derive(Debug, Clone)]
pub struct UpdateMessage {
    zone: Name,
    prerequisites: Vec<Entry>,
    updates: Vec<Entry>,
}

impl UpdateMessage {
    /// Reads an UPDATE message: FORMERR when it is malformed or its zone section is not
    /// one entry of type SOA, NOTIMP when that entry's class is not IN (RFC 2136
    /// §3.1.1).
    pub fn read(message: &[u8]) -> Result<UpdateMessage, UpdateRefusal> {
        let formerr = |why: String| UpdateRefusal::new(Rcode::FORMERR, why);
        let mut reader = MessageReader::new(message).map_err(|e| formerr(e.to_string()))?;
        if reader.header().flags.opcode() != Opcode::UPDATE {
            return Err(formerr("not an UPDATE message".into()));
        }
        if reader.header().count(Section::Question) != 1 {
            return Err(formerr("the zone section must hold exactly one entry".into()));
        }
        let zone = match reader.question() {
            Ok(Some(q)) if q.qtype != Rtype::SOA => {
                return Err(formerr(format!("the zone section's type is {}, not SOA", q.qtype)))
            }
            Ok(Some(q)) if q.qclass != Class::IN => {
                let why = format!("class {} is not served (only IN)", q.qclass);
                return Err(UpdateRefusal::new(Rcode::NOTIMP, why));
            }
            Ok(Some(q)) => q.name.to_name(),
            Ok(None) => return Err(formerr("no zone section".into())),
            Err(e) => return Err(formerr(e.to_string())),
        };
        let mut read = UpdateMessage { zone, prerequisites: Vec::new(), updates: Vec::new() };
        tern_wire::message::with_buffer(|scratch| read.read_records(&mut reader, scratch))
            .map_err(|e| formerr(e.to_string()))?;
        Ok(read)
    }

    /// Reads the prerequisite and update sections (the additional section, TSIG
    /// included, is not this reader's). A TTL with its top bit set is read as 0 (RFC
    /// 2181 §8), as everywhere records come in.
    fn read_records(
        &mut self,
        reader: &mut MessageReader<'_>,
        scratch: &mut [u8],
    ) -> Result<(), tern_wire::Error> {
        while let Some(record) = reader.record(scratch)? {
            let list = match record.section {
                Section::Answer => &mut self.prerequisites,
                Section::Authority => &mut self.updates,
                _ => continue,
            };
            list.push(Entry {
                owner: record.owner.to_name(),
                rtype: record.rtype,
                class: record.class,
                ttl: rfc2181_ttl(record.ttl),
                rdata: record.rdata.to_vec(),
            });
        }
        Ok(())
    }

    /// The zone section's name, as the requester spelled it.
    pub fn zone(&self) -> &Dname {
        &self.zone
    }

    /// Records of the update section.
    pub fn update_count(&self) -> usize {
        self.updates.len()
    }
}

/// Who sent an update: the access rules in force, the client's address and the key
/// that signed the request (verified), if any.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    /// The rules.
    pub access: &'a Access,
    /// The client's address.
    pub client: IpAddr,
    /// The verified TSIG key's name.
    pub key: Option<&'a Dname>,
    /// What TLS knows of the client, when the update came over TLS or QUIC.
    pub tls: Option<&'a TlsClient>,
}

impl Requester<'_> {
    fn who(&self) -> Who<'_> {
        Who { client: self.client, key: self.key, tls: self.tls }
    }

    /// Whether some rule lets the requester update `zone` at all (RFC 2136 §3.3).
    fn may_update(&self, zone: &Dname) -> bool {
        self.access.zone(zone).is_some_and(|z| z.may_update(&self.who()))
    }

    /// Whether the requester may change `rtype` (`None`: no type) at `owner` in `zone`.
    fn allows(&self, zone: &Dname, owner: &Dname, rtype: Option<Rtype>) -> bool {
        self.access.zone(zone).is_some_and(|z| z.allows_update(zone, &self.who(), owner, rtype))
    }
}

/// RFC 2136 §3 for one message against one zone (see the module comment): the
/// changeset to apply, empty when the update changes nothing, or why not.
pub fn update(
    zone: &ZoneContents,
    message: &[u8],
    requester: &Requester<'_>,
    policy: &UpdatePolicy,
    now: u64,
) -> Result<Changeset, UpdateRefusal> {
    let read = UpdateMessage::read(message)?;
    if !read.zone.eq_ignore_case(zone.origin()) {
        return Err(UpdateRefusal::new(
            Rcode::NOTAUTH,
            format!("{} is not the apex of a zone served here", read.zone),
        ));
    }
    if !requester.may_update(zone.origin()) {
        return Err(not_allowed(requester));
    }
    evaluate(zone, &read, requester, (Some(now), policy))
}

/// REFUSED: no rule lets the requester update the zone.
fn not_allowed(requester: &Requester<'_>) -> UpdateRefusal {
    let key = requester.key.map_or_else(|| "unsigned".to_owned(), |k| format!("key {k}"));
    UpdateRefusal::new(
        Rcode::REFUSED,
        format!("no rule allows updates from {} ({key})", requester.client),
    )
}

/// RFC 2136 §3.2 to §3.4 against the zone's contents.
fn evaluate(
    zone: &ZoneContents,
    read: &UpdateMessage,
    requester: &Requester<'_>,
    (number, policy): (Option<u64>, &UpdatePolicy),
) -> Result<Changeset, UpdateRefusal> {
    if !policy.signed_here && is_signed(zone) {
        return Err(UpdateRefusal::new(
            Rcode::REFUSED,
            "the zone is signed, and updates to signed zones need online signing",
        ));
    }
    prereq::check(zone, &read.prerequisites)?;
    for entry in &read.updates {
        prescan(zone.origin(), entry)?;
        permitted(zone, entry, requester)?;
    }
    let mut work = work::Work::new(zone);
    for entry in &read.updates {
        work.apply(entry);
    }
    work.changeset(number.map(|now| (policy, now)))
}

/// A zone is signed when its apex has a DNSKEY RRset, or it has an NSEC or NSEC3 chain.
fn is_signed(zone: &ZoneContents) -> bool {
    let dnskey = zone.apex().and_then(|a| a.rrset(Rtype::DNSKEY)).is_some_and(|r| r.has_records());
    dnskey || zone.denial() != Denial::Unsigned
}

/// Types the update section may not touch: the records of DNSSEC signing, which a
/// signer maintains (a DNSKEY would also make the zone "signed" without signatures).
fn signer_only(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3 | Rtype::NSEC3PARAM | Rtype::DNSKEY)
}

/// RFC 2136 §3.4.1.2–§3.4.1.3 for one record of the update section.
fn prescan(origin: &Dname, entry: &Entry) -> Result<(), UpdateRefusal> {
    let formerr = |why: &str| UpdateRefusal::new(Rcode::FORMERR, format!("update {entry}: {why}"));
    if !entry.owner.ends_with(origin) {
        let why = format!("update {entry}: the name is outside the zone {origin}");
        return Err(UpdateRefusal::new(Rcode::NOTZONE, why));
    }
    match entry.class {
        Class::IN if entry.rtype.is_meta() => return Err(formerr("a meta-type cannot be added")),
        Class::IN | Class::NONE => {
            if entry.class == Class::NONE && entry.ttl != 0 {
                return Err(formerr("a record to delete must have TTL 0"));
            }
            if entry.rtype.is_meta() {
                return Err(formerr("a meta-type cannot be deleted as a record"));
            }
            if let Err(e) = tern_wire::rdata::validate(entry.rtype, &entry.rdata) {
                return Err(formerr(&format!("bad RDATA: {e}")));
            }
        }
        Class::ANY => {
            if entry.ttl != 0 || !entry.rdata.is_empty() {
                return Err(formerr("an RRset deletion must have TTL 0 and no RDATA"));
            }
            if entry.rtype.is_meta() && entry.rtype != Rtype::ANY {
                return Err(formerr("a meta-type other than ANY cannot be deleted"));
            }
        }
        _ => return Err(formerr("the class must be IN, ANY or NONE")),
    }
    if signer_only(entry.rtype) {
        let why = format!("update {entry}: DNSSEC records are maintained by a signer");
        return Err(UpdateRefusal::new(Rcode::REFUSED, why));
    }
    Ok(())
}

/// RFC 2136 §3.3 for one record: the access rules must allow the change. Deleting
/// every RRset of a name is checked for each type the name holds (those it would
/// delete), as BIND does; for a name holding none, the name alone is checked.
fn permitted(
    zone: &ZoneContents,
    entry: &Entry,
    requester: &Requester<'_>,
) -> Result<(), UpdateRefusal> {
    let origin = zone.origin();
    let denied = |rtype: Option<Rtype>| {
        let what = rtype.map_or_else(|| "the name".to_owned(), |t| t.to_string());
        let key = requester.key.map_or_else(|| "unsigned".to_owned(), |k| format!("key {k}"));
        UpdateRefusal::new(
            Rcode::REFUSED,
            format!("{} ({key}) may not change {what} at {}", requester.client, entry.owner),
        )
    };
    if entry.class != Class::ANY || entry.rtype != Rtype::ANY {
        return match requester.allows(origin, &entry.owner, Some(entry.rtype)) {
            true => Ok(()),
            false => Err(denied(Some(entry.rtype))),
        };
    }
    let types = work::deleted_types(zone, &entry.owner);
    if types.is_empty() && !requester.allows(origin, &entry.owner, None) {
        return Err(denied(None));
    }
    match types.into_iter().find(|&t| !requester.allows(origin, &entry.owner, Some(t))) {
        Some(t) => Err(denied(Some(t))),
        None => Ok(()),
    }
}

/// An UPDATE accepted by the special path for a zone's writer: what computing the
/// change against the writer's version needs, and what answering it later needs.
#[derive(Debug)]
pub struct UpdateRequest {
    origin: Name,
    message: UpdateMessage,
    access: Arc<Access>,
    client: IpAddr,
    tls: Option<TlsClient>,
    transport: Transport,
    key: Option<Key>,
    request_mac: Vec<u8>,
    /// Time Signed and the window the request was accepted in (signed requests).
    signed_at: (u64, u16),
    reply: ReplyHead,
    /// The request as received (forwarded as it is by a secondary, RFC 2136 §6).
    raw: Vec<u8>,
}

/// The signature of a signed UPDATE ([`UpdateRequest::signature`]).
#[derive(Debug, Clone, Copy)]
pub struct Signature<'a> {
    /// The key's name.
    pub key: &'a Dname,
    /// Time Signed.
    pub time_signed: u64,
    /// Seconds either side of Time Signed the request was accepted in: its fudge, at
    /// most `tsig-max-fudge`.
    pub window: u16,
    /// The MAC, as received.
    pub mac: &'a [u8],
}

/// What the answer's header and OPT record repeat from the request.
#[derive(Debug, Clone, Copy)]
struct ReplyHead {
    id: u16,
    rd: bool,
    /// DO of the request's OPT record, when it had one.
    edns: Option<bool>,
    /// The UDP payload size we advertise.
    udp_payload: u16,
    /// Largest answer (512 or the EDNS size over UDP, 65535 over TCP).
    limit: usize,
}

/// What the special path gives [`UpdateRequest::new`].
#[derive(Debug)]
pub(crate) struct Accepted<'a> {
    pub origin: &'a Dname,
    pub message: UpdateMessage,
    pub access: Arc<Access>,
    pub client: IpAddr,
    pub tls: Option<TlsClient>,
    pub transport: Transport,
    pub key: Option<&'a Key>,
    pub request_mac: &'a [u8],
    pub signed_at: (u64, u16),
    pub raw: &'a [u8],
    pub id: u16,
    pub rd: bool,
    pub edns: Option<bool>,
    pub udp_payload: u16,
    pub limit: usize,
}

impl UpdateRequest {
    pub(crate) fn new(a: Accepted<'_>) -> UpdateRequest {
        let reply = ReplyHead {
            id: a.id,
            rd: a.rd,
            edns: a.edns,
            udp_payload: a.udp_payload,
            limit: a.limit,
        };
        UpdateRequest {
            origin: a.origin.to_name(),
            message: a.message,
            access: a.access,
            client: a.client,
            tls: a.tls,
            transport: a.transport,
            key: a.key.cloned(),
            request_mac: a.request_mac.to_vec(),
            signed_at: a.signed_at,
            reply,
            raw: a.raw.to_vec(),
        }
    }

    /// The zone's origin (the writer to hand the request to).
    pub fn zone(&self) -> &Dname {
        &self.origin
    }

    /// The client's address.
    pub fn client(&self) -> IpAddr {
        self.client
    }

    /// The transport the request came over (where to send the answer).
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The name of the key that signed the request (verified), if any.
    pub fn key_name(&self) -> Option<&Dname> {
        self.key.as_ref().map(Key::name)
    }

    /// The request's signature, when it was signed (and verified): what tells a copy
    /// of it from a new request ([`tern_wire::tsig::Replays`]).
    pub fn signature(&self) -> Option<Signature<'_>> {
        let key = self.key.as_ref()?;
        let (time_signed, window) = self.signed_at;
        Some(Signature { key: key.name(), time_signed, window, mac: &self.request_mac })
    }

    /// The read message.
    pub fn message(&self) -> &UpdateMessage {
        &self.message
    }

    /// The request as it was received, TSIG record included: what a secondary forwards
    /// to its primary (RFC 2136 §6), whose answer then goes back to the client as it is.
    pub fn bytes(&self) -> &[u8] {
        &self.raw
    }

    /// The message ID of the request.
    pub fn id(&self) -> u16 {
        self.reply.id
    }

    /// RFC 2136 §3.2–§3.4 against `zone`, the version the change will be applied to,
    /// with the access rules in force when the request arrived. An empty changeset
    /// means there is nothing to change: answer NOERROR.
    pub fn changes(
        &self,
        zone: &ZoneContents,
        policy: &UpdatePolicy,
        now: u64,
    ) -> Result<Changeset, UpdateRefusal> {
        self.evaluate(zone, (Some(now), policy))
    }

    /// [`changes`](Self::changes) for a primary that raises the serial once for a batch
    /// of updates (RFC 2136 §3.6 lets it: the serial must rise before any change is seen,
    /// not once an update): a change that leaves the SOA alone has no SOA (its
    /// `soa_from` and `soa_to` are `None`); one whose update replaced the SOA goes from
    /// the zone's SOA to the update's, as with `changes`.
    pub fn changes_unnumbered(
        &self,
        zone: &ZoneContents,
        policy: &UpdatePolicy,
    ) -> Result<Changeset, UpdateRefusal> {
        self.evaluate(zone, (None, policy))
    }

    fn evaluate(
        &self,
        zone: &ZoneContents,
        number: (Option<u64>, &UpdatePolicy),
    ) -> Result<Changeset, UpdateRefusal> {
        if !zone.origin().eq_ignore_case(&self.origin) {
            let why = format!("the request is for {}, not {}", self.origin, zone.origin());
            return Err(UpdateRefusal::new(Rcode::SERVFAIL, why));
        }
        let requester = Requester {
            access: &self.access,
            client: self.client,
            key: self.key_name(),
            tls: self.tls.as_ref(),
        };
        evaluate(zone, &self.message, &requester, number)
    }

    /// Writes the answer into `out` (RFC 2136 §3.8): the ID and opcode, QR, the zone
    /// section echoed, `rcode`, an OPT record when the request had one, and a TSIG
    /// signed with the request's key when it was signed (at `now`, seconds since the
    /// epoch). `None` when `out` is too small.
    pub fn answer(&self, rcode: Rcode, out: &mut [u8], now: u64) -> Option<usize> {
        with_table(|table| self.answer_in(rcode, out, now, table))
    }

    fn answer_in(
        &self,
        rcode: Rcode,
        out: &mut [u8],
        now: u64,
        table: &mut CompressionTable,
    ) -> Option<usize> {
        let head = &self.reply;
        let mut writer = MessageWriter::new(out, head.limit, table).ok()?;
        writer.set_id(head.id);
        let mut flags = Flags(Flags::QR);
        flags.set_opcode(Opcode::UPDATE);
        flags.set(Flags::RD, head.rd);
        writer.set_flags(flags);
        writer.push_question(&self.message.zone, Rtype::SOA, Class::IN).ok()?;
        let opt = if head.edns.is_some() { 11 } else { 0 };
        writer.reserve(opt + self.key.as_ref().map_or(0, tsig::record_len)).ok()?;
        writer.set_rcode(rcode);
        if let Some(dnssec_ok) = head.edns {
            let flags = if dnssec_ok { Edns::DO } else { 0 };
            writer.push_opt(head.udp_payload, 0, flags).ok()?;
        }
        if let Some(key) = &self.key {
            let fields = TsigFields::at(now);
            writer.sign_tsig(key, Some(&self.request_mac), &fields).ok()?;
        }
        Some(writer.len())
    }
}

#[cfg(test)]
// Date serials are written as dates: 2023_11_14_00.
#[allow(clippy::inconsistent_digit_grouping)]
mod tests;
