//! A zone writer's inbox: its events and the dynamic updates waiting for it.
//!
//! One per zone, so it is kept small: two queues under one lock and a [`Notify`], about
//! 150 bytes while empty (a pair of tokio channels took about 2 KiB a zone before the
//! first message: 100,000 zones are 200 MB). Events come first, as the writer always
//! took them; updates are taken in batches, and their queue is bounded (the data plane
//! answers SERVFAIL at once when it is full). One event may wait merged
//! ([`Inbox::send_merged`]): NOTIFYs, of which a flood must not queue thousands.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// What the writer takes next.
#[derive(Debug)]
pub enum Next<E, U> {
    /// One event.
    Event(E),
    /// Updates waiting together, oldest first (at most the batch size asked).
    Updates(Vec<U>),
}

/// An inbox for senders, and the writer's end, which closes it when dropped (the
/// writer stopped, panicked or its runtime shut down): what was still queued is dropped,
/// so whoever waits on it hears that it will not be done.
pub fn inbox<E, U>(max_updates: usize) -> (Arc<Inbox<E, U>>, Receiver<E, U>) {
    let inbox = Arc::new(Inbox::new(max_updates));
    (Arc::clone(&inbox), Receiver(inbox))
}

/// The writer's end of an [`Inbox`].
#[derive(Debug)]
pub struct Receiver<E, U>(Arc<Inbox<E, U>>);

impl<E, U> Receiver<E, U> {
    /// See [`Inbox::next`].
    pub async fn next(&self, batch: usize) -> Next<E, U> {
        self.0.next(batch).await
    }

    /// See [`Inbox::take_updates`].
    pub fn take_updates(&self, max: usize) -> Vec<U> {
        self.0.take_updates(max)
    }

    /// See [`Inbox::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// See [`Inbox::close`].
    pub fn close(&self) -> (Vec<E>, Vec<U>) {
        self.0.close()
    }

    /// The inbox itself, for what the writer hands back to itself (a refresh's outcome).
    pub fn inbox(&self) -> Arc<Inbox<E, U>> {
        Arc::clone(&self.0)
    }
}

impl<E, U> Drop for Receiver<E, U> {
    fn drop(&mut self) {
        drop(self.0.close());
    }
}

/// The queues of one writer.
#[derive(Debug)]
pub struct Inbox<E, U> {
    queues: Mutex<Queues<E, U>>,
    ready: Notify,
    max_updates: usize,
}

#[derive(Debug)]
struct Queues<E, U> {
    events: VecDeque<E>,
    /// The one event that others sent meanwhile are merged into.
    merged: Option<E>,
    updates: VecDeque<U>,
    closed: bool,
}

impl<E, U> Inbox<E, U> {
    /// An empty inbox holding at most `max_updates` updates.
    pub fn new(max_updates: usize) -> Inbox<E, U> {
        let queues = Queues {
            events: VecDeque::new(),
            merged: None,
            updates: VecDeque::new(),
            closed: false,
        };
        Inbox { queues: Mutex::new(queues), ready: Notify::new(), max_updates }
    }

    /// Queues `event`; gives it back when the writer has stopped.
    pub fn send(&self, event: E) -> Result<(), E> {
        let Ok(mut queues) = self.queues.lock() else { return Err(event) };
        if queues.closed {
            return Err(event);
        }
        queues.events.push_back(event);
        drop(queues);
        self.ready.notify_one();
        Ok(())
    }

    /// Queues `event` unless one sent this way still waits: then `merge` folds it into
    /// that one, so that at most one such event waits whatever the rate they come at.
    /// Gives `event` back when the writer has stopped.
    pub fn send_merged(&self, event: E, merge: impl FnOnce(&mut E, E)) -> Result<(), E> {
        let Ok(mut queues) = self.queues.lock() else { return Err(event) };
        if queues.closed {
            return Err(event);
        }
        match &mut queues.merged {
            Some(waiting) => merge(waiting, event),
            None => {
                queues.merged = Some(event);
                drop(queues);
                self.ready.notify_one();
            }
        }
        Ok(())
    }

    /// Queues `update`; gives it back when the queue is full or the writer has stopped.
    pub fn try_send_update(&self, update: U) -> Result<(), U> {
        let Ok(mut queues) = self.queues.lock() else { return Err(update) };
        if queues.closed || queues.updates.len() >= self.max_updates {
            return Err(update);
        }
        queues.updates.push_back(update);
        drop(queues);
        self.ready.notify_one();
        Ok(())
    }

    /// Waits for the next event, or else for up to `batch` updates. Cancel-safe: what
    /// is taken is taken only when this returns.
    pub async fn next(&self, batch: usize) -> Next<E, U> {
        loop {
            if let Some(next) = self.take(batch) {
                return next;
            }
            // `notify_one` keeps a permit when nobody waits: a send between `take` and
            // here is not missed.
            self.ready.notified().await;
        }
    }

    fn take(&self, batch: usize) -> Option<Next<E, U>> {
        let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(event) = queues.events.pop_front() {
            if queues.events.is_empty() {
                // Events are rare (loads, NOTIFYs, commands): an idle zone's inbox holds
                // no buffer between them.
                queues.events = VecDeque::new();
            }
            return Some(Next::Event(event));
        }
        if let Some(event) = queues.merged.take() {
            return Some(Next::Event(event));
        }
        if queues.updates.is_empty() {
            return None;
        }
        let n = queues.updates.len().min(batch.max(1));
        Some(Next::Updates(queues.updates.drain(..n).collect()))
    }

    /// Up to `max` updates waiting now, oldest first (none when an event waits: it
    /// goes first).
    pub fn take_updates(&self, max: usize) -> Vec<U> {
        let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !queues.events.is_empty() || queues.merged.is_some() {
            return Vec::new();
        }
        let n = queues.updates.len().min(max);
        queues.updates.drain(..n).collect()
    }

    /// True when neither an event nor an update waits.
    pub fn is_empty(&self) -> bool {
        let queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        queues.events.is_empty() && queues.merged.is_none() && queues.updates.is_empty()
    }

    /// Refuses what is sent from now on and gives back what is still queued (dropped by
    /// the caller: an update's drop answers its client).
    pub fn close(&self) -> (Vec<E>, Vec<U>) {
        let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        queues.closed = true;
        let mut events: Vec<E> = queues.events.drain(..).collect();
        events.extend(queues.merged.take());
        (events, queues.updates.drain(..).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn events_come_first_and_updates_in_batches() {
        let inbox: Inbox<&str, u32> = Inbox::new(10);
        for n in 0..5 {
            inbox.try_send_update(n).unwrap();
        }
        inbox.send("load").unwrap();
        assert!(matches!(inbox.next(3).await, Next::Event("load")));
        assert!(matches!(inbox.next(3).await, Next::Updates(u) if u == [0, 1, 2]));
        assert!(matches!(inbox.next(3).await, Next::Updates(u) if u == [3, 4]));
    }

    #[test]
    fn updates_are_taken_up_to_a_count_unless_an_event_waits() {
        let inbox: Inbox<&str, u32> = Inbox::new(10);
        for n in 0..5 {
            inbox.try_send_update(n).unwrap();
        }
        assert_eq!(inbox.take_updates(2), [0, 1]);
        assert!(!inbox.is_empty());
        inbox.send("reload").unwrap();
        assert!(inbox.take_updates(2).is_empty(), "the event goes first");
        assert!(matches!(inbox.take(8), Some(Next::Event("reload"))));
        assert!(matches!(inbox.take(8), Some(Next::Updates(u)) if u == [2, 3, 4]));
        assert!(inbox.is_empty());
    }

    #[tokio::test]
    async fn updates_are_bounded_and_a_closed_inbox_refuses() {
        let inbox: Inbox<&str, u32> = Inbox::new(2);
        inbox.try_send_update(1).unwrap();
        inbox.try_send_update(2).unwrap();
        assert_eq!(inbox.try_send_update(3), Err(3));
        inbox.send("stop").unwrap();
        assert_eq!(inbox.close(), (vec!["stop"], vec![1, 2]));
        assert_eq!(inbox.send("late"), Err("late"));
        assert_eq!(inbox.try_send_update(4), Err(4));
    }

    /// Issue 49: 5,000 NOTIFYs sent while the writer was busy were all queued, and all
    /// replayed; merged, one waits, counting the others.
    #[test]
    fn events_sent_merged_wait_as_one() {
        let inbox: Inbox<(&str, u32), u32> = Inbox::new(4);
        for _ in 0..5000 {
            inbox.send_merged(("notify", 0), |waiting, _| waiting.1 += 1).unwrap();
        }
        inbox.send(("load", 0)).unwrap();
        assert!(inbox.take_updates(1).is_empty(), "the merged event goes before updates");
        assert!(matches!(inbox.take(8), Some(Next::Event(("load", 0)))));
        assert!(matches!(inbox.take(8), Some(Next::Event(("notify", 4999)))));
        assert!(inbox.is_empty());
        inbox.send_merged(("notify", 0), |waiting, _| waiting.1 += 1).unwrap();
        assert_eq!(inbox.close().0, [("notify", 0)]);
        assert!(inbox.send_merged(("late", 0), |_, _| {}).is_err());
    }

    #[test]
    fn dropping_the_writers_end_closes_and_drops_what_waits() {
        let (inbox, receiver) = inbox::<tokio::sync::oneshot::Sender<()>, u32>(4);
        let (done, outcome) = tokio::sync::oneshot::channel();
        inbox.send(done).unwrap();
        drop(receiver);
        assert!(outcome.blocking_recv().is_err(), "the waiter hears it will not be done");
        assert_eq!(inbox.try_send_update(1), Err(1));
    }

    #[tokio::test]
    async fn a_waiting_writer_wakes_for_what_is_sent() {
        let inbox: Arc<Inbox<u32, u32>> = Arc::new(Inbox::new(8));
        let waiting = tokio::spawn({
            let inbox = Arc::clone(&inbox);
            async move {
                let mut got = Vec::new();
                while got.len() < 100 {
                    if let Next::Event(e) = inbox.next(8).await {
                        got.push(e);
                    }
                }
                got
            }
        });
        for n in 0..100 {
            inbox.send(n).unwrap();
            if n % 7 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }
}
