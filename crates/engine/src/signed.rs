//! The requests the common query path hands over ([`Query::is_special`]): TSIG-signed
//! messages, NOTIFY, UPDATE and zone transfers. None of them is frequent, so this path
//! may take the access rules' guard, copy names and read the message twice.
//!
//! TSIG (RFC 8945 §5.2): the MAC is checked against the configured keys before anything
//! else. An unknown key is answered NOTAUTH with BADKEY, a wrong MAC NOTAUTH with
//! BADSIG (both unsigned), a time outside the fudge NOTAUTH with BADTIME (signed), and a
//! malformed TSIG FORMERR. The fudge is the request's, but at most
//! [`Config::tsig_max_fudge`](crate::Config::tsig_max_fudge): a captured request must not
//! verify for 18 hours because its sender named a fudge of 65,535 s. A request signed with a known key gets a signed answer; the
//! verified key then counts in the access rules.

use std::sync::Arc;

use tern_wire::message::{Compression, CompressionTable, MessageReader, MessageWriter, Section};
use tern_wire::tsig::{self, SequenceSigner, TsigOutcome, TsigStatus};
use tern_wire::{Dname, NameBuf, Opcode, Rcode, Rtype};
use tern_zone::records::{serial_gt, soa_serial};
use tern_zone::{ZoneContents, ZoneSet};

use crate::access::{Access, Action, Who};
use crate::query::{Query, Question};
use crate::response::Response;
use crate::update::{Accepted, UpdateMessage, UpdateRequest};
use crate::xfr::{Head, Transfer};
use crate::{notify, Engine, Found, Outcome, Request, Transport};

/// A verified (or failed) TSIG of a request, with what signing the response needs.
#[derive(Debug)]
pub(crate) struct Signed<'k> {
    outcome: TsigOutcome<'k>,
}

impl Signed<'_> {
    /// Room the response's TSIG record needs (Other Data of BADTIME included).
    pub(crate) fn record_len(&self) -> usize {
        match self.outcome.key {
            Some(key) => tsig::record_len(key) + 6,
            None => self.outcome.key_name.len() + self.outcome.algorithm.len() + 26 + 6,
        }
    }

    /// Appends the TSIG record RFC 8945 §5.3 asks for.
    pub(crate) fn sign(&self, writer: &mut MessageWriter<'_>, request: &Request<'_>) {
        let _ = writer.push_tsig_response(&self.outcome, (request.clock)());
    }

    /// The verified key's name, when the MAC and time were right.
    fn key(&self) -> Option<&Dname> {
        match self.outcome.status {
            TsigStatus::Ok => self.outcome.key.map(|k| k.name()),
            _ => None,
        }
    }
}

/// Answers a special request (see the module comment).
pub(crate) fn answer(
    engine: &Engine,
    zones: &ZoneSet,
    query: &Query<'_>,
    located: &Found<'_>,
    request: &Request<'_>,
    out: &mut [u8],
    table: &mut CompressionTable,
) -> Outcome {
    let access = engine.access.load_full();
    let max_fudge = engine.config.tsig_max_fudge;
    let verify = |_| tsig::verify_request(request.message, &*access, (request.clock)(), max_fudge);
    let signed = match query.tsig.map(verify) {
        None => None,
        Some(Ok(outcome)) => outcome.map(|outcome| Signed { outcome }),
        // A malformed TSIG: FORMERR, unsigned (RFC 8945 §5.2).
        Some(Err(_)) => return formerr(engine, query, request, out, table),
    };
    if let Some(signed) = signed.as_ref().filter(|s| s.outcome.status != TsigStatus::Ok) {
        let body = |resp: &mut Response<'_>| resp.rcode = Rcode::NOTAUTH;
        return engine.write_response(
            query,
            request,
            out,
            table,
            Compression::Table,
            Some(signed),
            body,
        );
    }
    let key = signed.as_ref().and_then(Signed::key);
    let ctx = Ctx { engine, zones, access: &access, query, request, signed: signed.as_ref(), key };
    match (query.flags.opcode(), query.question) {
        (Opcode::NOTIFY, Some(q)) if crate::query::precheck(query).is_none() => {
            ctx.notify(&q, out, table)
        }
        (Opcode::UPDATE, Some(q)) if crate::query::precheck(query).is_none() => {
            ctx.update(&q, &access, out, table)
        }
        (Opcode::QUERY, Some(q))
            if matches!(q.qtype, Rtype::AXFR | Rtype::IXFR)
                && crate::query::precheck(query).is_none() =>
        {
            ctx.transfer(&q, out, table)
        }
        _ => {
            let body = |resp: &mut Response<'_>| engine.dispatch(query, located, resp);
            engine.write_response(
                query,
                request,
                out,
                table,
                Compression::Table,
                signed.as_ref(),
                body,
            )
        }
    }
}

/// FORMERR for a query whose TSIG cannot be read.
fn formerr(
    engine: &Engine,
    query: &Query<'_>,
    request: &Request<'_>,
    out: &mut [u8],
    table: &mut CompressionTable,
) -> Outcome {
    let body = |resp: &mut Response<'_>| resp.rcode = Rcode::FORMERR;
    engine.write_response(query, request, out, table, Compression::Table, None, body)
}

/// What the special requests share.
struct Ctx<'a> {
    engine: &'a Engine,
    zones: &'a ZoneSet,
    access: &'a Access,
    query: &'a Query<'a>,
    request: &'a Request<'a>,
    signed: Option<&'a Signed<'a>>,
    key: Option<&'a Dname>,
}

impl Ctx<'_> {
    /// Who asks, for the access rules.
    fn who(&self) -> Who<'_> {
        Who { client: self.request.client, key: self.key, tls: self.request.tls }
    }

    /// A response whose sections `body` fills (signed when the request was).
    fn write(
        &self,
        out: &mut [u8],
        table: &mut CompressionTable,
        body: impl FnOnce(&mut Response<'_>),
    ) -> Outcome {
        let (query, request) = (self.query, self.request);
        self.engine.write_response(
            query,
            request,
            out,
            table,
            Compression::Table,
            self.signed,
            body,
        )
    }

    /// A response with `rcode`.
    fn reply(&self, rcode: Rcode, out: &mut [u8], table: &mut CompressionTable) -> Outcome {
        self.write(out, table, |resp| resp.rcode = rcode)
    }

    fn notify(&self, q: &Question<'_>, out: &mut [u8], table: &mut CompressionTable) -> Outcome {
        let mut notice = None;
        let body = |resp: &mut Response<'_>| {
            let who = self.who();
            notice = notify::answer(self.request.message, q, self.zones, self.access, &who, resp);
        };
        let outcome = self.write(out, table, body);
        match (outcome, notice) {
            (Outcome::Answered { len, rcode: Rcode::NOERROR, .. }, Some(notice)) => {
                Outcome::Notified { len, notice: Box::new(notice) }
            }
            (outcome, _) => outcome,
        }
    }

    /// AXFR and IXFR: NOTAUTH unless the question names a zone we serve, SERVFAIL when
    /// it has no data (not loaded, expired), REFUSED unless the access rules allow it;
    /// then a stream over TCP, or (IXFR over UDP) one message.
    fn transfer(&self, q: &Question<'_>, out: &mut [u8], table: &mut CompressionTable) -> Outcome {
        let Some(slot) = self.zones.get(q.qname()).filter(|_| q.qclass == tern_wire::Class::IN)
        else {
            return self.reply(Rcode::NOTAUTH, out, table);
        };
        if q.qtype == Rtype::AXFR && self.request.transport == Transport::Udp {
            return self.reply(Rcode::NOTIMP, out, table); // RFC 5936 §4.2
        }
        if !self.access.allows(slot.origin(), Action::Transfer, &self.who()) {
            return self.reply(Rcode::REFUSED, out, table);
        }
        let Some(zone) = slot.contents_full() else {
            return self.reply(Rcode::SERVFAIL, out, table);
        };
        if q.qtype == Rtype::AXFR {
            return Outcome::Transfer(Box::new(self.stream(q, zone, None)));
        }
        let Some(theirs) = client_serial(self.request.message, q.qname()) else {
            return self.reply(Rcode::FORMERR, out, table); // RFC 1995 §3: the SOA is required
        };
        self.ixfr(q, zone, theirs, out, table)
    }

    /// IXFR (RFC 1995 §2, §4): the current SOA alone when the client is up to date (or,
    /// over UDP, when the difference does not fit in one message or is not kept);
    /// otherwise the difference, or the whole zone when the history does not reach back.
    fn ixfr(
        &self,
        q: &Question<'_>,
        zone: Arc<ZoneContents>,
        theirs: u32,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let ours = zone.serial();
        if !serial_gt(ours, theirs) {
            return self.soa_only(&zone, out, table);
        }
        let change = zone.history().condensed(theirs, ours);
        if self.request.transport == Transport::Tcp {
            return Outcome::Transfer(Box::new(self.stream(q, Arc::clone(&zone), change)));
        }
        let Some(change) = change else { return self.soa_only(&zone, out, table) };
        let mut transfer = self.stream(q, Arc::clone(&zone), Some(change));
        let limit = self.engine.size_limit(self.query, Transport::Udp);
        match transfer.single_message(out, table, limit) {
            Some(len) => {
                let (qtype, dnssec_ok) = self.query.counted();
                Outcome::Answered { len, rcode: Rcode::NOERROR, truncated: false, qtype, dnssec_ok }
            }
            None => self.soa_only(&zone, out, table),
        }
    }

    /// The zone's SOA as the only answer record.
    fn soa_only(
        &self,
        zone: &ZoneContents,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let body = |resp: &mut Response<'_>| {
            resp.set_authoritative(true);
            if let Some(soa) = zone.soa_record() {
                let pushed = resp.writer.push_record(
                    Section::Answer,
                    &soa.owner,
                    soa.rtype,
                    tern_wire::Class::IN,
                    soa.ttl,
                    &soa.rdata,
                );
                if pushed.is_err() {
                    resp.truncate();
                }
            }
        };
        self.write(out, table, body)
    }

    /// UPDATE (RFC 2136 §3.1, §3.3): what does not depend on the zone's contents is
    /// answered here — FORMERR, NOTIMP for a class other than IN, NOTAUTH unless the
    /// zone section names a zone we serve, REFUSED unless some rule lets the client and
    /// key update it, SERVFAIL when the zone has no data — and the rest is handed to the
    /// zone's writer as an [`UpdateRequest`].
    fn update(
        &self,
        q: &Question<'_>,
        access: &Arc<Access>,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let message = match UpdateMessage::read(self.request.message) {
            Ok(message) => message,
            Err(refusal) => return self.reply(refusal.rcode, out, table),
        };
        let Some(slot) = self.zones.get(q.qname()) else {
            return self.reply(Rcode::NOTAUTH, out, table);
        };
        let allowed = access.zone(slot.origin());
        if !allowed.is_some_and(|z| z.may_update(&self.who())) {
            return self.reply(Rcode::REFUSED, out, table);
        }
        if slot.contents().is_none() {
            return self.reply(Rcode::SERVFAIL, out, table);
        }
        let signer = self.signed.and_then(|s| s.outcome.key.map(|k| (k, s.outcome.mac.as_slice())));
        let window = self.signed.map(|s| {
            (s.outcome.time_signed, s.outcome.fudge.min(self.engine.config.tsig_max_fudge))
        });
        Outcome::Update(Box::new(UpdateRequest::new(Accepted {
            origin: slot.origin(),
            message,
            access: Arc::clone(access),
            client: self.request.client,
            tls: self.request.tls.copied(),
            transport: self.request.transport,
            key: signer.map(|(k, _)| k),
            request_mac: signer.map_or(&[], |(_, mac)| mac),
            signed_at: window.unwrap_or_default(),
            raw: self.request.message,
            id: self.query.id,
            rd: self.query.flags.has(tern_wire::message::Flags::RD),
            edns: self.query.edns.map(|e| e.dnssec_ok),
            udp_payload: self.engine.config.udp_max_payload,
            limit: self.engine.size_limit(self.query, self.request.transport),
        })))
    }

    fn stream(
        &self,
        q: &Question<'_>,
        zone: Arc<ZoneContents>,
        change: Option<tern_zone::Changeset>,
    ) -> Transfer {
        let head = Head {
            id: self.query.id,
            rd: self.query.flags.has(tern_wire::message::Flags::RD),
            qname: NameBuf::from_dname(q.qname()),
            qtype: q.qtype,
            qclass: q.qclass,
            edns: self.query.edns.map(|e| e.dnssec_ok),
            udp_payload: self.engine.config.udp_max_payload,
        };
        let signer = self.signed.and_then(|s| {
            s.outcome.key.map(|key| SequenceSigner::new(key, s.outcome.mac.as_slice()))
        });
        Transfer::new(zone, head, change, signer, self.request.clock)
    }
}

/// The serial of the SOA an IXFR request carries in its authority section.
fn client_serial(message: &[u8], zone: &Dname) -> Option<u32> {
    let mut reader = MessageReader::new(message).ok()?;
    reader.skip_to(Section::Authority).ok()?;
    let mut scratch = vec![0u8; tern_wire::message::MAX_RDATA_LEN];
    let record = reader.record(&mut scratch).ok()??;
    let ours = record.section == Section::Authority
        && record.rtype == Rtype::SOA
        && record.owner.eq_ignore_case(zone);
    if ours {
        soa_serial(record.rdata)
    } else {
        None
    }
}
