//! The rate-limiting reporter: a thread of its own that turns what the workers hand
//! over (a [`Limited`] per prefix, at most once a second per worker) into log lines —
//! one when a prefix starts being limited, one per `log-interval` while it stays
//! limited, one when it has been quiet for a `log-interval` — and a line of totals per
//! `log-interval` while they grow. Never a line per packet, and no work on the data
//! plane: the workers only `try_send` into a bounded queue.

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_engine::ResponseClass;
use tracing::{info, warn};

use super::{class_index, Counters, CountersSnapshot, Limited, Tally};

/// How often the reporter looks at its prefixes when nothing arrives.
const TICK: Duration = Duration::from_secs(1);
/// "Started" lines per tick; more prefixes are summed up in one line and named later.
const MAX_NEW_LINES: usize = 16;
/// Prefixes followed at once; more are only in the totals.
const MAX_PREFIXES: usize = 4096;

/// What is known of one limited prefix.
#[derive(Debug)]
struct PrefixState {
    len: u8,
    classes: u8,
    started: Instant,
    last_seen: Instant,
    /// When it was last logged; `None` until its "started" line.
    last_line: Option<Instant>,
    /// Since the last line.
    recent: Tally,
    total: Tally,
}

/// The reporter's state.
#[derive(Debug)]
pub struct Reporter {
    counters: Arc<Counters>,
    interval: Duration,
    prefixes: HashMap<u128, PrefixState>,
    totals: CountersSnapshot,
    totals_at: Instant,
}

impl Reporter {
    /// A reporter logging every `interval`, with the shared counters for its totals.
    pub fn new(counters: Arc<Counters>, interval: Duration) -> Reporter {
        Reporter {
            counters,
            interval,
            prefixes: HashMap::new(),
            totals: CountersSnapshot::default(),
            totals_at: Instant::now(),
        }
    }

    /// Runs until every sender is gone.
    pub fn run(mut self, receiver: &Receiver<Limited>) {
        loop {
            match receiver.recv_timeout(TICK) {
                Ok(limited) => self.merge(&limited, Instant::now()),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            while let Ok(limited) = receiver.try_recv() {
                self.merge(&limited, Instant::now());
            }
            self.tick(Instant::now());
        }
    }

    /// Adds one hand-over.
    fn merge(&mut self, limited: &Limited, now: Instant) {
        if !self.prefixes.contains_key(&limited.prefix) && self.prefixes.len() >= MAX_PREFIXES {
            return;
        }
        let state = self.prefixes.entry(limited.prefix).or_insert(PrefixState {
            len: limited.len,
            classes: 0,
            started: now,
            last_seen: now,
            last_line: None,
            recent: Tally::default(),
            total: Tally::default(),
        });
        state.classes |= limited.classes;
        state.last_seen = now;
        add(&mut state.recent, &limited.tally);
        add(&mut state.total, &limited.tally);
    }

    /// Logs what is due at `now`.
    fn tick(&mut self, now: Instant) {
        let mut new_lines = 0;
        let mut unnamed = 0;
        let interval = self.interval;
        self.prefixes.retain(|&prefix, state| {
            let text = prefix_text(prefix, state.len);
            match state.last_line {
                None if new_lines < MAX_NEW_LINES => {
                    new_lines += 1;
                    log_started(&text, state);
                    state.last_line = Some(now);
                    state.recent = Tally::default();
                }
                None => unnamed += 1,
                Some(at)
                    if now.duration_since(at) >= interval && state.recent != Tally::default() =>
                {
                    log_continues(&text, state, now.duration_since(at));
                    state.last_line = Some(now);
                    state.recent = Tally::default();
                }
                Some(_) => {}
            }
            let quiet = now.duration_since(state.last_seen) >= interval;
            if quiet && state.last_line.is_some() {
                log_ended(&text, state);
            }
            !quiet
        });
        if unnamed > 0 {
            warn!(
                prefixes = unnamed,
                "rate limiting started for more prefixes (named as room allows)"
            );
        }
        self.log_totals(now);
    }

    /// The totals line, once per interval while they grow.
    fn log_totals(&mut self, now: Instant) {
        if now.duration_since(self.totals_at) < self.interval {
            return;
        }
        let totals = self.counters.snapshot();
        if totals != self.totals {
            let CountersSnapshot { dropped, slipped, bad_cookie, logged_only } = totals;
            info!(dropped, slipped, bad_cookie, logged_only, "rate limiting totals since start");
            self.totals = totals;
        }
        self.totals_at = now;
    }
}

fn add(sum: &mut Tally, more: &Tally) {
    sum.dropped += more.dropped;
    sum.slipped += more.slipped;
    sum.bad_cookie += more.bad_cookie;
    sum.logged_only += more.logged_only;
}

fn log_started(prefix: &str, state: &PrefixState) {
    let Tally { dropped, slipped, bad_cookie, logged_only } = state.recent;
    let classes = classes_text(state.classes);
    warn!(prefix, classes, dropped, slipped, bad_cookie, logged_only, "rate limiting started");
}

fn log_continues(prefix: &str, state: &PrefixState, over: Duration) {
    let Tally { dropped, slipped, bad_cookie, logged_only } = state.recent;
    let (classes, seconds) = (classes_text(state.classes), over.as_secs());
    info!(
        prefix,
        classes, dropped, slipped, bad_cookie, logged_only, seconds, "rate limiting continues"
    );
}

fn log_ended(prefix: &str, state: &PrefixState) {
    let Tally { dropped, slipped, bad_cookie, logged_only } = state.total;
    let seconds = state.last_seen.duration_since(state.started).as_secs();
    info!(prefix, dropped, slipped, bad_cookie, logged_only, seconds, "rate limiting ended");
}

/// `192.0.2.0/24` or `2001:db8::/56`.
pub fn prefix_text(prefix: u128, len: u8) -> String {
    if prefix >> 32 == 0xffff {
        format!("{}/{len}", Ipv4Addr::from_bits(prefix as u32))
    } else {
        format!("{}/{len}", Ipv6Addr::from_bits(prefix))
    }
}

/// The classes of a bit set, comma-separated.
fn classes_text(bits: u8) -> String {
    let names: Vec<&str> = ResponseClass::ALL
        .iter()
        .filter(|&&c| bits & (1 << class_index(c)) != 0)
        .map(|c| c.name())
        .collect();
    names.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(prefix: u128, dropped: u64) -> Limited {
        let tally = Tally { dropped, ..Tally::default() };
        Limited { prefix, len: 24, classes: 1 << class_index(ResponseClass::NxDomain), tally }
    }

    #[test]
    fn texts() {
        assert_eq!(prefix_text(0xffff_c000_0200, 24), "192.0.2.0/24");
        assert_eq!(prefix_text(0x2001_0db8_u128 << 96, 56), "2001:db8::/56");
        assert_eq!(classes_text(0b100101), "positive,nxdomain,error");
    }

    #[test]
    fn prefixes_are_logged_when_they_start_and_forgotten_when_quiet() {
        let mut r = Reporter::new(Arc::default(), Duration::from_secs(10));
        let t0 = Instant::now();
        r.merge(&limited(1, 5), t0);
        r.tick(t0);
        assert_eq!(r.prefixes.get(&1).and_then(|s| s.last_line), Some(t0));
        r.merge(&limited(1, 7), t0 + Duration::from_secs(3));
        r.tick(t0 + Duration::from_secs(3));
        let state = r.prefixes.get(&1).unwrap();
        assert_eq!((state.total.dropped, state.recent.dropped), (12, 7));
        r.tick(t0 + Duration::from_secs(12));
        assert!(r.prefixes.contains_key(&1), "seen 9 s ago");
        r.tick(t0 + Duration::from_secs(14));
        assert!(r.prefixes.is_empty(), "quiet for 11 s");
    }

    #[test]
    fn new_prefixes_beyond_the_lines_of_a_tick_wait_their_turn() {
        let mut r = Reporter::new(Arc::default(), Duration::from_secs(10));
        let t0 = Instant::now();
        for p in 0..40 {
            r.merge(&limited(p, 1), t0);
        }
        r.tick(t0);
        let named = r.prefixes.values().filter(|s| s.last_line.is_some()).count();
        assert_eq!(named, MAX_NEW_LINES);
        r.tick(t0 + Duration::from_secs(1));
        r.tick(t0 + Duration::from_secs(2));
        assert!(r.prefixes.values().all(|s| s.last_line.is_some()));
    }
}
