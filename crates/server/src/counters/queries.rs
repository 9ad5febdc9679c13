//! The data plane's counters: queries by transport, answers by rcode, questions by type
//! (a fixed set, the rest counted as `other`), answer sizes, DO and TC.
//!
//! Each UDP and AF_XDP worker and each TCP runtime thread owns one [`WorkerCounters`], a
//! cache-line-aligned slot that only it writes (see [`super::bump`]: no locked
//! instruction, no line shared with another writer), made when the handler makes its
//! scratch and registered in [`QueryCounters`]. A scrape reads every slot and adds them
//! up ([`QueryCounters::sum`]); slots are never removed, so totals never go back. An
//! AF_XDP worker's queries are UDP to the handler; its slot says so, and its UDP counts
//! are added up as a transport of their own, `xdp`. TLS and QUIC are counted apart from
//! TCP, though they are served on the same threads.
//!
//! Each slot also holds the per-zone counts (`query-stats`): one [`ZoneRow`] of answers
//! by rcode and questions by type per zone counted, as many rows as
//! `query-stats-max-zones`, made with the slot (zeroed memory the kernel maps only once
//! a row is written) so that counting never allocates. A zone's [`StatsTicket`] names its
//! row; a worker's row remembers the ticket it counts for, and is wiped when it first
//! counts under a newer one (the row was handed to another zone) while a query under an
//! older ticket is not counted. A scrape adds up, for each zone, the workers' rows that
//! count for its ticket ([`QueryCounters::zone_sum`]).

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, Mutex, PoisonError};

use tern_wire::{Rcode, Rtype};
use tern_zone::StatsTicket;

use super::{bump, rcode_index, RCODE_SLOTS};
use crate::handler::Transport;

/// The types counted on their own; every other is counted as `other`.
pub const QTYPES: [Rtype; 17] = [
    Rtype::A,
    Rtype::AAAA,
    Rtype::NS,
    Rtype::SOA,
    Rtype::MX,
    Rtype::TXT,
    Rtype::CNAME,
    Rtype::PTR,
    Rtype::SRV,
    Rtype::DS,
    Rtype::DNSKEY,
    Rtype::HTTPS,
    Rtype::SVCB,
    Rtype::CAA,
    Rtype::ANY,
    Rtype::AXFR,
    Rtype::IXFR,
];

/// Slots of the by-type count: [`QTYPES`], then `other`.
pub const QTYPE_SLOTS: usize = QTYPES.len() + 1;

/// Size buckets: answers of at most 32, 64, … 65536 bytes (powers of two).
pub const SIZE_BUCKETS: usize = 12;

/// The upper bound in bytes of size bucket `index`.
pub fn size_bound(index: usize) -> u64 {
    32 << index
}

/// Types up to this value find their slot in [`QTYPE_TABLE`]; every higher one is
/// `other`.
const QTYPE_TABLE_LEN: usize = 259;

/// The slot of each type below [`QTYPE_TABLE_LEN`], made at compile time from
/// [`QTYPES`]: one load per query instead of a chain of comparisons. (Indexing here is
/// evaluated by the compiler: out of bounds would fail the build.)
#[allow(clippy::indexing_slicing)]
static QTYPE_TABLE: [u8; QTYPE_TABLE_LEN] = {
    let mut table = [QTYPES.len() as u8; QTYPE_TABLE_LEN];
    let mut i = 0;
    while i < QTYPES.len() {
        let code = QTYPES[i].0 as usize;
        if code < QTYPE_TABLE_LEN {
            table[code] = i as u8;
        }
        i += 1;
    }
    table
};

/// The slot of `qtype` in the by-type count (the last entry of the table, 258, is not
/// a listed type: higher types share it).
#[inline]
pub fn qtype_index(qtype: Rtype) -> usize {
    let code = usize::from(qtype.0).min(QTYPE_TABLE_LEN - 1);
    QTYPE_TABLE.get(code).map_or(QTYPES.len(), |&slot| usize::from(slot))
}

/// The size bucket of an answer of `len` bytes, 1 to 65536 (a DNS message is at most
/// 65535): the smallest power of two from 32 up that holds it, found from the bit count
/// of `len - 1` (at least 5 bits) without a loop or a branch. Other lengths give an
/// index past the buckets, which [`WorkerCounters::answer`] masks into unused slots.
#[inline]
pub fn size_index(len: usize) -> usize {
    let bits = usize::BITS - (len.wrapping_sub(1) | 31).leading_zeros();
    bits as usize - 5
}

/// The slot of `transport` in a worker's by-transport counts (below [`WORKER_TRANSPORTS`]).
#[inline]
fn transport_index(transport: Transport) -> usize {
    match transport {
        Transport::Udp => 0,
        Transport::Tcp => 1,
        Transport::Tls => 2,
        Transport::Quic => 3,
    }
}

/// Transports a worker's slot counts apart: UDP, TCP, TLS, QUIC (a power of two).
const WORKER_TRANSPORTS: usize = 4;
/// Slots of a worker's size buckets of one transport (a power of two).
const SIZE_SLOTS: usize = 16;

/// Slots of each array of a worker's counters: a power of two at least as large as
/// every count it holds, so that an index masked with `SLOTS - 1` is in bounds without
/// a check the compiler has to keep.
const SLOTS: usize = 32;
const _: () = assert!(RCODE_SLOTS <= SLOTS && QTYPE_SLOTS <= SLOTS);
const _: () = assert!(SIZE_BUCKETS <= 16);

/// What is counted of one answer sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The transport it leaves on.
    pub transport: Transport,
    /// Its response code.
    pub rcode: Rcode,
    /// Its length in bytes.
    pub len: usize,
    /// Whether TC is set.
    pub truncated: bool,
}

/// One worker's counters (see the module comment). Written by its worker alone.
///
/// A query is counted once: by the size bucket of its answer, or, without one, as
/// unanswered; the queries received are the two added up when scraped.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct WorkerCounters {
    /// By transport (UDP, TCP, TLS, QUIC), by size bucket.
    sizes: [[AtomicU64; SIZE_SLOTS]; WORKER_TRANSPORTS],
    rcodes: [AtomicU64; SLOTS],
    qtypes: [AtomicU64; SLOTS],
    size_sums: [AtomicU64; WORKER_TRANSPORTS],
    truncated: [AtomicU64; WORKER_TRANSPORTS],
    unanswered: [AtomicU64; WORKER_TRANSPORTS],
    dnssec_ok: AtomicU64,
    /// An AF_XDP worker's: its UDP counts are XDP's.
    xdp: bool,
    /// The per-zone counts, one row per zone counted.
    zones: Box<[ZoneRow]>,
}

/// One worker's counts of one zone (see the module comment).
#[derive(Debug, Default)]
pub struct ZoneRow {
    /// The [`StatsTicket`] counted for (packed; 0, never a ticket's, when none).
    ticket: AtomicU64,
    /// Answers sent, by rcode.
    rcodes: [AtomicU64; RCODE_SLOTS],
    /// Questions answered, by type.
    qtypes: [AtomicU64; QTYPE_SLOTS],
}

impl ZoneRow {
    /// Whether this row counts for `ticket` now: true when it did already, or when it
    /// counted for an older ticket (its counts are wiped first, then the ticket is
    /// stored: a scrape that reads the new ticket reads the wiped counts); false for a
    /// ticket older than the row's.
    #[cold]
    #[inline(never)]
    fn claim(&self, ticket: StatsTicket) -> bool {
        let held = StatsTicket::from_raw(self.ticket.load(Relaxed));
        if held == ticket {
            return true;
        }
        if held.to_raw() != 0 && !ticket.is_newer_than(held) {
            return false;
        }
        for counter in self.rcodes.iter().chain(&self.qtypes) {
            counter.store(0, Relaxed);
        }
        self.ticket.store(ticket.to_raw(), Release);
        true
    }

    /// Adds this row's counts to `totals` if it counts for `ticket`.
    fn add_to(&self, ticket: StatsTicket, totals: &mut ZoneTotals) {
        if self.ticket.load(Acquire) != ticket.to_raw() {
            return;
        }
        for (total, counter) in totals.rcodes.iter_mut().zip(&self.rcodes) {
            *total += counter.load(Relaxed);
        }
        for (total, counter) in totals.qtypes.iter_mut().zip(&self.qtypes) {
            *total += counter.load(Relaxed);
        }
    }
}

/// One zone's counts, all workers' added up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneTotals {
    /// Answers sent, by rcode (see [`super::RCODE_LABELS`]).
    pub rcodes: [u64; RCODE_SLOTS],
    /// Questions answered, by type ([`QTYPES`], then other).
    pub qtypes: [u64; QTYPE_SLOTS],
}

/// `rows` zeroed rows. A zeroed [`ZoneRow`] is a valid one (atomics of 0), and zeroed
/// memory is taken from the kernel as it is (`calloc`), mapped only once written: the
/// rows of zones never counted cost address space, not memory.
fn zone_rows(rows: usize) -> Box<[ZoneRow]> {
    let layout = match std::alloc::Layout::array::<ZoneRow>(rows) {
        Ok(layout) if layout.size() > 0 => layout,
        _ => return Box::default(),
    };
    // SAFETY: the layout's size is not 0; the memory is zeroed, and all-zero bytes are
    // valid `ZoneRow`s (every field is an `AtomicU64`: 0); it comes from the global
    // allocator with the layout of `rows` rows, which is how the box frees it.
    unsafe {
        let rows_at = std::alloc::alloc_zeroed(layout).cast::<ZoneRow>();
        if rows_at.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(rows_at, rows))
    }
}

impl WorkerCounters {
    /// Counts a query received on `transport` that no answer counted by
    /// [`answer`](Self::answer) follows (dropped, a transfer, an update).
    #[inline]
    pub fn unanswered(&self, transport: Transport) {
        let t = transport_index(transport) & (WORKER_TRANSPORTS - 1);
        if let Some(counter) = self.unanswered.get(t) {
            bump(counter, 1);
        }
    }

    /// Counts the question of a query answered: its type, and whether it set DO.
    #[inline]
    pub fn question(&self, qtype: Rtype, dnssec_ok: bool) {
        if let Some(counter) = self.qtypes.get(qtype_index(qtype) & (SLOTS - 1)) {
            bump(counter, 1);
        }
        if dnssec_ok {
            bump(&self.dnssec_ok, 1);
        }
    }

    /// Counts in the row of the zone with `ticket` a question of type `qtype` answered
    /// (`None`: no question counted) and an answer with `rcode` sent (`None`: none
    /// sent). Nothing for a ticket of no row, or older than its row's.
    #[inline]
    pub fn zone(&self, ticket: StatsTicket, qtype: Option<Rtype>, rcode: Option<Rcode>) {
        if !ticket.is_some() {
            return;
        }
        let Some(row) = self.zones.get(ticket.row()) else { return };
        if row.ticket.load(Relaxed) != ticket.to_raw() && !row.claim(ticket) {
            return;
        }
        if let Some(counter) = qtype.and_then(|q| row.qtypes.get(qtype_index(q))) {
            bump(counter, 1);
        }
        if let Some(counter) = rcode.and_then(|r| row.rcodes.get(rcode_index(r))) {
            bump(counter, 1);
        }
    }

    /// Counts an answer sent (and so its query): its rcode, its size, and TC.
    #[inline]
    pub fn answer(&self, answer: Answer) {
        let t = transport_index(answer.transport) & (WORKER_TRANSPORTS - 1);
        if let Some(counter) = self.rcodes.get(rcode_index(answer.rcode) & (SLOTS - 1)) {
            bump(counter, 1);
        }
        let size = size_index(answer.len) & (SIZE_SLOTS - 1);
        if let Some(counter) = self.sizes.get(t).and_then(|sizes| sizes.get(size)) {
            bump(counter, 1);
        }
        if let Some(sum) = self.size_sums.get(t) {
            bump(sum, answer.len as u64);
        }
        if answer.truncated {
            if let Some(counter) = self.truncated.get(t) {
                bump(counter, 1);
            }
        }
    }
}

/// Every worker's counters (see the module comment).
#[derive(Debug, Default)]
pub struct QueryCounters {
    slots: Mutex<Vec<Arc<WorkerCounters>>>,
    /// Rows of per-zone counts in each slot.
    zone_rows: usize,
}

impl QueryCounters {
    /// Counters whose slots hold `zone_rows` rows of per-zone counts.
    pub fn new(zone_rows: usize) -> QueryCounters {
        QueryCounters { slots: Mutex::default(), zone_rows }
    }

    /// A new slot for a worker (an AF_XDP one when `xdp`), counted from now on.
    pub fn register(&self, xdp: bool) -> Arc<WorkerCounters> {
        let zones = zone_rows(self.zone_rows);
        let slot = Arc::new(WorkerCounters { xdp, zones, ..WorkerCounters::default() });
        self.slots.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&slot));
        slot
    }

    /// The counts of the zone with `ticket`, every slot's added up (`None` for a
    /// ticket of no row).
    pub fn zone_sum(&self, ticket: StatsTicket) -> Option<ZoneTotals> {
        if !ticket.is_some() || ticket.row() >= self.zone_rows {
            return None;
        }
        let mut totals = ZoneTotals::default();
        for slot in self.slots.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            if let Some(row) = slot.zones.get(ticket.row()) {
                row.add_to(ticket, &mut totals);
            }
        }
        Some(totals)
    }

    /// The slots added up.
    pub fn sum(&self) -> QueryTotals {
        let mut totals = QueryTotals::default();
        for slot in self.slots.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            totals.add(slot);
        }
        totals
    }
}

/// Transports the totals count apart: UDP (the sockets), TCP, UDP through AF_XDP, DNS
/// over TLS and DNS over QUIC.
pub const TRANSPORTS: [&str; 5] = ["udp", "tcp", "xdp", "tls", "quic"];

/// The counters of all workers, added up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryTotals {
    /// Queries received, by transport ([`TRANSPORTS`]).
    pub queries: [u64; 5],
    /// Questions answered, by type ([`QTYPES`], then other).
    pub qtypes: [u64; QTYPE_SLOTS],
    /// Questions answered that set DO.
    pub dnssec_ok: u64,
    /// Answers sent, by rcode (see [`super::RCODE_LABELS`]).
    pub rcodes: [u64; RCODE_SLOTS],
    /// Answers sent with TC set, by transport.
    pub truncated: [u64; 5],
    /// Answers sent, by transport and size bucket (not cumulative).
    pub sizes: [[u64; SIZE_BUCKETS]; 5],
    /// Bytes of answers sent, by transport.
    pub size_sums: [u64; 5],
}

impl QueryTotals {
    fn add(&mut self, slot: &WorkerCounters) {
        let add = |total: &mut [u64], counters: &[AtomicU64]| {
            for (t, c) in total.iter_mut().zip(counters) {
                *t += c.load(Relaxed);
            }
        };
        // `add` stops at the shorter of the two: the slots past a count's end are unused.
        add(&mut self.qtypes, &slot.qtypes);
        self.dnssec_ok += slot.dnssec_ok.load(Relaxed);
        add(&mut self.rcodes, &slot.rcodes);
        // The slot's transports (UDP, TCP, TLS, QUIC) and where they are totalled.
        let udp = if slot.xdp { 2 } else { 0 };
        for (t, total) in [(0, udp), (1, 1), (2, 3), (3, 4)] {
            let load = |counters: &[AtomicU64]| counters.get(t).map_or(0, |c| c.load(Relaxed));
            let buckets = slot.sizes.get(t).and_then(|b| b.get(..SIZE_BUCKETS)).unwrap_or(&[]);
            if let Some(sizes) = self.sizes.get_mut(total) {
                add(sizes, buckets);
            }
            let answered: u64 = buckets.iter().map(|c| c.load(Relaxed)).sum();
            for (array, value) in [
                (&mut self.queries, load(&slot.unanswered) + answered),
                (&mut self.truncated, load(&slot.truncated)),
                (&mut self.size_sums, load(&slot.size_sums)),
            ] {
                if let Some(v) = array.get_mut(total) {
                    *v += value;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_power_of_two_buckets() {
        for (len, bucket) in [(1, 0), (32, 0), (33, 1), (64, 1), (65, 2), (512, 4)] {
            assert_eq!(size_index(len), bucket, "{len}");
        }
        assert_eq!(size_index(1232), 6);
        assert_eq!(size_bound(6), 2048);
        assert_eq!(size_index(65535), SIZE_BUCKETS - 1);
        assert_eq!(size_index(65536), SIZE_BUCKETS - 1);
        for len in 1..=65536usize {
            let i = size_index(len);
            assert!(len as u64 <= size_bound(i), "{len}");
            assert!(i == 0 || len as u64 > size_bound(i - 1), "{len}");
        }
        // Past DNS's lengths: counted in no bucket, but in bounds.
        let counters = WorkerCounters::default();
        for len in [0, 65537, usize::MAX] {
            let answer =
                Answer { transport: Transport::Tcp, rcode: Rcode::NOERROR, len, truncated: false };
            counters.answer(answer);
        }
    }

    #[test]
    fn zones_count_in_their_rows_and_a_new_ticket_starts_from_zero() {
        let counters = QueryCounters::new(2);
        let (a, b) = (counters.register(false), counters.register(true));
        let (first, second) = (StatsTicket::new(0, 1), StatsTicket::new(1, 2));
        a.zone(first, Some(Rtype::A), Some(Rcode::NOERROR));
        b.zone(first, Some(Rtype(999)), Some(Rcode::NXDOMAIN));
        a.zone(second, Some(Rtype::MX), None);
        a.zone(StatsTicket::NONE, Some(Rtype::A), Some(Rcode::NOERROR));
        a.zone(StatsTicket::new(2, 3), Some(Rtype::A), Some(Rcode::NOERROR)); // no row
        let sum = counters.zone_sum(first).unwrap();
        assert_eq!((sum.rcodes[0], sum.rcodes[3], sum.rcodes.iter().sum::<u64>()), (1, 1, 2));
        assert_eq!((sum.qtypes[0], sum.qtypes[QTYPES.len()], sum.qtypes.iter().sum()), (1, 1, 2));
        let sum = counters.zone_sum(second).unwrap();
        assert_eq!((sum.qtypes[4], sum.rcodes.iter().sum::<u64>()), (1, 0));
        assert_eq!(counters.zone_sum(StatsTicket::NONE), None);
        assert_eq!(counters.zone_sum(StatsTicket::new(2, 3)), None);
        // Row 0 handed to another zone: nothing of the first zone's counts passes to it,
        // and a late query under the old ticket is not counted.
        let third = StatsTicket::new(0, 4);
        assert_eq!(counters.zone_sum(third).unwrap(), ZoneTotals::default());
        a.zone(third, Some(Rtype::AAAA), Some(Rcode::REFUSED));
        a.zone(first, Some(Rtype::A), Some(Rcode::NOERROR));
        let sum = counters.zone_sum(third).unwrap();
        assert_eq!((sum.qtypes.iter().sum::<u64>(), sum.qtypes[1], sum.rcodes[5]), (1, 1, 1));
        assert_eq!(sum.rcodes.iter().sum::<u64>(), 1);
        // Worker b still holds the first zone's counts in row 0: not the third's.
        b.zone(third, Some(Rtype::A), None);
        assert_eq!(counters.zone_sum(third).unwrap().qtypes.iter().sum::<u64>(), 2);
        assert_eq!(counters.zone_sum(third).unwrap().rcodes.iter().sum::<u64>(), 1);
    }

    #[test]
    fn without_rows_zones_count_nothing() {
        let counters = QueryCounters::new(0);
        let a = counters.register(false);
        a.zone(StatsTicket::new(0, 1), Some(Rtype::A), Some(Rcode::NOERROR));
        assert_eq!(counters.zone_sum(StatsTicket::new(0, 1)), None);
        assert_eq!(std::mem::size_of::<ZoneRow>(), 296);
    }

    #[test]
    fn every_listed_type_has_its_slot() {
        for (i, qtype) in QTYPES.iter().enumerate() {
            assert_eq!(qtype_index(*qtype), i);
        }
        assert_eq!(qtype_index(Rtype(65280)), QTYPES.len());
        assert_eq!(qtype_index(Rtype(0)), QTYPES.len());
        assert_eq!(qtype_index(Rtype(258)), QTYPES.len());
        assert_eq!(qtype_index(Rtype(259)), QTYPES.len());
    }

    #[test]
    fn slots_are_added_up() {
        let counters = QueryCounters::default();
        let (a, b, x) =
            (counters.register(false), counters.register(false), counters.register(true));
        assert_eq!(std::mem::align_of::<WorkerCounters>(), 64);
        a.question(Rtype::AAAA, true);
        a.answer(Answer {
            transport: Transport::Udp,
            rcode: Rcode::NOERROR,
            len: 100,
            truncated: false,
        });
        b.unanswered(Transport::Tcp);
        b.question(Rtype(999), false);
        b.answer(Answer {
            transport: Transport::Udp,
            rcode: Rcode::NXDOMAIN,
            len: 600,
            truncated: true,
        });
        // An AF_XDP worker's UDP answers and unanswered queries are XDP's.
        x.answer(Answer {
            transport: Transport::Udp,
            rcode: Rcode::NOERROR,
            len: 40,
            truncated: true,
        });
        x.unanswered(Transport::Udp);
        // TLS and QUIC are counted apart from TCP, on a TCP thread's slot.
        a.answer(Answer {
            transport: Transport::Tls,
            rcode: Rcode::NOERROR,
            len: 468,
            truncated: false,
        });
        b.unanswered(Transport::Quic);
        let sum = counters.sum();
        assert_eq!(sum.queries, [2, 1, 2, 1, 1]);
        assert_eq!((sum.qtypes[1], sum.qtypes[QTYPES.len()], sum.dnssec_ok), (1, 1, 1));
        assert_eq!((sum.rcodes[0], sum.rcodes[3], sum.truncated), (3, 1, [1, 0, 1, 0, 0]));
        let sums = [700, 0, 40, 468, 0];
        assert_eq!((sum.sizes[0][2], sum.sizes[0][5], sum.size_sums), (1, 1, sums));
        assert_eq!((sum.sizes[2][1], sum.sizes[3][4]), (1, 1));
    }
}
