//! Memory placement for the data plane.
//!
//! Lookups touch zone data at random, so on large zones a good share of a query's user
//! time is TLB and cache misses. Backing the heap with transparent huge pages removes most
//! TLB misses (see below for what it gains and costs).
//! Where the kernel grants huge pages only on request (`madvise` mode, the common
//! default), glibc asks for them when started with the tunable `glibc.malloc.hugetlb=1`;
//! glibc reads tunables only at start, so `ternd` re-executes itself once with it set.
//! `TERND_HUGE_PAGES=0` in the environment turns this off.
//!
//! The price is paid at load: every fresh 2 MiB page is zeroed whole at its first touch,
//! transient load buffers included — on the benchmark VM a 1M-delegation zone loads in
//! 2.8 s instead of 2.05 s. Measured against that (4 interleaved pairs, 100k zone):
//! 0.17 µs less CPU per UDP query with DO=0 and 0.37 µs with DO=1. Collapsing the heap
//! after the load instead (`MADV_COLLAPSE`) was refused by this kernel (EINVAL), and
//! leaving it to khugepaged takes minutes (about 16 MiB per 10 s by default).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

const TUNABLE: &str = "glibc.malloc.hugetlb=1";

/// Re-executes the current program with huge-page malloc, unless it already runs that
/// way, is told not to, or cannot (then it simply goes on).
pub fn reexec_with_huge_pages() {
    if std::env::var_os("TERND_HUGE_PAGES").is_some_and(|v| v == "0") {
        return;
    }
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if tunables.contains("glibc.malloc.hugetlb") {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("ternd"));
    let value =
        if tunables.is_empty() { TUNABLE.to_owned() } else { format!("{tunables}:{TUNABLE}") };
    // `exec` only returns on failure; then run as we are.
    let _ = Command::new(exe).arg0(arg0).args(args).env("GLIBC_TUNABLES", value).exec();
}

/// Returns free heap pages to the system after a zone (re)load (glibc `malloc_trim`;
/// nothing elsewhere). A load allocates far more for a while — the file's buffer, parser
/// scratch, the builder's tables — than the published snapshot keeps, and glibc keeps
/// such freed pages mapped for reuse, in the resident set, for as long as `ternd` runs.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
