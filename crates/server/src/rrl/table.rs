//! The rate-limiting table: a fixed array of counters shared by every worker, without
//! locks.
//!
//! Each counter is the generic cell rate algorithm (GCRA, the "virtual scheduling" form
//! of a token bucket) in one 64-bit word: a 20-bit tag of its key and the theoretical
//! arrival time (TAT) of the next answer, in nanoseconds modulo 2^44 (about 4.9 hours).
//! An answer at `now` is allowed when `TAT − now ≤ tolerance` and then moves TAT to
//! `max(TAT, now) + interval`; a refused answer changes nothing. Under a flood exactly
//! one answer per `interval` passes, after a burst of `tolerance / interval + 1`.
//!
//! A key's counter is in one of the 8 slots of the 64-byte line its hash picks; a new
//! key takes the slot whose TAT is least ahead of now (an idle counter holds no
//! information: a fresh one behaves the same). A TAT is "ahead" only by at most
//! `tolerance + interval`; anything else is a counter gone idle (or, once per wrap of
//! the 44-bit clock, one idle for exactly a multiple of 4.9 hours, which then limits one
//! burst too early). Updates are compare-and-swap on the word, relaxed: each word
//! stands alone, and a swap lost means another worker's went through (lock-free).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Slots per line.
const WAYS: usize = 8;
/// Bits of time in a slot.
const TIME_BITS: u32 = 44;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;

/// One cache line of slots.
#[repr(align(64))]
#[derive(Default)]
struct Line([AtomicU64; WAYS]);

impl Line {
    /// The slot after the first holding the key tagged `tagged` (its tag shifted in
    /// place), with the word read there: a load, an exclusive or and a compare a slot.
    /// Slots are taken in order and never emptied (a word is never 0 once written: its
    /// tag is not), so a key is never after an empty slot, and a line holding one key
    /// is searched no further than its second slot.
    #[inline(always)]
    fn find_after_first(&self, tagged: u64) -> Option<(&AtomicU64, u64)> {
        let [_, second, rest @ ..] = &self.0;
        let word = second.load(Relaxed);
        if word ^ tagged <= TIME_MASK {
            return Some((second, word));
        }
        if word == 0 {
            return None;
        }
        rest.iter().find_map(|slot| {
            let word = slot.load(Relaxed);
            (word ^ tagged <= TIME_MASK).then_some((slot, word))
        })
    }

    /// The slot a new key takes: the first idle one (empty, or its counter behind now),
    /// else the one least ahead; with the word seen there.
    fn victim(&self, now: u64, pace: Pace) -> (&AtomicU64, u64) {
        let [first, ..] = &self.0;
        let mut best = (first, u64::MAX, 0);
        for slot in &self.0 {
            let word = slot.load(Relaxed);
            let lead = if word == 0 { 0 } else { pace.lead(word & TIME_MASK, now) };
            if lead == 0 {
                return (slot, word);
            }
            if lead < best.1 {
                best = (slot, lead, word);
            }
        }
        (best.0, best.2)
    }
}

/// The counters.
pub struct Table {
    lines: Box<[Line]>,
    mask: usize,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({} slots)", self.lines.len() * WAYS)
    }
}

/// How fast one kind of answer may go: one per `interval`, `tolerance` ahead at most
/// (nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Time between two answers at the rate.
    pub interval: u64,
    /// How far ahead of now a counter may run: the burst.
    pub tolerance: u64,
}

impl Pace {
    /// `rate` answers per second, at most `rate × window` in any window; `None` for a
    /// rate of 0 (not limited).
    pub fn new(rate: u64, window_ns: u64) -> Option<Pace> {
        let interval = 1_000_000_000u64.checked_div(rate)?.max(1);
        Some(Pace { interval, tolerance: window_ns.saturating_sub(interval) })
    }

    /// How far ahead of `now` the counter's `tat` is: 0 when it is behind, or further
    /// ahead than a counter in use can be (idle, or left from an earlier wrap).
    fn lead(&self, tat: u64, now: u64) -> u64 {
        let lead = tat.wrapping_sub(now) & TIME_MASK;
        if lead <= self.tolerance + self.interval {
            lead
        } else {
            0
        }
    }
}

impl Table {
    /// A table of at least `slots` slots (rounded up to a power of two lines).
    pub fn new(slots: usize) -> Table {
        let lines = slots.div_ceil(WAYS).next_power_of_two().max(1);
        let lines: Box<[Line]> = (0..lines).map(|_| Line::default()).collect();
        let mask = lines.len() - 1;
        Table { lines, mask }
    }

    /// Counts an answer under `key` at `now` (nanoseconds); true when it may go.
    ///
    /// The first slot is read once and serves every step: most often it holds the key,
    /// or is empty or idle and takes a new one (the first idle slot is the one a new key
    /// takes); an empty one ends the search at once.
    #[inline]
    pub fn admit(&self, key: u64, now: u64, pace: Pace) -> bool {
        let Some(line) = self.lines.get(key as usize & self.mask) else { return true };
        let tagged = (key >> TIME_BITS).max(1) << TIME_BITS;
        let now = now & TIME_MASK;
        let [first, ..] = &line.0;
        let word = first.load(Relaxed);
        if word ^ tagged <= TIME_MASK {
            return Self::update(first, word, tagged, now, pace);
        }
        // An empty first slot is an empty line: slots are taken in order.
        let (slot, seen) = if word == 0 {
            (first, word)
        } else if let Some((slot, word)) = line.find_after_first(tagged) {
            return Self::update(slot, word, tagged, now, pace);
        } else if pace.lead(word & TIME_MASK, now) == 0 {
            (first, word)
        } else {
            line.victim(now, pace)
        };
        let fresh = tagged | ((now + pace.interval) & TIME_MASK);
        if slot.compare_exchange(seen, fresh, Relaxed, Relaxed).is_ok() {
            return true;
        }
        Self::admit_contended(line, tagged, now, pace)
    }

    /// Starts loading the line of `key` ([`Table::admit`] will read it).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if let Some(line) = self.lines.get(key as usize & self.mask) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch is only a hint: it reads nothing the program sees and
            // cannot fault; the line is ours anyway.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(line).cast::<i8>());
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = line;
        }
    }

    /// [`Table::admit`] after another worker changed the slot a new key was to take:
    /// looks again until a swap goes through (out of line, so that the first look
    /// keeps its registers).
    #[cold]
    #[inline(never)]
    fn admit_contended(line: &Line, tagged: u64, now: u64, pace: Pace) -> bool {
        loop {
            let found = line.0.iter().find_map(|slot| {
                let word = slot.load(Relaxed);
                (word ^ tagged <= TIME_MASK).then_some((slot, word))
            });
            if let Some((slot, word)) = found {
                return Self::update(slot, word, tagged, now, pace);
            }
            let (slot, seen) = line.victim(now, pace);
            let fresh = tagged | ((now + pace.interval) & TIME_MASK);
            if slot.compare_exchange(seen, fresh, Relaxed, Relaxed).is_ok() {
                return true;
            }
        }
    }

    /// The GCRA step on `slot`, whose word `word` holds the key tagged `tagged`.
    #[inline]
    fn update(slot: &AtomicU64, mut word: u64, tagged: u64, now: u64, pace: Pace) -> bool {
        loop {
            let lead = pace.lead(word & TIME_MASK, now);
            if lead > pace.tolerance {
                return false;
            }
            let tat = (now + lead + pace.interval) & TIME_MASK;
            match slot.compare_exchange(word, tagged | tat, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(current) if current & !TIME_MASK == tagged => word = current,
                Err(_) => return true, // the slot went to another key meanwhile
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    /// Offers `per_second` answers a second for `seconds`, evenly; counts those allowed.
    fn offer(
        table: &Table,
        key: u64,
        pace: Pace,
        start: u64,
        per_second: u64,
        seconds: u64,
    ) -> u64 {
        let step = SECOND / per_second;
        (0..per_second * seconds).filter(|i| table.admit(key, start + i * step, pace)).count()
            as u64
    }

    #[test]
    fn a_flood_gets_the_rate_after_one_burst() {
        let table = Table::new(1024);
        let pace = Pace::new(100, SECOND).unwrap();
        // 1,000 a second for 10 s: the burst of 100, then 100 a second.
        let passed = offer(&table, 42, pace, 5 * SECOND, 1000, 10);
        assert!((1090..=1101).contains(&passed), "{passed}");
        // Under the rate, everything passes.
        assert_eq!(offer(&table, 43, pace, 5 * SECOND, 50, 10), 500);
    }

    #[test]
    fn the_window_sets_the_burst() {
        let table = Table::new(1024);
        let pace = Pace::new(10, 3 * SECOND).unwrap();
        let at = 100 * SECOND;
        let burst = (0..100).filter(|_| table.admit(7, at, pace)).count();
        assert_eq!(burst, 30, "rate × window at once");
        assert!(!table.admit(7, at + SECOND / 20, pace));
        assert!(table.admit(7, at + SECOND / 10, pace), "one interval later");
        assert!(Pace::new(0, SECOND).is_none(), "rate 0: not limited");
    }

    #[test]
    fn keys_are_counted_apart_and_idle_counters_give_way() {
        let table = Table::new(8); // one line
        let pace = Pace::new(1, SECOND).unwrap();
        let at = 10 * SECOND;
        for key in 1..=8u64 {
            assert!(table.admit(key << TIME_BITS, at, pace), "key {key}");
            assert!(!table.admit(key << TIME_BITS, at, pace), "key {key} again");
        }
        // A ninth key takes the slot whose counter is least ahead; none is idle yet, so
        // one of the others loses its count, but nobody is refused wrongly.
        assert!(table.admit(9 << TIME_BITS, at, pace));
        // Two seconds on, every counter is idle: all start afresh.
        for key in 1..=9u64 {
            assert!(table.admit(key << TIME_BITS, at + 2 * SECOND, pace), "key {key}");
        }
    }

    #[test]
    fn a_key_is_found_past_an_idle_slot_that_a_new_key_took() {
        let table = Table::new(8); // one line
        let pace = Pace::new(1, SECOND).unwrap(); // no burst: one answer a second
        let (at, key) = (10 * SECOND, |k: u64| k << TIME_BITS);
        for k in 1..=3 {
            assert!(table.admit(key(k), at, pace), "key {k} takes slot {}", k - 1);
        }
        assert!(table.admit(key(3), at + SECOND, pace), "a second on");
        // Half a second later, key 1's slot (the first) is idle and a new key takes it;
        // key 3, in the third slot, is still counted.
        assert!(table.admit(key(4), at + 3 * SECOND / 2, pace));
        assert!(!table.admit(key(3), at + 3 * SECOND / 2, pace), "not taken for a new key");
        assert!(!table.admit(key(4), at + 3 * SECOND / 2, pace));
        assert!(table.admit(key(2), at + 3 * SECOND / 2, pace), "idle: starts afresh");
    }

    #[test]
    fn the_clock_wraps() {
        let table = Table::new(64);
        let pace = Pace::new(10, SECOND).unwrap();
        let near_wrap = TIME_MASK - SECOND / 2;
        let passed = offer(&table, 5, pace, near_wrap, 100, 3);
        assert!((38..=41).contains(&passed), "burst 10 + 3 s × 10: {passed}");
    }

    #[test]
    fn workers_share_the_count() {
        let table = std::sync::Arc::new(Table::new(1024));
        let pace = Pace::new(1000, SECOND).unwrap();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let table = std::sync::Arc::clone(&table);
                std::thread::spawn(move || {
                    (0..5000).filter(|_| table.admit(99, SECOND, pace)).count()
                })
            })
            .collect();
        let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        // All at one instant: the burst of 1,000 exactly.
        assert_eq!(total, 1000);
    }
}
