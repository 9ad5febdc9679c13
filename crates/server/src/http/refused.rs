//! Refusals of the HTTP server (a request without the token, a connection over a
//! limit), logged at a bounded rate: at most [`PER_SECOND`] lines a second for each
//! kind; the rest are counted, and the count is said with the first line logged in a
//! later second. A client that sends refused requests in a loop fills no disk.
//!
//! [`Budget`] is the generic part: it decides whether a line may be written now, and
//! hands over the count of lines left out before. It takes no lock (three atomics), and
//! the time is an argument, so tests need no clock. [`Refusals`] holds the HTTP
//! server's budgets and writes its lines.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tracing::warn;

/// Lines a second at most, for each kind of refusal.
pub const PER_SECOND: u64 = 10;

/// A log line budget of [`PER_SECOND`] lines a second (see the module comment).
#[derive(Debug, Default)]
pub struct Budget {
    second: AtomicU64,
    logged: AtomicU64,
    suppressed: AtomicU64,
}

/// What [`Budget::take`] allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Write the line; `left_out` lines were not written before it (say so).
    Log {
        /// Lines not written since the last one that was.
        left_out: u64,
    },
    /// Over the budget: counted, not written.
    Skip,
}

impl Budget {
    /// Takes one line of the budget of second `now` (any clock counting seconds).
    pub fn take(&self, now: u64) -> Verdict {
        if self.second.swap(now, Relaxed) != now {
            self.logged.store(0, Relaxed);
        }
        if self.logged.fetch_add(1, Relaxed) >= PER_SECOND {
            self.suppressed.fetch_add(1, Relaxed);
            return Verdict::Skip;
        }
        Verdict::Log { left_out: self.suppressed.swap(0, Relaxed) }
    }
}

/// The HTTP server's refusal logs, one budget for requests and one for connections.
#[derive(Debug, Default)]
pub struct Refusals {
    requests: Budget,
    connections: Budget,
}

impl Refusals {
    /// Logs an API request from `client` to `path` refused for `why`.
    pub fn request(&self, client: Option<SocketAddr>, path: &str, why: &str) {
        let Verdict::Log { left_out } = self.requests.take(now()) else { return };
        if left_out > 0 {
            warn!(left_out, "HTTP API: more requests refused (not logged one by one)");
        }
        let client = client.map_or_else(|| "-".to_owned(), |c| c.to_string());
        warn!(client, path, "HTTP API: request refused ({why})");
    }

    /// Logs a connection from `client` closed as soon as accepted, for `why`.
    pub fn connection(&self, client: SocketAddr, why: &str) {
        let Verdict::Log { left_out } = self.connections.take(now()) else { return };
        if left_out > 0 {
            warn!(left_out, "HTTP: more connections refused (not logged one by one)");
        }
        warn!(client = %client, "HTTP: connection refused ({why})");
    }

    /// Logs a failed `accept` (out of file descriptors, say).
    pub fn accept_failed(&self, e: &std::io::Error) {
        let Verdict::Log { left_out } = self.connections.take(now()) else { return };
        warn!(left_out, "HTTP: cannot accept a connection: {e}");
    }
}

/// The seconds since the Unix epoch (the clock of the budgets).
pub fn now() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_the_limit_a_second_and_the_rest_counted() {
        let budget = Budget::default();
        let verdicts: Vec<Verdict> = (0..25).map(|_| budget.take(100)).collect();
        let logged = verdicts.iter().filter(|v| **v != Verdict::Skip).count();
        assert_eq!(logged as u64, PER_SECOND);
        assert_eq!(verdicts[0], Verdict::Log { left_out: 0 });
        // The next second: the first line says how many were left out.
        assert_eq!(budget.take(101), Verdict::Log { left_out: 15 });
        assert_eq!(budget.take(101), Verdict::Log { left_out: 0 });
        // Many seconds later, nothing was left out in between.
        assert_eq!(budget.take(500), Verdict::Log { left_out: 0 });
    }
}
