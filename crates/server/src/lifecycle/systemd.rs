//! Telling systemd how the server is doing (`Type=notify`, `sd_notify(3)`): `READY=1`
//! once the zones are loaded, `RELOADING=1` and `READY=1` around a SIGHUP's reload,
//! `STOPPING=1` when asked to stop, and — when the unit sets `WatchdogSec=` — `WATCHDOG=1`
//! every half period while the server is healthy ([`Watchdog`]).
//!
//! The protocol is one datagram per message to the Unix socket named by `NOTIFY_SOCKET`
//! (a path, or `@name` for the abstract namespace); without it, nothing is sent. No
//! crate is needed for that, nor worth a dependency.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, warn};

use crate::stats::Stats;

/// Where systemd listens, if it does.
#[derive(Debug)]
pub struct Notifier {
    socket: UnixDatagram,
    addr: SocketAddr,
}

impl Notifier {
    /// The notifier `NOTIFY_SOCKET` names; `None` when not run by systemd with
    /// `Type=notify` (or the socket cannot be used, which is logged).
    pub fn from_env() -> Option<Notifier> {
        let path = std::env::var_os("NOTIFY_SOCKET")?;
        let bytes = path.as_encoded_bytes();
        let addr = match bytes.strip_prefix(b"@") {
            Some(name) => SocketAddr::from_abstract_name(name),
            None => SocketAddr::from_pathname(std::path::Path::new(&path)),
        };
        let notifier =
            addr.and_then(|addr| Ok(Notifier { socket: UnixDatagram::unbound()?, addr }));
        match notifier {
            Ok(notifier) => Some(notifier),
            Err(e) => {
                warn!("NOTIFY_SOCKET cannot be used, systemd is not told of readiness: {e}");
                None
            }
        }
    }

    /// Sends `state` (newline-separated `KEY=value` lines); failures are only logged at
    /// debug level: systemd going away must not stop the server.
    pub fn notify(&self, state: &str) {
        if let Err(e) = self.socket.send_to_addr(state.as_bytes(), &self.addr) {
            debug!("sd_notify {state:?} not sent: {e}");
        }
    }

    /// `RELOADING=1` with the monotonic time systemd asks for with `Type=notify-reload`.
    pub fn reloading(&self) {
        self.notify(&format!("RELOADING=1\nMONOTONIC_USEC={}", monotonic_usec()));
    }
}

/// The watchdog period systemd asks for (`WATCHDOG_USEC`, for this process when
/// `WATCHDOG_PID` is set); `None` when there is none.
pub fn watchdog_period() -> Option<Duration> {
    if let Some(pid) = std::env::var("WATCHDOG_PID").ok().and_then(|p| p.parse::<u32>().ok()) {
        if pid != std::process::id() {
            return None;
        }
    }
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec))
}

/// Pings systemd's watchdog every half period while the UDP workers are alive (their
/// heartbeat, [`Stats::heartbeat`], advanced since the last ping) and the control plane
/// answers (`control_alive`); a server that hangs is so restarted by systemd.
#[derive(Debug)]
pub struct Watchdog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Starts the pinging thread.
    pub fn start(
        notifier: Arc<Notifier>,
        period: Duration,
        stats: Arc<Stats>,
        control_alive: impl Fn(Duration) -> bool + Send + 'static,
    ) -> std::io::Result<Watchdog> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread =
            std::thread::Builder::new().name("ternd-watchdog".into()).spawn(move || {
                let half = period / 2;
                let mut last = stats.heartbeat();
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(half.min(Duration::from_millis(500)));
                    let beat = stats.heartbeat();
                    if beat != last && control_alive(half) {
                        notifier.notify("WATCHDOG=1");
                        last = beat;
                    }
                }
            })?;
        Ok(Watchdog { stop, thread: Some(thread) })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `CLOCK_MONOTONIC` in microseconds (what `MONOTONIC_USEC` means).
fn monotonic_usec() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the local we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000
        + u64::try_from(ts.tv_nsec).unwrap_or(0) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_to_a_path_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        let notifier = Notifier {
            socket: UnixDatagram::unbound().unwrap(),
            addr: SocketAddr::from_pathname(&path).unwrap(),
        };
        notifier.notify("READY=1");
        let mut buf = [0u8; 64];
        let n = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");
        notifier.reloading();
        let n = listener.recv(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"RELOADING=1\nMONOTONIC_USEC="));
    }
}
