//! Response rate limiting (RRL): an authoritative server must not be a reflector that
//! sends large answers to the victim of spoofed queries.
//!
//! UDP answers are counted per client prefix (`/24` and `/56` by default), response
//! class and name (the engine's [`Report`]) in one lock-free [`Table`] shared by the
//! workers. Over its rate an answer is dropped, or every `slip`-th one replaced by a
//! short answer: TC=1 (ask again over TCP), or BADCOOKIE with a server cookie when the
//! client sent a cookie and `require-cookie` is on (ask again with it). Answers over TCP
//! and to queries with a valid server cookie are never limited; the handler does not ask.
//!
//! Per query, a worker reads no clock (the time is read once per batch, from the
//! coarse monotonic clock: [`Limiter::now`]), writes one table word, and touches
//! nothing else shared: what it limited is tallied in its own
//! [`WorkerLimits`] and handed over at most once a second, to the shared [`Counters`]
//! and, prefix by prefix, to the reporter thread ([`report`]), which logs a line per
//! limited prefix now and then, never one per packet. The counter's line is picked at
//! random in a table larger than the cache keeps, so the worker starts loading it as
//! soon as the engine has decided a referral's or a positive answer's class, before
//! the records are written ([`Limiter::prefetch`]). With rate limiting off the handler
//! holds no [`Limiter`] and none of this runs.

pub mod report;
pub mod table;

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_engine::{CookieSeen, Prefix, Report, ResponseClass, Short};

use crate::config::RrlConfig;
pub use table::{Pace, Table};

/// How often a worker hands over what it limited.
const FLUSH_EVERY: u64 = 1_000_000_000;
/// Limited prefixes a worker remembers between two hand-overs (the rest are counted
/// without their prefix).
const RECENT: usize = 16;
/// Hand-overs the reporter may fall behind by before workers' reports are dropped.
const QUEUE: usize = 1024;

/// What to do with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it.
    Send,
    /// Send nothing.
    Drop,
    /// Send this short answer in its place.
    Short(Short),
}

/// Answers limited since start, all workers together (up to a second behind).
#[derive(Debug, Default)]
pub struct Counters {
    dropped: AtomicU64,
    slipped: AtomicU64,
    bad_cookie: AtomicU64,
    logged_only: AtomicU64,
}

/// A copy of the [`Counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountersSnapshot {
    /// Answers not sent.
    pub dropped: u64,
    /// Answers replaced by TC=1.
    pub slipped: u64,
    /// Answers replaced by BADCOOKIE.
    pub bad_cookie: u64,
    /// Answers over the rate sent anyway (`log-only`).
    pub logged_only: u64,
}

impl Counters {
    /// Reads the counters.
    pub fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            dropped: self.dropped.load(Relaxed),
            slipped: self.slipped.load(Relaxed),
            bad_cookie: self.bad_cookie.load(Relaxed),
            logged_only: self.logged_only.load(Relaxed),
        }
    }

    fn add(&self, tally: &Tally) {
        self.dropped.fetch_add(tally.dropped, Relaxed);
        self.slipped.fetch_add(tally.slipped, Relaxed);
        self.bad_cookie.fetch_add(tally.bad_cookie, Relaxed);
        self.logged_only.fetch_add(tally.logged_only, Relaxed);
    }
}

/// One worker's counts since its last hand-over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Answers not sent.
    pub dropped: u64,
    /// Answers replaced by TC=1.
    pub slipped: u64,
    /// Answers replaced by BADCOOKIE.
    pub bad_cookie: u64,
    /// Answers over the rate sent anyway.
    pub logged_only: u64,
}

/// A prefix a worker limited, for the reporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    /// The prefix, as an IPv6 address (IPv4 prefixes IPv4-mapped), host bits zero.
    pub prefix: u128,
    /// Its length in bits of the address family's own form.
    pub len: u8,
    /// The classes limited, a bit per [`ResponseClass::ALL`] entry.
    pub classes: u8,
    /// What was done.
    pub tally: Tally,
}

/// What one worker keeps for rate limiting: its slip count, and what it limited since
/// its last hand-over. Never shared.
#[derive(Debug)]
pub struct WorkerLimits {
    slip: u64,
    /// When the next hand-over is due.
    flush_at: u64,
    tally: Tally,
    /// The prefixes limited since the last hand-over (more are counted, unnamed).
    recent: [Option<Limited>; RECENT],
}

impl Default for WorkerLimits {
    fn default() -> Self {
        WorkerLimits { slip: 0, flush_at: 0, tally: Tally::default(), recent: [None; RECENT] }
    }
}

impl WorkerLimits {
    /// Remembers that an answer to `prefix` of `class` was limited, and how.
    fn note(&mut self, prefix: u128, len: u8, class: ResponseClass, count: impl Fn(&mut Tally)) {
        count(&mut self.tally);
        let bit = 1 << class_index(class);
        let empty = Limited { prefix, len, classes: 0, tally: Tally::default() };
        let slot =
            self.recent.iter_mut().find(|s| s.is_none_or(|l| l.prefix == prefix && l.len == len));
        if let Some(slot) = slot {
            let limited = slot.get_or_insert(empty);
            limited.classes |= bit;
            count(&mut limited.tally);
        }
    }
}

/// How one class of answers is limited.
#[derive(Debug, Clone, Copy)]
struct ClassLimit {
    pace: Pace,
    /// What the name half of its keys is mixed with: the seed and the class
    /// ([`Seeds::name`]).
    seed: u64,
}

/// Rate limiting shared by the workers.
#[derive(Debug)]
pub struct Limiter {
    table: Table,
    /// Per class (the order of [`ResponseClass::ALL`]); `None`: not limited.
    classes: [Option<ClassLimit>; 6],
    v4_len: u8,
    v6_len: u8,
    /// The masks of those prefix lengths.
    v4_mask: u32,
    v6_mask: u128,
    /// The IPv4 mask as the address's bytes are held (network order), for keys.
    v4_mask_held: u32,
    slip: u64,
    log_only: bool,
    require_cookie: bool,
    whitelist: Vec<Prefix>,
    seeds: Seeds,
    counters: Arc<Counters>,
    reports: SyncSender<Limited>,
    /// The reporter's end, until [`Limiter::start_reports`] takes it.
    receiver: Mutex<Option<Receiver<Limited>>>,
    log_interval: Duration,
}

impl Limiter {
    /// Rate limiting as `config` says, with a random `seed` for the table's hash (so
    /// that nobody can aim queries at one counter), counting into `counters` (kept
    /// across reloads, so that totals never go back); `None` when it is off.
    pub fn new(config: &RrlConfig, seed: u64, counters: Arc<Counters>) -> Option<Limiter> {
        if !config.enabled() {
            return None;
        }
        let window = u64::try_from(config.window.as_nanos()).unwrap_or(u64::MAX);
        let (reports, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        let v4_len = u8::try_from(config.ipv4_prefix).unwrap_or(24);
        let v6_len = u8::try_from(config.ipv6_prefix).unwrap_or(56);
        let v4_mask = u32::MAX.checked_shl(32 - u32::from(v4_len)).unwrap_or(0);
        let seeds = Seeds::new(seed);
        let mut classes = [None; 6];
        for (class, (limit, rate)) in classes.iter_mut().zip(config.rates()).enumerate() {
            let seed = seeds.name(class as u64);
            *limit = Pace::new(rate, window).map(|pace| ClassLimit { pace, seed });
        }
        Some(Limiter {
            table: Table::new(usize::try_from(config.table_size).unwrap_or(1 << 16)),
            classes,
            v4_len,
            v6_len,
            v4_mask,
            v6_mask: u128::MAX.checked_shl(128 - u32::from(v6_len)).unwrap_or(0),
            v4_mask_held: u32::from_ne_bytes(v4_mask.to_be_bytes()),
            slip: config.slip,
            log_only: config.log_only,
            require_cookie: config.require_cookie,
            whitelist: config.whitelist.clone(),
            seeds,
            counters,
            reports,
            receiver: Mutex::new(Some(receiver)),
            log_interval: config.log_interval,
        })
    }

    /// The time a batch is counted at, in nanoseconds: the coarse monotonic clock
    /// (`CLOCK_MONOTONIC_COARSE`, the last timer tick: a few milliseconds' resolution,
    /// read without a system call and for a fraction of the fine clock's cost). Rates
    /// are kept over windows of seconds: a tick of a few milliseconds only lets a
    /// counter's allowance grow in steps of that tick.
    #[inline]
    pub fn now(&self) -> u64 {
        coarse_now()
    }

    /// The counters.
    pub fn counters(&self) -> CountersSnapshot {
        self.counters.snapshot()
    }

    /// Starts the thread that logs limited prefixes (once; later calls do nothing). Until
    /// it runs, what workers hand over beyond the queue's room is dropped.
    pub fn start_reports(&self) {
        let taken = self.receiver.lock().ok().and_then(|mut r| r.take());
        if let Some(receiver) = taken {
            let reporter = report::Reporter::new(Arc::clone(&self.counters), self.log_interval);
            let spawned = std::thread::Builder::new()
                .name("ternd-rrl".into())
                .spawn(move || reporter.run(&receiver));
            if let Err(e) = spawned {
                tracing::warn!(
                    "rate limiting: no reporter thread ({e}): limited prefixes are not logged"
                );
            }
        }
    }

    /// Decides the fate of a UDP answer to `client` of which the engine says `report`,
    /// at `now` ([`Limiter::now`], read once per batch). The caller has left out TCP
    /// and queries with a valid server cookie.
    #[inline]
    pub fn judge(
        &self,
        worker: &mut WorkerLimits,
        now: u64,
        client: &IpAddr,
        report: &Report,
    ) -> Verdict {
        let Some(limit) = self.classes.get(class_index(report.class)).and_then(Option::as_ref)
        else {
            return Verdict::Send;
        };
        if !self.whitelist.is_empty() && self.whitelisted(*client) {
            return Verdict::Send;
        }
        let key = key(self.address(client), report.tag, limit.seed);
        if self.table.admit(key, now, limit.pace) {
            return Verdict::Send;
        }
        self.over(worker, client, report)
    }

    /// Starts loading the counter an answer of `class` and `tag` to `client` will be
    /// judged by ([`Limiter::judge`]): the table is too large to stay in the cache, and
    /// the engine tells this before it writes the answer's records
    /// ([`tern_engine::Engine::answer_reported`]), which hides the wait. (The key is
    /// worked out again for the verdict: keeping it costs more than that.)
    #[inline]
    pub fn prefetch(&self, client: &IpAddr, class: ResponseClass, tag: u32) {
        if let Some(limit) = self.classes.get(class_index(class)).and_then(Option::as_ref) {
            self.table.prefetch(key(self.address(client), tag, limit.seed));
        }
    }

    /// Whether `client` is in a whitelisted prefix (out of line: most configurations
    /// have none).
    #[inline(never)]
    fn whitelisted(&self, client: IpAddr) -> bool {
        self.whitelist.iter().any(|p| p.contains(client))
    }

    /// The fate of an answer over its rate (out of line: the path of a flood, not of
    /// the answers that go).
    #[cold]
    #[inline(never)]
    fn over(&self, worker: &mut WorkerLimits, client: &IpAddr, report: &Report) -> Verdict {
        let (prefix, len) = self.prefix(client);
        if self.log_only {
            worker.note(prefix, len, report.class, |t| t.logged_only += 1);
            return Verdict::Send;
        }
        if self.slip > 0 {
            worker.slip += 1;
            if worker.slip >= self.slip {
                worker.slip = 0;
                if self.require_cookie && report.cookie == CookieSeen::Client {
                    worker.note(prefix, len, report.class, |t| t.bad_cookie += 1);
                    return Verdict::Short(Short::BadCookie);
                }
                worker.note(prefix, len, report.class, |t| t.slipped += 1);
                return Verdict::Short(Short::Truncated);
            }
        }
        worker.note(prefix, len, report.class, |t| t.dropped += 1);
        Verdict::Drop
    }

    /// Hands over what `worker` limited when a second has passed since it last did: its
    /// counts to the shared counters, its prefixes to the reporter (dropped when the
    /// reporter is behind: the counters still have them).
    #[inline]
    pub fn flush(&self, worker: &mut WorkerLimits, now: u64) {
        if now >= worker.flush_at {
            self.hand_over(worker, now);
        }
    }

    #[cold]
    fn hand_over(&self, worker: &mut WorkerLimits, now: u64) {
        worker.flush_at = now.saturating_add(FLUSH_EVERY);
        if worker.tally == Tally::default() {
            return;
        }
        self.counters.add(&worker.tally);
        worker.tally = Tally::default();
        for slot in &mut worker.recent {
            if let Some(limited) = slot.take() {
                if let Err(TrySendError::Disconnected(_)) = self.reports.try_send(limited) {
                    break;
                }
            }
        }
    }

    /// The client's prefix (as an IPv6 address, IPv4 mapped) and its length; an
    /// IPv4-mapped IPv6 client is counted as its IPv4 address.
    #[inline]
    fn prefix(&self, client: &IpAddr) -> (u128, u8) {
        let v4 = match *client {
            IpAddr::V4(v4) => v4,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4,
                None => return (v6.to_bits() & self.v6_mask, self.v6_len),
            },
        };
        (0xffff_u128 << 32 | u128::from(v4.to_bits() & self.v4_mask), self.v4_len)
    }

    /// The address half of a key: the client's prefix mixed with the seed. An IPv4
    /// prefix is taken as its bytes are held (a key needs the prefix, not its value:
    /// no byte swap), an IPv6 one folded to 64 bits; the two families are mixed with
    /// seeds of their own. An IPv4-mapped IPv6 client is counted as its IPv4 address.
    #[inline]
    fn address(&self, client: &IpAddr) -> u64 {
        let v4 = match *client {
            IpAddr::V4(v4) => v4,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4,
                None => {
                    let prefix = v6.to_bits() & self.v6_mask;
                    // 56 bits by default, in the high half.
                    let folded = (prefix as u64) ^ ((prefix >> 64) as u64).rotate_left(32);
                    return folded ^ self.seeds.v6;
                }
            },
        };
        u64::from(u32::from_ne_bytes(v4.octets()) & self.v4_mask_held) ^ self.seeds.v4
    }
}

/// The random seed as a key's two halves are mixed with it: made once.
#[derive(Debug, Clone, Copy)]
struct Seeds {
    /// For IPv4 prefixes: the seed with the marker of IPv4-mapped addresses
    /// (`::ffff:0:0/96`) above the address's 32 bits, which an IPv6 prefix folded to 64
    /// bits seldom has.
    v4: u64,
    /// For IPv6 prefixes: the seed.
    v6: u64,
    /// Bit 0 is set: the name's half is a factor, and a factor of 0 would lose the
    /// address.
    name: u64,
}

impl Seeds {
    fn new(seed: u64) -> Seeds {
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        Seeds { v4: seed ^ 0xffff << 32, v6: seed, name: (seed.rotate_left(32) ^ K) | 1 }
    }

    /// What the name half of the keys of class number `class` is mixed with: bit 0 is
    /// the seed's (set), so the class starts at bit 1, below the tag (from bit 8).
    fn name(self, class: u64) -> u64 {
        self.name ^ class << 1
    }
}

/// The table key of the address half `address` ([`Limiter::address`]) and name `tag`,
/// the name half mixed with `seed` ([`Seeds::name`]): one folded multiply (the 128-bit
/// product's halves xored), so that both the line (the key's low bits) and the tag
/// (its high bits) depend on the prefix, class and name, and nobody without the seed
/// can aim two keys at one counter.
#[inline]
fn key(address: u64, tag: u32, seed: u64) -> u64 {
    let name = u64::from(tag) << 8 ^ seed;
    let product = u128::from(address) * u128::from(name);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Nanoseconds on `CLOCK_MONOTONIC_COARSE` (0 if it cannot be read, which Linux does
/// not do for this clock: `clock_gettime` then leaves the time at 0).
#[inline]
fn coarse_now() -> u64 {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `time` is a timespec on our stack; clock_gettime only writes to it.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut time) };
    // A monotonic time is never negative: its fields convert as they are.
    let (seconds, nanos) = (time.tv_sec as u64, time.tv_nsec as u64);
    seconds.wrapping_mul(1_000_000_000).wrapping_add(nanos)
}

/// The index of `class` in [`ResponseClass::ALL`].
pub fn class_index(class: ResponseClass) -> usize {
    match class {
        ResponseClass::Positive => 0,
        ResponseClass::Wildcard => 1,
        ResponseClass::NxDomain => 2,
        ResponseClass::NoData => 3,
        ResponseClass::Referral => 4,
        ResponseClass::Error => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(text: &str) -> Limiter {
        let config =
            crate::config::Config::from_text(text, std::path::Path::new("t.toml")).unwrap();
        Limiter::new(&config.rrl, 1, Arc::default()).unwrap()
    }

    fn positive(tag: u32, cookie: CookieSeen) -> Report {
        Report { class: ResponseClass::Positive, tag, cookie }
    }

    /// Judges `count` answers to `client` at one instant; returns (sent, dropped, short).
    fn run(
        l: &Limiter,
        w: &mut WorkerLimits,
        client: &str,
        report: Report,
        count: usize,
    ) -> (usize, usize, usize) {
        let client: IpAddr = client.parse().unwrap();
        let mut seen = (0, 0, 0);
        for _ in 0..count {
            match l.judge(w, 5_000_000_000, &client, &report) {
                Verdict::Send => seen.0 += 1,
                Verdict::Drop => seen.1 += 1,
                Verdict::Short(_) => seen.2 += 1,
            }
        }
        seen
    }

    #[test]
    fn prefixes_share_a_count_and_slips_alternate() {
        let l = limiter("[rrl]\nrate = 10\n");
        let mut w = WorkerLimits::default();
        let report = positive(7, CookieSeen::None);
        assert_eq!(run(&l, &mut w, "192.0.2.1", report, 10), (10, 0, 0));
        assert_eq!(run(&l, &mut w, "192.0.2.200", report, 10), (0, 5, 5), "same /24, slip 2");
        assert_eq!(run(&l, &mut w, "192.0.3.1", report, 10), (10, 0, 0), "another /24");
        assert_eq!(
            run(&l, &mut w, "192.0.2.1", positive(8, CookieSeen::None), 10),
            (10, 0, 0),
            "another name"
        );
        let mut ask6 = |a: &str| run(&l, &mut w, a, report, 10);
        assert_eq!(ask6("2001:db8:0:ff::1"), (10, 0, 0));
        assert_eq!(ask6("2001:db8:0:aa::2"), (0, 5, 5), "same /56");
        assert_eq!(ask6("2001:db8:0:100::1"), (10, 0, 0), "another /56");
        assert_eq!(w.tally, Tally { dropped: 10, slipped: 10, ..Tally::default() });
        let names: Vec<_> =
            w.recent.iter().flatten().map(|l| (l.prefix, l.len, l.tally.dropped)).collect();
        let v4: u128 = 0xffff_c000_0200;
        let v6 = u128::from_be_bytes([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(names, vec![(v4, 24, 5), (v6, 56, 5)]);
        l.flush(&mut w, 5_000_000_000);
        assert_eq!(l.counters().dropped, 10);
        assert!(w.recent.iter().all(Option::is_none));
    }

    #[test]
    fn slip_log_only_whitelist_and_bad_cookies() {
        let none = limiter("[rrl]\nrate = 1\nslip = 0\n");
        let mut w = WorkerLimits::default();
        assert_eq!(run(&none, &mut w, "192.0.2.1", positive(1, CookieSeen::None), 10), (1, 9, 0));
        let dry = limiter("[rrl]\nrate = 1\nlog-only = true\n");
        assert_eq!(run(&dry, &mut w, "192.0.2.1", positive(1, CookieSeen::None), 10), (10, 0, 0));
        assert_eq!(w.tally.logged_only, 9);
        let white = limiter("[rrl]\nrate = 1\nwhitelist = [\"192.0.2.0/25\"]\n");
        assert_eq!(run(&white, &mut w, "192.0.2.1", positive(1, CookieSeen::None), 10), (10, 0, 0));
        assert_eq!(
            run(&white, &mut w, "::ffff:192.0.2.2", positive(1, CookieSeen::None), 10),
            (10, 0, 0)
        );
        assert_eq!(
            run(&white, &mut w, "192.0.2.200", positive(1, CookieSeen::None), 10),
            (1, 5, 4)
        );
        let strict = limiter("[rrl]\nrate = 1\nslip = 1\nrequire-cookie = true\n");
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let mut w = WorkerLimits::default();
        let judge =
            |w: &mut WorkerLimits, cookie| strict.judge(w, 0, &client, &positive(1, cookie));
        assert_eq!(judge(&mut w, CookieSeen::Client), Verdict::Send);
        assert_eq!(judge(&mut w, CookieSeen::Client), Verdict::Short(Short::BadCookie));
        assert_eq!(judge(&mut w, CookieSeen::None), Verdict::Short(Short::Truncated));
    }

    #[test]
    fn mapped_clients_share_their_ipv4_prefix() {
        let l = limiter("[rrl]\nrate = 10\n");
        let mut w = WorkerLimits::default();
        let report = positive(7, CookieSeen::None);
        assert_eq!(run(&l, &mut w, "::ffff:192.0.2.1", report, 10), (10, 0, 0));
        assert_eq!(run(&l, &mut w, "192.0.2.9", report, 2), (0, 1, 1), "same /24");
        assert_eq!(w.recent[0].map(|l| (l.prefix, l.len)), Some((0xffff_c000_0200, 24)));
    }

    #[test]
    fn keys_depend_on_every_part_and_the_seed() {
        let (one, two) = (limiter("[rrl]\nrate = 10\n"), limiter("[rrl]\nrate = 10\n"));
        let two = Limiter { seeds: Seeds::new(2), ..two };
        let key_of = |l: &Limiter, client: &str, tag, class: u64| {
            let address = l.address(&client.parse().unwrap());
            key(address, tag, l.seeds.name(class))
        };
        let base = key_of(&one, "192.0.2.1", 7, 0);
        assert_eq!(base, key_of(&one, "192.0.2.200", 7, 0), "one /24");
        assert_eq!(base, key_of(&one, "::ffff:192.0.2.9", 7, 0), "IPv4-mapped");
        assert_eq!(
            key_of(&one, "2001:db8:0:ff::1", 7, 0),
            key_of(&one, "2001:db8:0:aa::2", 7, 0),
            "one /56"
        );
        let others = [
            key_of(&two, "192.0.2.1", 7, 0),
            key_of(&one, "192.0.3.1", 7, 0),
            key_of(&one, "2001:db8::1", 7, 0),
            key_of(&one, "2001:db8:0:100::1", 7, 0),
            key_of(&one, "192.0.2.1", 8, 0),
            key_of(&one, "192.0.2.1", 7, 1),
            key_of(&one, "192.0.2.1", 7, 5),
        ];
        for other in others {
            assert_ne!(base, other);
            // Both the line (low bits) and the tag (high bits) change.
            assert_ne!(base & 0xffff, other & 0xffff);
            assert_ne!(base >> 44, other >> 44);
        }
    }

    #[test]
    fn the_coarse_clock_moves_on() {
        let before = coarse_now();
        std::thread::sleep(Duration::from_millis(30));
        let after = coarse_now();
        assert!(before > 0);
        assert!(after > before && after - before < 1_000_000_000, "{before} {after}");
    }

    #[test]
    fn classes_have_their_own_rates() {
        let l = limiter("[rrl]\nrate = 100\nnxdomain-rate = 2\nerror-rate = 0\n");
        let mut w = WorkerLimits::default();
        let nx = Report { class: ResponseClass::NxDomain, tag: 3, cookie: CookieSeen::None };
        assert_eq!(run(&l, &mut w, "192.0.2.1", nx, 4), (2, 1, 1));
        let error = Report::error(CookieSeen::None);
        assert_eq!(run(&l, &mut w, "192.0.2.1", error, 1000), (1000, 0, 0), "not limited");
        assert_eq!(w.recent[0].map(|l| l.classes), Some(1 << class_index(ResponseClass::NxDomain)));
    }
}
