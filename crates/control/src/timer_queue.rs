//! One timer queue for the writers of every zone at rest (issue 54): a resting writer
//! whose only work left is a deadline — a secondary's refresh or expiry, a signed
//! zone's signature refresh or key step, a zone file to write — registers it here and
//! lets go of its task ([`crate::dormant`]). One task ([`TimerQueue::run`]) sleeps until
//! the earliest deadline and hands each one due to its owner, which wakes the zone if it
//! still rests as it did when it registered ([`crate::registry::Writers::timer_due`]).
//!
//! * A deadline is registered with a generation ([`TimerQueue::generation`], never the
//!   same twice) that the resting record keeps: whatever happens to the zone before the
//!   deadline — woken by an event, removed, rested again with another deadline — leaves
//!   the deadline in the queue, found stale when it falls due (lazy deletion: waking a
//!   zone never touches the queue, so a query worker's UPDATE pays nothing for it).
//! * Stale deadlines are swept out whenever the queue doubled since the last sweep
//!   (outside the queue's lock): it holds at most about twice the deadlines that stand,
//!   at 24 bytes each.
//! * Deadlines are on tokio's clock (milliseconds from the queue's start, rounded up so
//!   that none falls due early): the writers' own sleeps use it too, and tests pause
//!   and advance it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Deadlines handed out at a time: a burst of them (a million zones woken together)
/// yields to the runtime between batches.
const BATCH: usize = 1024;
/// The queue is not swept below this many deadlines.
const LEAST_SWEEP: usize = 1024;

/// The timer queue (see the module comment), of deadlines whose owners are `K`.
#[derive(Debug)]
pub struct TimerQueue<K> {
    state: Mutex<State<K>>,
    /// Told when a deadline earlier than all others comes, or a sweep is due.
    changed: Notify,
    /// Deadlines count from here.
    origin: Instant,
    generations: AtomicU64,
}

#[derive(Debug)]
struct State<K> {
    heap: BinaryHeap<Due<K>>,
    /// Swept once it holds more than this.
    sweep_above: usize,
}

/// A deadline (milliseconds from the queue's origin) and its owner.
#[derive(Debug)]
struct Due<K> {
    at: u64,
    key: K,
}

impl<K> PartialEq for Due<K> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}

impl<K> Eq for Due<K> {}

impl<K> PartialOrd for Due<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Due<K> {
    /// The earliest is the greatest: the heap's top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at)
    }
}

impl<K> Default for TimerQueue<K> {
    fn default() -> Self {
        TimerQueue::new()
    }
}

impl<K> TimerQueue<K> {
    /// An empty queue, counting from now.
    pub fn new() -> TimerQueue<K> {
        let state = State { heap: BinaryHeap::new(), sweep_above: LEAST_SWEEP };
        TimerQueue {
            state: Mutex::new(state),
            changed: Notify::new(),
            origin: Instant::now(),
            generations: AtomicU64::new(0),
        }
    }

    fn state(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A generation never handed out before (never 0).
    pub fn generation(&self) -> u64 {
        self.generations.fetch_add(1, Relaxed) + 1
    }

    /// Registers `key`'s deadline `at` (one in the past falls due at once).
    pub fn push(&self, at: Instant, key: K) {
        let at = self.millis(at);
        let mut state = self.state();
        let earliest = state.heap.peek().is_none_or(|top| at < top.at);
        state.heap.push(Due { at, key });
        let sweep = state.heap.len() > state.sweep_above;
        drop(state);
        if earliest || sweep {
            self.changed.notify_one();
        }
    }

    /// Deadlines held, stale ones included.
    pub fn len(&self) -> usize {
        self.state().heap.len()
    }

    /// True when it holds no deadline.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `at` in milliseconds from the origin, rounded up.
    fn millis(&self, at: Instant) -> u64 {
        let since = at.saturating_duration_since(self.origin);
        let millis = since.as_nanos().div_ceil(1_000_000);
        u64::try_from(millis).unwrap_or(u64::MAX)
    }

    /// Up to `max` deadlines due at `now`, earliest first, taken out; and the next one.
    fn take_due(&self, now: Instant, max: usize) -> (Vec<K>, Option<Instant>) {
        let now = self.millis(now);
        let mut state = self.state();
        let mut due = Vec::new();
        while due.len() < max && state.heap.peek().is_some_and(|top| top.at <= now) {
            if let Some(top) = state.heap.pop() {
                due.push(top.key);
            }
        }
        let next = state.heap.peek().map(|top| self.origin + Duration::from_millis(top.at));
        (due, next)
    }

    /// Keeps only the deadlines `live` says still stand, when the queue doubled since
    /// the last sweep. The queue's lock is not held while `live` looks.
    fn sweep(&self, live: &mut impl FnMut(&K) -> bool) {
        let mut state = self.state();
        if state.heap.len() <= state.sweep_above {
            return;
        }
        let held = std::mem::take(&mut state.heap).into_vec();
        drop(state);
        let kept: Vec<Due<K>> = held.into_iter().filter(|due| live(&due.key)).collect();
        let mut state = self.state();
        state.heap.extend(kept); // with those pushed meanwhile
        state.sweep_above = (2 * state.heap.len()).max(LEAST_SWEEP);
    }

    /// Hands each deadline to `fire` once it is due, for good: `fire` decides whether
    /// it still stands (see the module comment); `live` says it of a deadline not due,
    /// for the sweeps.
    pub async fn run(&self, mut fire: impl FnMut(K), mut live: impl FnMut(&K) -> bool) {
        loop {
            let (due, next) = self.take_due(Instant::now(), BATCH);
            let more = due.len() == BATCH;
            due.into_iter().for_each(&mut fire);
            self.sweep(&mut live);
            if more {
                tokio::task::yield_now().await;
                continue;
            }
            match next {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Arc;

    /// The queue running on the (paused) test runtime, what it fired and when
    /// (milliseconds since the test's start).
    fn running(
        queue: &Arc<TimerQueue<(u32, u64)>>,
        current: Arc<Mutex<HashMap<u32, u64>>>,
    ) -> Arc<Mutex<Vec<(u32, u64)>>> {
        let fired = Arc::new(Mutex::new(Vec::new()));
        let (queue, out, start) = (Arc::clone(queue), Arc::clone(&fired), Instant::now());
        let standing = Arc::clone(&current);
        tokio::spawn(async move {
            let fire = |(zone, generation): (u32, u64)| {
                // As a zone's entry does: only the generation it rests under stands.
                if standing.lock().unwrap().get(&zone) == Some(&generation) {
                    let at = Instant::now().duration_since(start).as_millis() as u64;
                    out.lock().unwrap().push((zone, at));
                }
            };
            let live = |(zone, generation): &(u32, u64)| {
                current.lock().unwrap().get(zone) == Some(generation)
            };
            queue.run(fire, live).await;
        });
        fired
    }

    /// Lets the queue's task run.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    /// Deadlines fall due in their order, each once, not before its time; a deadline
    /// earlier than the one the queue sleeps for, and one in the past, wake it.
    #[tokio::test(start_paused = true)]
    async fn deadlines_fall_due_in_order_and_on_time() {
        let queue = Arc::new(TimerQueue::new());
        let current = Arc::new(Mutex::new(HashMap::new()));
        let fired = running(&queue, Arc::clone(&current));
        let start = Instant::now();
        for (zone, secs) in [(1, 30), (2, 10), (3, 20), (4, 10)] {
            let generation = queue.generation();
            current.lock().unwrap().insert(zone, generation);
            queue.push(start + Duration::from_secs(secs), (zone, generation));
        }
        settle().await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let generation = queue.generation();
        current.lock().unwrap().insert(5, generation);
        queue.push(start + Duration::from_secs(7), (5, generation)); // earlier than all
        let generation = queue.generation();
        current.lock().unwrap().insert(6, generation);
        queue.push(start, (6, generation)); // in the past
        settle().await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        settle().await;
        let fired = fired.lock().unwrap().clone();
        let zones: Vec<u32> = fired.iter().map(|&(zone, _)| zone).collect();
        assert_eq!(zones.len(), 6, "{fired:?}");
        assert_eq!(zones[..2], [6, 5]);
        assert!(zones[2..4] == [2, 4] || zones[2..4] == [4, 2], "{fired:?}");
        assert_eq!(zones[4..], [3, 1]);
        let want = HashMap::from([(1, 30_000), (2, 10_000), (3, 20_000), (4, 10_000), (5, 7_000)]);
        for (zone, at) in fired {
            let due = want.get(&zone).copied().unwrap_or(5_000);
            assert!(at >= due && at < due + 50, "zone {zone} at {at} ms, due {due}");
        }
        assert!(queue.is_empty());
    }

    /// A deadline whose zone took another generation meanwhile (woken, rested again,
    /// removed) does not fire; the stale ones are swept out once the queue doubled.
    #[tokio::test(start_paused = true)]
    async fn stale_deadlines_do_not_fire_and_are_swept() {
        let queue = Arc::new(TimerQueue::new());
        let current = Arc::new(Mutex::new(HashMap::new()));
        let fired = running(&queue, Arc::clone(&current));
        let start = Instant::now();
        // 3,000 zones rest; each wakes and rests again 3 times, with a later deadline.
        for round in 0..4u64 {
            for zone in 0..3_000u32 {
                let generation = queue.generation();
                current.lock().unwrap().insert(zone, generation);
                let at = start + Duration::from_secs(100 + round * 100 + u64::from(zone % 7));
                queue.push(at, (zone, generation));
            }
            settle().await;
        }
        // Zone 0 is removed.
        current.lock().unwrap().remove(&0);
        assert!(queue.len() <= 2 * 3_000 + LEAST_SWEEP, "swept: {}", queue.len());
        tokio::time::sleep(Duration::from_secs(1_000)).await;
        settle().await;
        let fired = fired.lock().unwrap();
        assert_eq!(fired.len(), 2_999, "each zone's last deadline only");
        assert!(fired.iter().all(|&(zone, at)| zone != 0 && at >= 400_000), "the last ones");
        assert!(queue.is_empty());
    }

    /// A hundred thousand zones' deadlines, many at the same moment: each fires once.
    #[tokio::test(start_paused = true)]
    async fn many_zones_each_fire_once() {
        const ZONES: u32 = 100_000;
        let queue = Arc::new(TimerQueue::new());
        let current = Arc::new(Mutex::new(HashMap::new()));
        let fired = running(&queue, Arc::clone(&current));
        let start = Instant::now();
        for zone in 0..ZONES {
            let generation = queue.generation();
            current.lock().unwrap().insert(zone, generation);
            queue.push(start + Duration::from_secs(u64::from(zone % 10)), (zone, generation));
        }
        tokio::time::sleep(Duration::from_secs(20)).await;
        for _ in 0..200 {
            tokio::task::yield_now().await;
        }
        let fired = fired.lock().unwrap();
        assert_eq!(fired.len(), ZONES as usize);
        let mut zones: Vec<u32> = fired.iter().map(|&(zone, _)| zone).collect();
        zones.sort_unstable();
        zones.dedup();
        assert_eq!(zones.len(), ZONES as usize, "none twice");
        assert!(fired.windows(2).all(|w| w[0].1 <= w[1].1), "in order of time");
    }

    /// Deadlines are kept to the millisecond, rounded up: none falls due early.
    #[test]
    fn deadlines_round_up_to_the_millisecond() {
        let queue: TimerQueue<()> = TimerQueue::new();
        let at = queue.origin + Duration::from_micros(1_500);
        assert_eq!(queue.millis(at), 2);
        assert_eq!(queue.millis(queue.origin), 0);
        assert_eq!(queue.millis(queue.origin - Duration::from_secs(1)), 0);
    }
}
