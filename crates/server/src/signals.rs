//! Signals for the control thread: SIGHUP (reload), SIGUSR1 (reopen the log file),
//! SIGTERM and SIGINT (stop).
//!
//! They are blocked in every thread (the mask is set before any thread starts and is
//! inherited) and taken synchronously with `sigwait` by the main thread, so no handler
//! runs in signal context. SIGWINCH, blocked too, means nothing but "a request waits":
//! [`wake`] sends it after a request is queued for the main thread, so that the request
//! is taken at once rather than at the end of the main thread's wait (its default action
//! is to be ignored, so a stray one does no harm).

use crate::error::{Error, Result};

/// A signal the daemon acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Reload configuration and zones.
    Reload,
    /// Reopen the log file (SIGUSR1), as after logrotate has moved it.
    ReopenLog,
    /// Stop (SIGTERM or SIGINT).
    Stop,
}

/// The blocked set; [`SignalSet::wait`] takes the next one.
#[derive(Debug)]
pub struct SignalSet(libc::sigset_t);

impl SignalSet {
    /// Blocks SIGHUP, SIGUSR1, SIGTERM, SIGINT and SIGWINCH in this thread (and in
    /// threads it starts later).
    pub fn block() -> Result<SignalSet> {
        // SAFETY: sigemptyset/sigaddset initialise the set; pthread_sigmask reads it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in [libc::SIGHUP, libc::SIGUSR1, libc::SIGTERM, libc::SIGINT, libc::SIGWINCH]
            {
                libc::sigaddset(&mut set, signal);
            }
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(Error::Os {
                    doing: "blocking signals",
                    source: std::io::Error::from_raw_os_error(rc),
                });
            }
            Ok(SignalSet(set))
        }
    }

    /// Waits up to `timeout` for a signal of the set; `None` when none came.
    pub fn wait_for(&self, timeout: std::time::Duration) -> Option<Signal> {
        let spec = libc::timespec {
            tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: libc::c_long::from(timeout.subsec_nanos()),
        };
        // SAFETY: `self.0` is an initialised set; a null info pointer is allowed; `spec`
        // is a valid timespec on the stack.
        let signal = unsafe { libc::sigtimedwait(&self.0, std::ptr::null_mut(), &spec) };
        meaning(signal)
    }

    /// Waits for the next signal of the set.
    pub fn wait(&self) -> Signal {
        loop {
            let mut signal = 0;
            // SAFETY: `self.0` is an initialised set; `signal` is a valid out pointer.
            let rc = unsafe { libc::sigwait(&self.0, &mut signal) };
            if let Some(signal) = meaning(signal).filter(|_| rc == 0) {
                return signal;
            }
        }
    }
}

/// Ends the main thread's wait for signals ([`SignalSet::wait_for`] returns `None`), to
/// take a request just queued for it.
pub fn wake() {
    // SAFETY: kill with this process's id and a signal number has no memory effects.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGWINCH);
    }
}

/// What a signal number of the set asks for.
fn meaning(signal: libc::c_int) -> Option<Signal> {
    match signal {
        libc::SIGHUP => Some(Signal::Reload),
        libc::SIGUSR1 => Some(Signal::ReopenLog),
        libc::SIGTERM | libc::SIGINT => Some(Signal::Stop),
        _ => None,
    }
}
