//! The query engine of Tern: answering a DNS query from a zone snapshot is a pure
//! function — [`Engine::answer`] takes the zones, the query bytes and an output buffer, and
//! does no I/O, reads no clock, takes no lock and does not allocate on the common path.
//!
//! * [`query`] reads the query and decides what must be echoed.
//! * [`response`] wraps the message writer with the truncation policy.
//! * `solve` runs RFC 1034 §4.3.2 against one zone, with `referral`, `negative`,
//!   `dname` and `dnssec` for the kinds of answer, and `chaos` for identity queries.
//! * The rarer requests leave the query path at one test ([`Query::is_special`]):
//!   TSIG-signed messages (`signed`), NOTIFY ([`notify`]), zone transfers ([`xfr`]) and
//!   dynamic updates ([`update`]), decided by the [`access`] rules with the client's
//!   address and the verified key.
//! * [`cookie`] checks and answers DNS cookies; [`class`] says what kind of answer a
//!   response is ([`Engine::answer_reported`]), for the server's rate limiting, which
//!   may send a [`Short`] answer in its place.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod access;
mod chaos;
pub mod class;
pub mod cookie;
mod dname;
mod dnssec;
mod negative;
pub mod notify;
pub mod query;
mod referral;
pub mod response;
mod signed;
mod solve;
pub mod update;
pub mod xfr;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use arc_swap::ArcSwap;

use tern_wire::edns::{Edns, OptionCode};
use tern_wire::message::{Compression, CompressionTable, Flags, MessageWriter};
use tern_wire::name::MAX_NAME_LEN;
use tern_wire::{Class, Dname, Opcode, Rcode, Rtype};
use tern_zone::hash::SuffixHashes;
use tern_zone::{ContentsGuard, NodeId, Pin, Pins, StatsTicket, ZoneContents, ZoneSet, ZoneSlot};

pub use access::{
    Access, Action, OwnerMatch, Owners, Prefix, Rule, TlsClient, UpdateLimits, Who, ZoneAccess,
};
pub use class::{Report, ResponseClass};
pub use cookie::{CookieSeen, Cookies, Schedule};
pub use notify::Notice;
pub use update::{Edit, SerialPolicy, Signature, UpdatePolicy, UpdateRefusal, UpdateRequest};
pub use xfr::{Transfer, TransferStats};

use cookie::QueryCookie;
use query::Query;
use response::Response;
use signed::Signed;

/// How the engine answers, as configured by the operator.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest UDP response (RFC 6891 §6.2.5; default 1232, the DNS flag day 2020 value).
    pub udp_max_payload: u16,
    /// NSID returned when asked (RFC 5001); `None` to not answer it.
    pub nsid: Option<Vec<u8>>,
    /// Value for `version.bind`/`version.server` CH TXT; `None` refuses.
    pub version: Option<String>,
    /// Value for `hostname.bind` CH TXT; `None` refuses.
    pub hostname: Option<String>,
    /// Value for `id.server` CH TXT; `None` refuses.
    pub server_id: Option<String>,
    /// The largest fudge a signed request is allowed, whatever it names (RFC 8945
    /// §5.2.3, §10; default 300 s).
    pub tsig_max_fudge: u16,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            udp_max_payload: 1232,
            nsid: None,
            version: None,
            hostname: None,
            server_id: None,
            tsig_max_fudge: tern_wire::tsig::DEFAULT_FUDGE,
        }
    }
}

/// The transport a query came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP: responses are limited to 512 bytes or the EDNS size.
    Udp,
    /// TCP: responses up to 65535 bytes.
    Tcp,
}

/// One query to answer.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The query message.
    pub message: &'a [u8],
    /// Its transport.
    pub transport: Transport,
    /// On TCP, the idle timeout to advertise in edns-tcp-keepalive (units of 100 ms,
    /// RFC 7828 §3.2.2) when the client asks for it.
    pub tcp_keepalive: Option<u16>,
    /// The client's address (access rules for transfers and NOTIFY).
    pub client: IpAddr,
    /// On TLS and QUIC, what TLS knows of the client (access rules); `None` on plain
    /// transports. Answers to queries with EDNS are padded when it is set (RFC 8467).
    pub tls: Option<&'a TlsClient>,
    /// The time in seconds since the epoch, read only for TSIG and for queries with a
    /// cookie: the engine has no clock of its own.
    pub clock: fn() -> u64,
    /// The server's cookie secrets, when cookies are on (RFC 7873): a COOKIE option is
    /// then checked and answered, else ignored.
    pub cookies: Option<&'a Cookies>,
}

impl<'a> Request<'a> {
    /// A request from the unspecified address, with a clock stuck at 0 (enough for
    /// everything but access rules and TSIG).
    pub fn new(message: &'a [u8], transport: Transport) -> Request<'a> {
        Request {
            message,
            transport,
            tcp_keepalive: None,
            client: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            tls: None,
            clock: || 0,
            cookies: None,
        }
    }
}

/// What answering produced.
#[derive(Debug)]
pub enum Outcome {
    /// A response of `len` bytes is at the start of the output buffer.
    Answered {
        /// Length of the response.
        len: usize,
        /// Its response code.
        rcode: Rcode,
        /// Whether TC is set.
        truncated: bool,
        /// The type asked for (0 when the query had no question that could be read),
        /// for the server's counters.
        qtype: Rtype,
        /// Whether the query set the DO bit (RFC 3225), for the server's counters.
        dnssec_ok: bool,
    },
    /// No response is to be sent (not a query, or too short to answer).
    Dropped,
    /// A NOTIFY was accepted and answered (`len` bytes): the control plane should
    /// refresh the zone.
    Notified {
        /// Length of the response.
        len: usize,
        /// The zone and the serial announced (boxed: this rare outcome must not make
        /// every query's outcome bigger).
        notice: Box<Notice>,
    },
    /// A zone transfer to stream over TCP, message by message; nothing is written yet.
    Transfer(Box<Transfer>),
    /// A dynamic update for the zone's writer, which computes and applies the change
    /// and then writes the answer ([`UpdateRequest`]); nothing is written yet.
    Update(Box<UpdateRequest>),
}

/// The query engine.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    config: Config,
    /// Keys and access rules, swapped whole when the configuration changes; read only
    /// by the requests that need them.
    access: Arc<ArcSwap<Access>>,
}

impl Engine {
    /// An engine with the given configuration.
    pub fn new(config: Config) -> Engine {
        Engine { config, access: Arc::default() }
    }

    /// An engine with `config` that shares this one's keys and access rules (a reload's
    /// new settings; [`set_access`](Self::set_access) on either changes both).
    pub fn with_config(&self, config: Config) -> Engine {
        Engine { config, access: Arc::clone(&self.access) }
    }

    /// Replaces the keys and access rules (from the next request on).
    pub fn set_access(&self, access: Access) {
        self.access.store(Arc::new(access));
    }

    /// The keys and access rules in force.
    pub fn access(&self) -> Arc<Access> {
        self.access.load_full()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Answers `request` from `zones` into `out` (65535 bytes suffice for any response).
    /// `table` is the caller's reusable compression table.
    pub fn answer(
        &self,
        zones: &ZoneSet,
        request: &Request<'_>,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let mut scratch = None;
        let Some(mut query) = query::parse(request.message, &mut scratch) else {
            return Outcome::Dropped;
        };
        check_cookie(&mut query, request);
        // Built in place: the hashes are too big to move around for every query.
        let mut located = Located::empty();
        if let Some(q) = &query.question {
            located.find(zones, None, q.qname(), q.qtype);
        }
        let mut unused = Report::error(CookieSeen::None);
        let found = located.found(None);
        self.answer_located::<false>(zones, &query, &found, request, out, table, &mut unused, None)
    }

    /// Reads `message`'s question and locates its zone into `ahead`, which starts loading
    /// the index slots the answer will read. Done for the next query of a batch while
    /// the current one is answered, it takes that cache miss off the lookup's path; the
    /// answer is then written by [`answer_with`](Self::answer_with).
    ///
    /// `pins` holds the zones' contents for the whole batch, so that a query does not
    /// take its own `arc_swap` guard (two atomic read-modify-writes, each a full
    /// barrier); keep one [`Pins`] per batch and pass it to both calls.
    pub fn look_ahead(
        &self,
        zones: &ZoneSet,
        pins: &mut Pins,
        message: &[u8],
        ahead: &mut Lookahead,
    ) {
        ahead.question = None;
        let Some((qname, qtype)) = query::question_only(message) else { return };
        ahead.located.find(zones, Some(pins), qname, qtype);
        ahead.remember(zones, pins, qname, qtype);
    }

    /// [`answer`](Self::answer), with the zone `ahead` located when it was looked ahead
    /// for this question in these zones with these `pins` (and located afresh when not).
    /// `ahead` is used up.
    pub fn answer_with(
        &self,
        zones: &ZoneSet,
        pins: &mut Pins,
        request: &Request<'_>,
        ahead: &mut Lookahead,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let mut unused = Report::error(CookieSeen::None);
        self.answer_ahead::<false>(zones, pins, request, ahead, out, table, &mut unused, None)
    }

    /// [`answer_with`](Self::answer_with), and what rate limiting needs to know of the
    /// answer, written into `report` when the query is answered: its class, the name it
    /// is counted under, and the query's cookie. (Working the report out costs a few
    /// instructions that `answer_with` does without; it is written where the caller
    /// keeps it, not returned beside the outcome, which would copy the outcome.)
    ///
    /// `early` is told a referral's or a positive answer's class and tag as soon as
    /// answering has decided them, before their records are written: the caller can
    /// start loading what its verdict will read (rate limiting's counter, a line picked
    /// at random in a table too large to stay in the cache), and the writing hides the
    /// wait. Other classes are counted under the zone's few keys, which stay cached.
    #[allow(clippy::too_many_arguments)]
    pub fn answer_reported(
        &self,
        zones: &ZoneSet,
        pins: &mut Pins,
        request: &Request<'_>,
        ahead: &mut Lookahead,
        out: &mut [u8],
        table: &mut CompressionTable,
        report: &mut Report,
        early: &dyn Fn(ResponseClass, u32),
    ) -> Outcome {
        self.answer_ahead::<true>(zones, pins, request, ahead, out, table, report, Some(early))
    }

    /// [`answer_with`](Self::answer_with), writing `report` when `REPORT` is set.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn answer_ahead<const REPORT: bool>(
        &self,
        zones: &ZoneSet,
        pins: &mut Pins,
        request: &Request<'_>,
        ahead: &mut Lookahead,
        out: &mut [u8],
        table: &mut CompressionTable,
        report: &mut Report,
        early: Option<&dyn Fn(ResponseClass, u32)>,
    ) -> Outcome {
        let mut scratch = None;
        let query = query::parse(request.message, &mut scratch);
        let question = query.as_ref().and_then(|q| q.question.as_ref());
        let ready = question.is_some_and(|q| ahead.is_for(zones, pins, q));
        ahead.question = None;
        let Some(mut query) = query else { return Outcome::Dropped };
        if REPORT {
            *report = Report::error(CookieSeen::None);
        }
        // Only a query with a cookie has its cookie noted: one without costs nothing more.
        if check_cookie(&mut query, request) && REPORT {
            report.cookie = query.cookie.seen();
        }
        match &query.question {
            Some(q) if !ready => ahead.located.find(zones, Some(pins), q.qname(), q.qtype),
            Some(_) => {}
            // Whatever the look-ahead located is not this query's zone.
            None => ahead.located.stats = StatsTicket::NONE,
        }
        let located = ahead.located.found(Some(pins));
        self.answer_located::<REPORT>(zones, &query, &located, request, out, table, report, early)
    }

    /// A short answer to `request` in place of its full one ([`Short`]), with the
    /// question echoed and, when the query had one, a COOKIE option.
    pub fn answer_short(
        &self,
        request: &Request<'_>,
        short: Short,
        out: &mut [u8],
        table: &mut CompressionTable,
    ) -> Outcome {
        let mut scratch = None;
        let Some(mut query) = query::parse(request.message, &mut scratch) else {
            return Outcome::Dropped;
        };
        check_cookie(&mut query, request);
        // BADCOOKIE needs a cookie to send; without one the client is sent to TCP.
        let bad_cookie = short == Short::BadCookie && query.cookie.reply().is_some();
        let body = |resp: &mut Response<'_>| {
            if bad_cookie {
                resp.rcode = Rcode::BADCOOKIE; // RFC 7873 §5.2.3
            } else {
                resp.truncate();
            }
        };
        self.write_response(&query, request, out, table, Compression::Anchor, None, body)
    }

    /// Answers a query read and located; writes `report` when `REPORT` is set.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn answer_located<const REPORT: bool>(
        &self,
        zones: &ZoneSet,
        query: &Query<'_>,
        located: &Found<'_>,
        request: &Request<'_>,
        out: &mut [u8],
        table: &mut CompressionTable,
        report: &mut Report,
        early: Option<&dyn Fn(ResponseClass, u32)>,
    ) -> Outcome {
        if query.is_special() {
            return signed::answer(self, zones, query, located, request, out, table);
        }
        let anchor = Compression::Anchor;
        match self.respond::<REPORT>(query, located, request, out, table, anchor, report, early) {
            // Anchor compression (against the question only) is the fast path; when the
            // answer does not fit, the full compressor may make it fit.
            Outcome::Answered { truncated: true, .. } => {
                let full = Compression::Table;
                self.respond::<REPORT>(query, located, request, out, table, full, report, early)
            }
            other => other,
        }
    }

    /// Writes the response to `query` into `out` with the given compression; when
    /// `REPORT` is set, writes into `report` the class answering gave it and the tag of
    /// the name it is counted under (worked out once the response is written, when
    /// answering's registers are free again).
    #[allow(clippy::too_many_arguments)]
    fn respond<const REPORT: bool>(
        &self,
        query: &Query<'_>,
        located: &Found<'_>,
        request: &Request<'_>,
        out: &mut [u8],
        table: &mut CompressionTable,
        compression: Compression,
        report: &mut Report,
        early: Option<&dyn Fn(ResponseClass, u32)>,
    ) -> Outcome {
        if !REPORT {
            let body = |resp: &mut Response<'_>| self.dispatch(query, located, resp);
            return self.write_response(query, request, out, table, compression, None, body);
        }
        let hook = |class, node| {
            if let Some(early) = early {
                early(class, tag(class, node, query, located));
            }
        };
        let mut counted = (ResponseClass::Error, tern_zone::NO_NODE);
        let body = |resp: &mut Response<'_>| {
            self.dispatch(query, located, resp);
            // Any other RCODE is an error's.
            if matches!(resp.rcode, Rcode::NOERROR | Rcode::NXDOMAIN) {
                counted = (resp.class, resp.node);
            }
        };
        let noted: Option<&dyn Fn(ResponseClass, NodeId)> = early.map(|_| &hook as _);
        let outcome = self.compose(query, request, out, table, compression, None, noted, body);
        let (class, node) = counted;
        (report.class, report.tag) = (class, tag(class, node, query, located));
        outcome
    }

    /// Writes a response whose sections `body` fills, signed when `tsig` says so.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn write_response(
        &self,
        query: &Query<'_>,
        request: &Request<'_>,
        out: &mut [u8],
        table: &mut CompressionTable,
        compression: Compression,
        tsig: Option<&Signed<'_>>,
        body: impl FnOnce(&mut Response<'_>),
    ) -> Outcome {
        self.compose(query, request, out, table, compression, tsig, None, body)
    }

    /// A response whose sections `body` fills, signed when `tsig` says so, its class
    /// and node told to `noted` as answering decides them ([`Response::decided`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn compose(
        &self,
        query: &Query<'_>,
        request: &Request<'_>,
        out: &mut [u8],
        table: &mut CompressionTable,
        compression: Compression,
        tsig: Option<&Signed<'_>>,
        noted: Option<&dyn Fn(ResponseClass, NodeId)>,
        body: impl FnOnce(&mut Response<'_>),
    ) -> Outcome {
        let limit = self.size_limit(query, request.transport);
        let Ok(mut writer) = MessageWriter::new(out, limit, table) else { return Outcome::Dropped };
        writer.set_compression(compression);
        writer.set_id(query.id);
        let mut flags = Flags(Flags::QR);
        flags.set_opcode(query.flags.opcode());
        // RD is copied (RFC 1035 §4.1.1); CD is cleared: "a security-aware name server
        // SHOULD clear the CD bit when composing an authoritative response" (RFC 4035
        // §3.1.6), as Knot DNS and NSD do.
        flags.set(Flags::RD, query.flags.has(Flags::RD));
        writer.set_flags(flags);
        let dnssec = query.edns.is_some_and(|e| e.dnssec_ok);
        let qname = query.question.as_ref().map_or(tern_wire::Dname::ROOT, query::Question::qname);
        // The writer moves into the response before it writes anything: it is not
        // copied again.
        let mut resp = Response::new(writer, dnssec, request.transport, qname);
        resp.early = noted.map(response::Early);
        if let Some(q) = &query.question {
            if resp.writer.push_question(q.qname(), q.qtype, q.qclass).is_err() {
                return Outcome::Dropped;
            }
        }
        let tail = self.opt_len(query, request) + tsig.map_or(0, Signed::record_len);
        if resp.writer.reserve(tail).is_err() {
            return Outcome::Dropped;
        }
        body(&mut resp);
        self.finish(&mut resp, query, request, tsig)
    }

    /// 512 bytes without EDNS, the requestor's size clamped to [512, configured maximum]
    /// with it (RFC 6891 §6.2.5), 65535 over TCP.
    fn size_limit(&self, query: &Query<'_>, transport: Transport) -> usize {
        match (transport, query.edns) {
            (Transport::Tcp, _) => 65535,
            (Transport::Udp, None) => 512,
            (Transport::Udp, Some(e)) => {
                usize::from(e.udp_payload.clamp(512, self.config.udp_max_payload.max(512)))
            }
        }
    }

    /// Bytes the OPT record will need.
    fn opt_len(&self, query: &Query<'_>, request: &Request<'_>) -> usize {
        let Some(edns) = query.edns else { return 0 };
        let nsid = match (&self.config.nsid, edns.nsid) {
            (Some(id), true) => 4 + id.len(),
            _ => 0,
        };
        let keepalive = if self.keepalive(query, request).is_some() { 6 } else { 0 };
        let cookie = if query.cookie.reply().is_some() { cookie::OPTION_LEN } else { 0 };
        11 + nsid + keepalive + cookie
    }

    fn keepalive(&self, query: &Query<'_>, request: &Request<'_>) -> Option<u16> {
        let asked = query.edns.is_some_and(|e| e.keepalive);
        (asked && request.transport == Transport::Tcp).then_some(request.tcp_keepalive).flatten()
    }

    /// Decides what kind of response this is and writes its sections.
    #[inline(always)]
    fn dispatch(&self, query: &Query<'_>, located: &Found<'_>, resp: &mut Response<'_>) {
        if let Some(rcode) = query::precheck(query) {
            resp.rcode = rcode;
            return;
        }
        let Some(q) = &query.question else { return };
        match query.flags.opcode() {
            Opcode::QUERY => {}
            // NOTIFY and UPDATE with a question never come here (see `signed`); this is
            // a guard: not authorized.
            Opcode::NOTIFY | Opcode::UPDATE => {
                resp.rcode = Rcode::NOTAUTH;
                return;
            }
            _ => {
                resp.rcode = Rcode::NOTIMP; // RFC 1035 §4.1.1
                return;
            }
        }
        if transfer_refused(q.qtype, resp.transport, resp) {
            return;
        }
        match q.qclass {
            Class::CH => chaos::answer(&self.config, q.qname(), q.qtype, resp),
            Class::IN | Class::ANY => answer_in(located, q.qname(), q.qtype, resp),
            _ => resp.rcode = Rcode::REFUSED,
        }
    }

    /// Sets the RCODE, appends the OPT record and signs.
    #[inline(always)]
    fn finish(
        &self,
        resp: &mut Response<'_>,
        query: &Query<'_>,
        request: &Request<'_>,
        tsig: Option<&Signed<'_>>,
    ) -> Outcome {
        let rcode = resp.rcode;
        if !matches!(rcode, Rcode::NOERROR | Rcode::NXDOMAIN | Rcode::YXDOMAIN) {
            resp.set_authoritative(false);
        }
        resp.writer.set_rcode(rcode);
        if let Some(edns) = query.edns {
            let flags = if edns.dnssec_ok { Edns::DO } else { 0 };
            if let Ok(mut opt) = resp.writer.push_opt(self.config.udp_max_payload, 0, flags) {
                if let (Some(id), true) = (&self.config.nsid, edns.nsid) {
                    let _ = opt.option(OptionCode::NSID, id);
                }
                if let Some(reply) = query.cookie.reply() {
                    let _ = opt.cookie(&reply.client, &reply.server);
                }
                if let Some(timeout) = self.keepalive(query, request) {
                    let _ = opt.option(OptionCode::TCP_KEEPALIVE, &timeout.to_be_bytes());
                }
                if let Some(code) = resp.ede {
                    let _ = opt.option(OptionCode::EXTENDED_ERROR, &code.to_be_bytes());
                }
                if request.tls.is_some() {
                    // RFC 8467 §4.1: responses in blocks of 468 bytes (the TSIG that
                    // follows counted in), on encrypted transports only (RFC 7830 §5).
                    let trailing = tsig.map_or(0, Signed::record_len);
                    let _ = opt.pad_to_block(PADDING_BLOCK, trailing);
                }
            }
        }
        if let Some(signed) = tsig {
            signed.sign(&mut resp.writer, request);
        }
        let truncated = resp.is_truncated();
        let len = resp.writer.len();
        let (qtype, dnssec_ok) = query.counted();
        Outcome::Answered { len, rcode, truncated, qtype, dnssec_ok }
    }
}

/// The block responses are padded to on encrypted transports (RFC 8467 §4.1).
pub const PADDING_BLOCK: usize = 468;

/// A short answer sent in place of a full one when rate limiting says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Short {
    /// TC=1, NOERROR, the question alone: the client should ask again over TCP (a
    /// "slip").
    Truncated,
    /// BADCOOKIE with a new server cookie (RFC 7873 §5.2.3): the client should ask again
    /// with it. A query without a cookie gets [`Short::Truncated`] instead.
    BadCookie,
}

/// The tag an answer of `class` is counted under ([`class`]), from the question name's
/// suffix hashes that locating its zone computed and the node answering noted.
#[inline(always)]
fn tag(class: ResponseClass, node: NodeId, query: &Query<'_>, located: &Found<'_>) -> u32 {
    let (Zone::Loaded(zone), Some(q)) = (located.zone, &query.question) else { return 0 };
    let zone_tag = || located.hashes.suffix(zone.origin_labels());
    match class {
        ResponseClass::Positive => class::positive_tag(located.hashes.full(), q.qtype.0),
        ResponseClass::NxDomain | ResponseClass::NoData => zone_tag(),
        ResponseClass::Wildcard | ResponseClass::Referral => class::node_tag(zone_tag(), node),
        ResponseClass::Error => 0,
    }
}

/// Checks the query's COOKIE option when cookies are on ([`cookie::check`]); true when
/// it did.
#[inline]
fn check_cookie(query: &mut Query<'_>, request: &Request<'_>) -> bool {
    if let (QueryCookie::Unchecked(data), Some(cookies)) = (query.cookie, request.cookies) {
        query.cookie = cookie::check(data, cookies, request.client, request.clock);
        return true;
    }
    false
}

/// Meta-types that are not questions here: key exchange (TKEY) is not offered, and TSIG
/// is not a question (transfers never come here: see `signed`). True when answered here.
fn transfer_refused(qtype: Rtype, _transport: Transport, resp: &mut Response<'_>) -> bool {
    resp.rcode = match qtype {
        Rtype::AXFR | Rtype::IXFR | Rtype::TKEY | Rtype::TSIG => Rcode::REFUSED,
        _ => return false,
    };
    true
}

/// Extended DNS Error "Not Authoritative" (RFC 8914 §4.21): no zone of ours holds the
/// name, as Knot DNS and NSD report with REFUSED.
const EDE_NOT_AUTHORITATIVE: u16 = 20;

/// The zone a question is answered from, found as soon as the query is read: the
/// question name's suffix hashes, the zone (the parent's, for DS at a child apex we also
/// serve, RFC 4035 §3.1.4.1) and a hold on its current contents. The index slots the
/// lookup will read are prefetched then, so that their cache misses overlap with writing
/// the header and question instead of stalling the lookup. The zone's [`StatsTicket`]
/// is read then too, for the server's per-zone counters.
struct Located {
    hashes: SuffixHashes,
    held: Held,
    stats: StatsTicket,
}

/// What keeps a located zone's contents alive while the question is answered.
enum Held {
    /// Nothing: no zone of ours holds the name.
    NotOurs,
    /// The batch's [`Pins`].
    Pinned(Pin),
    /// A guard of this question's own (no pins, or all of them in use).
    Own(ContentsGuard),
}

/// The zone an answer is written from, and the question name's suffix hashes.
struct Found<'a> {
    hashes: &'a SuffixHashes,
    zone: Zone<'a>,
}

/// The located zone as answering sees it.
#[derive(Clone, Copy)]
enum Zone<'a> {
    /// No zone of ours holds the name.
    NotOurs,
    /// The zone is configured but has no contents (not loaded yet).
    NotLoaded,
    /// The zone's contents.
    Loaded(&'a ZoneContents),
}

impl Located {
    fn empty() -> Located {
        Located { hashes: SuffixHashes::root(), held: Held::NotOurs, stats: StatsTicket::NONE }
    }

    /// The located zone; `pins` must be those it was located with.
    #[inline]
    fn zone<'a>(&'a self, pins: Option<&'a Pins>) -> Zone<'a> {
        let contents = match &self.held {
            Held::NotOurs => return Zone::NotOurs,
            Held::Pinned(pin) => pins.and_then(|p| p.get(*pin)),
            Held::Own(guard) => guard.as_deref(),
        };
        contents.map_or(Zone::NotLoaded, Zone::Loaded)
    }

    /// The zone and hashes to answer from.
    #[inline]
    fn found<'a>(&'a self, pins: Option<&'a Pins>) -> Found<'a> {
        Found { hashes: &self.hashes, zone: self.zone(pins) }
    }

    /// Locates the question's zone (the hashes are refilled in place) and holds its
    /// contents, in `pins` when there is room.
    fn find(&mut self, zones: &ZoneSet, pins: Option<&mut Pins>, qname: &Dname, qtype: Rtype) {
        self.hashes.refill(qname);
        let Some(slot) = zone_of(zones, qname, qtype, &self.hashes) else {
            self.held = Held::NotOurs;
            self.stats = StatsTicket::NONE;
            return;
        };
        self.stats = slot.stats_ticket();
        match pins.and_then(|p| p.hold(slot)) {
            Some((pin, contents)) => {
                self.held = Held::Pinned(pin);
                if let Some(zone) = contents {
                    zone.prefetch_lookup(&self.hashes);
                }
            }
            None => {
                let guard = slot.contents();
                if let Some(zone) = guard.as_deref() {
                    zone.prefetch_lookup(&self.hashes);
                }
                self.held = Held::Own(guard);
            }
        }
    }
}

/// The zone that answers `qname`: the one with the longest origin it is at or below,
/// but the parent's for DS at a child apex we also serve (RFC 4035 §3.1.4.1).
#[inline]
fn zone_of<'z>(
    zones: &'z ZoneSet,
    qname: &Dname,
    qtype: Rtype,
    hashes: &SuffixHashes,
) -> Option<&'z Arc<ZoneSlot>> {
    let slot = zones.find(qname, hashes);
    if qtype == Rtype::DS && slot.is_some_and(|s| s.origin().eq_ignore_case(qname)) {
        if let Some(parent) = qname.parent().and_then(|p| zones.find(p, &SuffixHashes::of(p))) {
            return Some(parent);
        }
    }
    slot
}

/// A question located ahead of answering it ([`Engine::look_ahead`]), with what it was
/// located for: the zone set, the exact question name and type. Reused query after
/// query.
pub struct Lookahead {
    located: Located,
    /// The zone set (by address), the epoch of the pins, QTYPE and QNAME length of the
    /// question located; `None` when nothing is.
    question: Option<(usize, u64, Rtype, usize)>,
    qname: [u8; MAX_NAME_LEN],
}

impl Default for Lookahead {
    fn default() -> Self {
        Lookahead { located: Located::empty(), question: None, qname: [0; MAX_NAME_LEN] }
    }
}

impl std::fmt::Debug for Lookahead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lookahead({})", if self.question.is_some() { "ready" } else { "empty" })
    }
}

impl Lookahead {
    /// The second step of looking ahead, a query or so after [`Engine::look_ahead`]: the
    /// index slots it prefetched have likely arrived, so the nodes they point to (and
    /// their data) start loading now. `pins` are those it was located with.
    pub fn advance(&self, pins: &Pins) {
        if let (Some(_), Zone::Loaded(zone)) = (self.question, self.located.zone(Some(pins))) {
            zone.prefetch_lookup_nodes(&self.located.hashes);
        }
    }

    /// Forgets the question and lets go of the zone contents it holds, if any (a
    /// look-ahead kept from batch to batch must not keep replaced contents alive).
    pub fn clear(&mut self) {
        self.question = None;
        self.located.held = Held::NotOurs;
        self.located.stats = StatsTicket::NONE;
    }

    /// The [`StatsTicket`] of the zone the last query answered with this look-ahead
    /// ([`Engine::answer_with`], [`Engine::answer_reported`]) was located in:
    /// [`StatsTicket::NONE`] when it is not counted, or was in no zone of ours (or had
    /// no question).
    #[inline]
    pub fn stats_ticket(&self) -> StatsTicket {
        self.located.stats
    }

    fn remember(&mut self, zones: &ZoneSet, pins: &Pins, qname: &Dname, qtype: Rtype) {
        let wire = qname.as_wire();
        if let Some(copy) = self.qname.get_mut(..wire.len()) {
            tern_wire::bytes::copy(copy, wire);
            let zones = std::ptr::from_ref(zones) as usize;
            self.question = Some((zones, pins.epoch(), qtype, wire.len()));
        }
    }

    /// True when this was located for `question` (same spelling, same type) in `zones`
    /// with `pins`.
    fn is_for(&self, zones: &ZoneSet, pins: &Pins, question: &query::Question<'_>) -> bool {
        let wire = question.qname().as_wire();
        let zones = std::ptr::from_ref(zones) as usize;
        self.question == Some((zones, pins.epoch(), question.qtype, wire.len()))
            && self.qname.get(..wire.len()).is_some_and(|q| tern_wire::bytes::equal(q, wire))
    }
}

/// Answers an IN query from the zone it was located in.
fn answer_in(located: &Found<'_>, qname: &Dname, qtype: Rtype, resp: &mut Response<'_>) {
    match located.zone {
        Zone::Loaded(zone) => solve::answer(zone, qname, located.hashes, qtype, resp),
        Zone::NotLoaded => resp.rcode = Rcode::SERVFAIL,
        Zone::NotOurs => {
            resp.rcode = Rcode::REFUSED;
            resp.ede = Some(EDE_NOT_AUTHORITATIVE);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
