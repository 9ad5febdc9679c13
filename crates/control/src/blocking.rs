//! Waiting on a plain thread (not a runtime's) for what the control plane sends back
//! through a `tokio` oneshot channel, with a deadline: the thread sleeps until the value
//! is sent, woken by the channel itself, so the wait ends when the value arrives rather
//! than at the next tick of a poll (a zone-add's reply waited up to 5 ms more that way).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

use tokio::sync::oneshot;

/// Unparks the waiting thread when the channel has something for it.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// What `receiver` gets, waiting until `deadline` at most: `None` when the deadline
/// passed first (the receiver can be waited on again), `Some(Err)` when the sender was
/// dropped without sending.
pub fn receive_by<T>(
    receiver: &mut oneshot::Receiver<T>,
    deadline: Instant,
) -> Option<Result<T, oneshot::error::RecvError>> {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(got) = Pin::new(&mut *receiver).poll(&mut context) {
            return Some(got);
        }
        // A wake-up may be spurious, or come from an earlier wait: the channel is polled
        // again either way.
        let left = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
        std::thread::park_timeout(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_value_sent_later_ends_the_wait_when_it_is_sent() {
        let (sender, mut receiver) = oneshot::channel();
        let sending = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            sender.send(7).unwrap();
        });
        let started = Instant::now();
        let got = receive_by(&mut receiver, started + Duration::from_secs(30));
        assert_eq!(got, Some(Ok(7)));
        assert!(started.elapsed() < Duration::from_secs(10), "woken by the send, not the deadline");
        sending.join().unwrap();
    }

    #[test]
    fn the_deadline_ends_the_wait_and_the_receiver_stays_usable() {
        let (sender, mut receiver) = oneshot::channel();
        let started = Instant::now();
        assert_eq!(receive_by(&mut receiver, started + Duration::from_millis(20)), None);
        assert!(started.elapsed() >= Duration::from_millis(20));
        sender.send("late").unwrap();
        assert_eq!(receive_by(&mut receiver, Instant::now()), Some(Ok("late")));
    }

    #[test]
    fn a_dropped_sender_is_told_at_once() {
        let (sender, mut receiver) = oneshot::channel::<u8>();
        drop(sender);
        let got = receive_by(&mut receiver, Instant::now() + Duration::from_secs(30));
        assert!(matches!(got, Some(Err(_))));
    }
}
