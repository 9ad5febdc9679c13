//! Transfer requests (AXFR, IXFR) that were not served, logged: one line each with the
//! zone, the client, the kind and why, at most [`PER_SECOND`] lines a second; the rest
//! are counted and said in one line the next second. A client that sends refused
//! requests in a loop (or spoofs them over UDP) fills no disk.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tern_wire::{Dname, Rcode, Rtype};
use tracing::warn;

/// Lines a second at most.
pub const PER_SECOND: u64 = 10;

/// The log's state (see the module comment).
#[derive(Debug, Default)]
pub struct Refusals {
    second: AtomicU64,
    logged: AtomicU64,
    suppressed: AtomicU64,
}

impl Refusals {
    /// Notes a transfer request of `kind` from `client` answered `rcode`; `query` is the
    /// request (its question names the zone).
    pub fn note(&self, query: &[u8], kind: Rtype, rcode: Rcode, client: SocketAddr, now: u64) {
        if self.second.swap(now, Relaxed) != now {
            self.logged.store(0, Relaxed);
            let suppressed = self.suppressed.swap(0, Relaxed);
            if suppressed > 0 {
                warn!(suppressed, "more transfer requests refused (not logged one by one)");
            }
        }
        if self.logged.fetch_add(1, Relaxed) >= PER_SECOND {
            self.suppressed.fetch_add(1, Relaxed);
            return;
        }
        let zone = query.get(12..).and_then(|q| Dname::from_wire_prefix(q).ok()).map(|(z, _)| z);
        let zone = zone.map_or_else(|| "-".to_owned(), ToString::to_string);
        warn!(zone = %zone, client = %client, kind = %kind, rcode = %rcode, "transfer refused: {}", why(rcode));
    }
}

/// What an rcode answering a transfer request means.
fn why(rcode: Rcode) -> &'static str {
    match rcode {
        Rcode::REFUSED => "no acl rule of the zone allows this client (or key) to transfer it",
        Rcode::NOTAUTH => "not a zone served here, or its TSIG did not verify",
        Rcode::SERVFAIL => {
            "the zone has no data (not loaded or expired), or too many transfers out"
        }
        Rcode::NOTIMP => "AXFR over UDP (RFC 5936 §4.2)",
        Rcode::FORMERR => "malformed (IXFR without the client's SOA, RFC 1995 §3)",
        _ => "not served",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_the_limit_a_second_is_logged() {
        let refusals = Refusals::default();
        let client: SocketAddr = "192.0.2.1:53".parse().unwrap();
        for _ in 0..25 {
            refusals.note(&[0; 12], Rtype::AXFR, Rcode::REFUSED, client, 100);
        }
        assert_eq!(refusals.logged.load(Relaxed), 25);
        assert_eq!(refusals.suppressed.load(Relaxed), 15);
        refusals.note(&[0; 12], Rtype::IXFR, Rcode::NOTAUTH, client, 101);
        assert_eq!(refusals.suppressed.load(Relaxed), 0, "said and reset the next second");
        assert_eq!(refusals.logged.load(Relaxed), 1);
    }
}
