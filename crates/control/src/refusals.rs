//! Requests that were refused, logged: transfer requests (AXFR, IXFR), dynamic updates
//! and NOTIFYs. One line each with the zone, the client, the key that signed it (`-`
//! when none did), the RCODE and why — at most [`PER_SECOND`] lines a second, all kinds
//! together; the rest are counted, and said in one line the next second, by kind. A
//! client that sends refused requests in a loop (or spoofs them over UDP) fills no disk,
//! and a refusal costs a few atomic operations unless its line is written: its details
//! (the zone and key read from the message, the TSIG error of the answer) are gathered
//! only then. Accepted requests are not logged here.
//!
//! The data plane notes what the engine refused ([`refused_request`]); a zone's writer
//! notes the updates it refused, through the same [`refusals`].

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tern_wire::tsig::TsigRecord;
use tern_wire::{Dname, Opcode, Rcode, Rtype};
use tracing::{info, warn};

/// Lines a second at most.
pub const PER_SECOND: u64 = 10;

/// What was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A zone transfer request of this type (AXFR or IXFR).
    Transfer(Rtype),
    /// A dynamic update (RFC 2136).
    Update,
    /// A NOTIFY (RFC 1996).
    Notify,
}

impl Kind {
    /// The kind of a refused request, from its opcode and question type: `None` for
    /// the queries this log is not about.
    pub fn of(opcode: Opcode, qtype: Rtype) -> Option<Kind> {
        match (opcode, qtype) {
            (Opcode::UPDATE, _) => Some(Kind::Update),
            (Opcode::NOTIFY, _) => Some(Kind::Notify),
            (Opcode::QUERY, Rtype::AXFR | Rtype::IXFR) => Some(Kind::Transfer(qtype)),
            _ => None,
        }
    }

    fn slot(self) -> usize {
        match self {
            Kind::Transfer(_) => 0,
            Kind::Update => 1,
            Kind::Notify => 2,
        }
    }
}

/// One refusal, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What was refused.
    pub kind: Kind,
    /// The zone it named (`-` when it could not be read).
    pub zone: String,
    /// The client's address.
    pub client: IpAddr,
    /// The name of the key that signed it, if any.
    pub key: Option<String>,
    /// The answer's RCODE.
    pub rcode: Rcode,
    /// Why.
    pub why: String,
}

/// The log's state (see the module comment).
#[derive(Debug, Default)]
pub struct Refusals {
    second: AtomicU64,
    logged: AtomicU64,
    /// Refusals not logged one by one this second: transfers, updates, NOTIFYs.
    suppressed: [AtomicU64; 3],
}

/// The server's refusal log, shared by the data plane and the zones' writers.
pub fn refusals() -> &'static Refusals {
    static REFUSALS: Refusals = Refusals::new();
    &REFUSALS
}

impl Refusals {
    /// An empty log.
    pub const fn new() -> Refusals {
        Refusals {
            second: AtomicU64::new(0),
            logged: AtomicU64::new(0),
            suppressed: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Notes a refusal of `kind` at `now` (seconds): logs `refusal()` unless this
    /// second's lines are written already, else counts it.
    pub fn note(&self, kind: Kind, now: u64, refusal: impl FnOnce() -> Refusal) {
        if self.admit(kind, now) {
            log(&refusal());
        }
    }

    /// True when a line may be written at `now`; the summary of the last second
    /// first, when it cut lines.
    fn admit(&self, kind: Kind, now: u64) -> bool {
        if self.second.swap(now, Relaxed) != now {
            self.logged.store(0, Relaxed);
            let [transfers, updates, notifies] =
                self.suppressed.each_ref().map(|n| n.swap(0, Relaxed));
            let suppressed = transfers + updates + notifies;
            if suppressed > 0 {
                warn!(suppressed, transfers, updates, notifies, "more requests refused than logged one by one (at most {PER_SECOND} lines a second)");
            }
        }
        if self.logged.fetch_add(1, Relaxed) >= PER_SECOND {
            if let Some(count) = self.suppressed.get(kind.slot()) {
                count.fetch_add(1, Relaxed);
            }
            return false;
        }
        true
    }
}

/// Writes one refusal's line: a warning, but a dynamic update's failed prerequisite
/// (RFC 2136 §3.2, an answer the client asked for) is information.
fn log(r: &Refusal) {
    let key = r.key.as_deref().unwrap_or("-");
    let (zone, client, rcode, why) = (&r.zone, r.client, r.rcode, &r.why);
    match r.kind {
        Kind::Transfer(kind) => {
            warn!(zone = %zone, client = %client, kind = %kind, key = %key, rcode = %rcode, "transfer refused: {why}")
        }
        Kind::Update if prerequisite(rcode) => {
            info!(zone = %zone, client = %client, key = %key, rcode = %rcode, "update refused: {why}")
        }
        Kind::Update => {
            warn!(zone = %zone, client = %client, key = %key, rcode = %rcode, "update refused: {why}")
        }
        Kind::Notify => {
            warn!(zone = %zone, client = %client, key = %key, rcode = %rcode, "NOTIFY refused: {why}")
        }
    }
}

/// The RCODEs of failed prerequisites (RFC 2136 §3.2.1–§3.2.3).
fn prerequisite(rcode: Rcode) -> bool {
    matches!(rcode, Rcode::NXDOMAIN | Rcode::YXDOMAIN | Rcode::NXRRSET | Rcode::YXRRSET)
}

/// A request the engine refused (`query`, answered `answer` with `rcode`), as logged:
/// the zone from its question, the key from its TSIG record, why from the RCODE and the
/// answer's TSIG error.
pub fn refused_request(
    kind: Kind,
    query: &[u8],
    answer: &[u8],
    rcode: Rcode,
    client: IpAddr,
) -> Refusal {
    let zone = query.get(12..).and_then(|q| Dname::from_wire_prefix(q).ok()).map(|(z, _)| z);
    let zone = zone.map_or_else(|| "-".to_owned(), ToString::to_string);
    let key = TsigRecord::find(query).ok().flatten().map(|t| t.key_name.to_string());
    let tsig_error = TsigRecord::find(answer).ok().flatten().map(|t| t.error);
    let why = match tsig_error.filter(|&e| e != Rcode::NOERROR) {
        Some(error) => tsig_why(error).to_owned(),
        // Unsigned, NOTAUTH can only mean the zone (RFC 8945 §5.3 gives a TSIG failure
        // its error in the answer's TSIG).
        None if key.is_none() && rcode == Rcode::NOTAUTH => "not a zone served here".to_owned(),
        None => why(kind, rcode).to_owned(),
    };
    Refusal { kind, zone, client, key, rcode, why }
}

/// What a TSIG error means (RFC 8945 §5.2).
fn tsig_why(error: Rcode) -> &'static str {
    match error {
        Rcode::BADKEY => "TSIG BADKEY: signed with a key not configured here, or its algorithm",
        Rcode::BADSIG => "TSIG BADSIG: the MAC does not verify (a wrong secret, or changed on the way)",
        Rcode::BADTIME => {
            "TSIG BADTIME: signed further from the server's time than its fudge, or tsig-max-fudge, allows"
        }
        Rcode::BADTRUNC => "TSIG BADTRUNC: the MAC is truncated more than allowed",
        _ => "its TSIG did not verify",
    }
}

/// What an RCODE answering a request of `kind` means.
fn why(kind: Kind, rcode: Rcode) -> &'static str {
    match (kind, rcode) {
        (Kind::Transfer(_), Rcode::REFUSED) => {
            "no acl rule of the zone allows this client (or key) to transfer it"
        }
        (Kind::Update, Rcode::REFUSED) => {
            "no acl rule of the zone allows this client (or key) to update it"
        }
        (Kind::Notify, Rcode::REFUSED) => {
            "no acl rule of the zone allows this client (or key) to notify it (nor is it one of its primaries)"
        }
        (_, Rcode::NOTAUTH) => "not a zone served here, or its TSIG did not verify",
        (Kind::Transfer(_), Rcode::SERVFAIL) => {
            "the zone has no data (not loaded or expired), or too many transfers out"
        }
        (_, Rcode::SERVFAIL) => "the zone has no data (not loaded or expired)",
        (Kind::Transfer(_), Rcode::NOTIMP) => "AXFR over UDP (RFC 5936 §4.2)",
        (Kind::Update, Rcode::NOTIMP) => "a zone of another class than IN (RFC 2136 §3.1.1)",
        (Kind::Notify, Rcode::NOTIMP) => "a NOTIFY of another type than SOA (RFC 1996 §3.7)",
        (Kind::Transfer(_), Rcode::FORMERR) => {
            "malformed (IXFR without the client's SOA, RFC 1995 §3)"
        }
        (_, Rcode::FORMERR) => "malformed",
        _ => "not served",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(kind: Kind) -> Refusal {
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let why = "test".to_owned();
        Refusal { kind, zone: "-".into(), client, key: None, rcode: Rcode::REFUSED, why }
    }

    /// Transfers, updates and NOTIFYs share one budget a second; what it cuts is
    /// counted by kind, and the counts start again the next second.
    #[test]
    fn at_most_the_limit_a_second_is_logged_all_kinds_together() {
        let refusals = Refusals::new();
        let mut described = 0;
        let kinds = [Kind::Transfer(Rtype::AXFR), Kind::Update, Kind::Notify];
        for n in 0..30 {
            let kind = kinds[n % 3];
            refusals.note(kind, 100, || {
                described += 1;
                refusal(kind)
            });
        }
        assert_eq!(described, PER_SECOND, "only the lines written are described");
        assert_eq!(refusals.logged.load(Relaxed), 30);
        let cut: Vec<u64> = refusals.suppressed.iter().map(|n| n.load(Relaxed)).collect();
        assert_eq!((cut.iter().sum::<u64>(), cut), (20, vec![6, 7, 7]));
        refusals.note(Kind::Update, 101, || refusal(Kind::Update));
        assert!(refusals.suppressed.iter().all(|n| n.load(Relaxed) == 0), "said and reset");
        assert_eq!(refusals.logged.load(Relaxed), 1);
    }

    #[test]
    fn requests_are_told_apart_by_opcode_and_type() {
        assert_eq!(Kind::of(Opcode::UPDATE, Rtype::SOA), Some(Kind::Update));
        assert_eq!(Kind::of(Opcode::NOTIFY, Rtype::SOA), Some(Kind::Notify));
        assert_eq!(Kind::of(Opcode::QUERY, Rtype::IXFR), Some(Kind::Transfer(Rtype::IXFR)));
        assert_eq!(Kind::of(Opcode::QUERY, Rtype::A), None);
    }
}
