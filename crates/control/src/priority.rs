//! The control plane's threads yield the CPU to the data plane's.
//!
//! Answering comes first: when queries keep every CPU busy, the zones' writers (updates,
//! transfers, reloads) should take what is left, not half of a CPU each. The control
//! plane's threads therefore run at a higher nice value (`[server] control-nice`, 10 by
//! default: about a tenth of a CPU beside a busy worker at nice 0, under Linux's fair
//! scheduler), and take every idle cycle as before. The data plane's threads keep the
//! nice value the server was started with.

/// The lowest priority a thread can have: for housekeeping that nobody waits for.
pub const LOWEST_NICE: i32 = 19;

/// Sets the calling thread's nice value. On Linux the nice value belongs to the thread
/// (`setpriority(2)`, NOTES), so the rest of the process keeps its own.
pub fn set_thread_nice(nice: i32) -> std::io::Result<()> {
    // SAFETY: plain system calls; `gettid` cannot fail, and `setpriority` reads no memory.
    let rc = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread's nice value.
pub fn thread_nice() -> std::io::Result<i32> {
    // SAFETY: as above. `getpriority` may return -1 as a value: errno tells.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t);
        match std::io::Error::last_os_error().raw_os_error() {
            Some(0) | None => Ok(nice),
            Some(_) => Err(std::io::Error::last_os_error()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_lowers_its_own_priority_only() {
        let before = thread_nice().unwrap();
        let inside = std::thread::spawn(move || {
            set_thread_nice(before + 3).unwrap();
            thread_nice().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(inside, (before + 3).min(19));
        assert_eq!(thread_nice().unwrap(), before, "the other threads keep theirs");
    }
}
