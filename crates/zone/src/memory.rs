//! Memory placement for the data plane, after each zone (re)load (the server calls
//! [`after_load`]; so do the engine's benchmarks, to measure what the server runs).
//!
//! Lookups touch zone data at random, so on large zones a good share of a query's user
//! time is TLB and cache misses. Backing the zone data with transparent huge pages removes
//! most TLB misses: 0.17 µs less CPU per UDP query with DO=0 and 0.37 µs with DO=1 on a
//! 100,000-delegation zone (4 interleaved pairs). Asking for huge pages from the start
//! (glibc's `glibc.malloc.hugetlb=1`) makes loading slower, though: every fresh 2 MiB page
//! is zeroed whole at its first touch, transient load buffers included — 2.8 s instead of
//! 2.05 s for a 1M-delegation zone on the benchmark machine.
//!
//! So the heap grows with ordinary pages during a load, and once the new snapshots are
//! published (the workers answer from them meanwhile) two things happen: the heap the
//! load freed goes back to the system (`malloc_trim`), and the anonymous regions are
//! collapsed into huge pages one 2 MiB step at a time (`MADV_COLLAPSE`, Linux 6.1; a
//! no-op elsewhere; a step the kernel refuses stays as it is). Only steps at least half
//! resident are collapsed (`mincore`), so a sparse step (a thread stack, heap the trim
//! emptied) does not become resident in full: the resident size grows by at most the
//! holes of the steps collapsed. That costs about 0.7 s of CPU after a 1M-delegation
//! load. `TERND_HUGE_PAGES=0` in the environment turns the collapse off.
//!
//! Some tables ask for huge pages from the start: a builder's name index, which is dense,
//! and probed at random while the zone is read, and the signer's large arrays, written
//! whole as soon as they are made (`advise_huge`; `TERND_HUGE_PAGES=0` turns that off
//! too).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `MADV_COLLAPSE` (Linux 6.1+; not in every `libc` release).
#[cfg(target_os = "linux")]
const MADV_COLLAPSE: libc::c_int = 25;

/// Size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE: usize = 2 << 20;

/// After a (re)load: returns freed heap to the system, then collapses the densely used
/// anonymous regions into huge pages. Then counts one more housekeeping done
/// ([`housekeeping_done`]), so that a thread can sort what it freed ([`sort_freed`]).
pub fn after_load() {
    release_freed();
    if huge_pages_wanted() {
        if let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") {
            for (start, end) in dense_anonymous_regions(&smaps) {
                collapse(start, end);
            }
        }
    }
    HOUSEKEEPING.fetch_add(1, Ordering::Release);
}

/// How many [`after_load`] calls have finished.
static HOUSEKEEPING: AtomicU64 = AtomicU64::new(0);

/// How many memory housekeepings ([`after_load`]) have finished so far.
pub fn housekeeping_done() -> u64 {
    HOUSEKEEPING.load(Ordering::Acquire)
}

/// Has glibc's malloc put away the blocks freed on the calling thread's heap arena, for
/// at most `budget`: true once done. A start or reload of a million zones frees
/// millions of blocks, which the trim ([`after_load`]) merges and leaves in one list
/// for malloc to sort: each of the next calls that reach that list sorts up to 10,000
/// of them (glibc's limit), so the control thread's first few changes after a start
/// took 10–15 ms more each. Sorting them here, while nobody waits (the caller's idle
/// moments, a step at a time), leaves the changes their usual cost. Each step asks for
/// a block that no small-block list holds, so that malloc goes through the list, then
/// frees it; a step that comes back at once means the list is empty.
pub fn sort_freed(budget: Duration) -> bool {
    let started = Instant::now();
    let mut quick = 0;
    loop {
        let step = Instant::now();
        sort_step();
        quick = if step.elapsed() < SORTED_STEP { quick + 1 } else { 0 };
        if quick == QUICK_STEPS {
            return true;
        }
        if started.elapsed() >= budget {
            return false;
        }
    }
}

/// A step of [`sort_freed`] that takes longer than this did some sorting (a full step,
/// 10,000 blocks, takes a millisecond or more); after this many quicker ones in a row,
/// little or nothing is left.
const SORTED_STEP: Duration = Duration::from_micros(50);
const QUICK_STEPS: u32 = 3;

/// The block a step asks for: too large for the small-block lists, below the size glibc
/// gives its own mapping (128 KiB at least), and unlikely to match a free block exactly
/// (which ends a sorting pass early).
const SORT_PROBE: usize = 96 * 1024 + 48;

fn sort_step() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a block from malloc, freed once, never read or written.
    unsafe {
        // `black_box`: a block freed unused would be no call at all to the optimiser.
        libc::free(std::hint::black_box(libc::malloc(SORT_PROBE)));
    }
}

/// False when `TERND_HUGE_PAGES=0` is in the environment.
fn huge_pages_wanted() -> bool {
    std::env::var_os("TERND_HUGE_PAGES").is_none_or(|v| v != "0")
}

/// Asks for huge pages behind the whole 2 MiB steps of `table`, a large table that is
/// probed at random while a zone is built and that will be written all over (the
/// builder's name index): with base pages nearly every probe misses the TLB, and the
/// prefetch that should hide the probe's cache miss waits for the page walk. A huge
/// page is zeroed whole at its first touch, so this is only for tables used in full.
/// A large array written whole gains too: a fault per 2 MiB rather than per 4 KiB.
pub fn advise_huge<T>(table: &[T]) {
    let Some((start, end)) = whole_steps(table.as_ptr() as usize, std::mem::size_of_val(table))
    else {
        return;
    };
    if !huge_pages_wanted() {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: MADV_HUGEPAGE changes how pages of our own allocation (whole pages inside
    // `table`) will be backed, never their contents.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// The whole huge-page steps inside `len` bytes at `at`, if there is one.
fn whole_steps(at: usize, len: usize) -> Option<(usize, usize)> {
    let start = at.checked_add(HUGE - 1)? & !(HUGE - 1);
    let end = at.checked_add(len)? & !(HUGE - 1);
    (end > start).then_some((start, end))
}

/// Returns free heap pages to the system (glibc `malloc_trim`; nothing elsewhere).
fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Asks the kernel to back each whole huge page inside `start..end` that is at least
/// half resident with a huge page. Step by step: one refused step (say, a page range the
/// trim emptied) would otherwise end the call for the whole region.
fn collapse(start: usize, end: usize) {
    let mut at = (start + HUGE - 1) & !(HUGE - 1);
    while at + HUGE <= end {
        if resident_pages(at) * 2 >= PAGES_PER_HUGE {
            #[cfg(target_os = "linux")]
            // SAFETY: MADV_COLLAPSE changes how a range of our own address space is
            // backed, never its contents; the range comes from /proc/self/smaps, and a
            // range that is no longer mapped only makes the call fail.
            unsafe {
                libc::madvise(at as *mut libc::c_void, HUGE, MADV_COLLAPSE);
            }
        }
        at += HUGE;
    }
}

/// Base pages in a huge page.
const PAGES_PER_HUGE: usize = HUGE / 4096;

/// How many of the base pages of the huge-page step at `at` are resident (0 when that
/// cannot be told).
fn resident_pages(at: usize) -> usize {
    let mut pages = [0u8; PAGES_PER_HUGE];
    #[cfg(target_os = "linux")]
    // SAFETY: mincore writes one byte per 4 KiB page of the HUGE-byte range into `pages`,
    // which has exactly that many bytes; `at` is page aligned, and a range that is no
    // longer mapped only makes the call fail (ENOMEM), leaving `pages` zero.
    unsafe {
        libc::mincore(at as *mut libc::c_void, HUGE, pages.as_mut_ptr());
    }
    pages.iter().filter(|&&p| p & 1 == 1).count()
}

/// The read-write private anonymous regions (the heap, glibc's arenas and large
/// allocations) of at least one huge page with at least a quarter of it resident (the
/// steps to collapse are chosen by [`collapse`]).
fn dense_anonymous_regions(smaps: &str) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        if let Some(region) = region_header(line) {
            current = region;
            continue;
        }
        let Some(rss) = line.strip_prefix("Rss:") else { continue };
        let Some((start, end)) = current.take() else { continue };
        let kib = rss.trim().trim_end_matches("kB").trim().parse::<usize>().unwrap_or(0);
        if end - start >= HUGE && kib * 1024 * 4 >= end - start {
            regions.push((start, end));
        }
    }
    regions
}

/// For a region header line of smaps (`start-end perms offset dev inode [path]`): `Some`
/// with the range when it is private anonymous read-write memory, `Some(None)` for any
/// other region; `None` for lines that are not headers.
fn region_header(line: &str) -> Option<Option<(usize, usize)>> {
    let mut fields = line.split_ascii_whitespace();
    let (range, perms) = (fields.next()?, fields.next()?);
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let (_offset, _dev, inode) = (fields.next()?, fields.next()?, fields.next()?);
    let path = fields.next().unwrap_or("");
    let anonymous = inode == "0" && (path.is_empty() || path == "[heap]");
    Some((anonymous && perms == "rw-p" && end > start).then_some((start, end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_heap_is_sorted_to_the_end_and_housekeeping_counted() {
        // Blocks freed between kept ones, as a start's outcomes are: they cannot merge,
        // and the trim leaves them all in malloc's list to sort.
        let mut kept = Vec::new();
        let mut freed = Vec::new();
        for i in 0..200_000usize {
            kept.push(vec![i as u8; 40]);
            freed.push(vec![i as u8; 200 + i % 64]);
        }
        drop(freed);
        let before = housekeeping_done();
        after_load();
        assert!(housekeeping_done() > before);
        assert!(sort_freed(Duration::from_secs(30)), "sorting ends");
        assert_eq!(kept.iter().map(|k| k.len()).sum::<usize>(), 200_000 * 40);
    }

    #[test]
    fn only_whole_huge_page_steps_are_advised() {
        const MIB: usize = 1 << 20;
        assert_eq!(whole_steps(16, 3 * MIB), None, "no whole step inside");
        assert_eq!(whole_steps(HUGE, HUGE), Some((HUGE, 2 * HUGE)));
        assert_eq!(whole_steps(HUGE + 16, 5 * MIB), Some((2 * HUGE, 3 * HUGE)));
        assert_eq!(whole_steps(usize::MAX - 8, 8), None);
        // A table the builder makes: its steps are asked for, nothing else.
        let keys = vec![0u64; HUGE / 4];
        let (start, end) = whole_steps(keys.as_ptr() as usize, HUGE * 2).unwrap();
        assert!(start >= keys.as_ptr() as usize && end <= keys.as_ptr() as usize + HUGE * 2);
        advise_huge(&keys);
        assert!(keys.iter().all(|&k| k == 0));
    }

    #[test]
    fn only_dense_private_anonymous_regions_are_chosen() {
        let smaps = "\
55d4a0000000-55d4a0800000 rw-p 00000000 00:00 0                          [heap]
Size:               8192 kB
Rss:                8000 kB
7f0000000000-7f0000800000 rw-p 00000000 00:00 0 
Size:               8192 kB
Rss:                  64 kB
7f1000000000-7f1000400000 r--p 00000000 08:01 1234                       /usr/lib/libc.so.6
Size:               4096 kB
Rss:                4096 kB
7f2000000000-7f2000100000 rw-p 00000000 00:00 0 
Size:               1024 kB
Rss:                1024 kB
7f3000000000-7f3004000000 rw-p 00000000 00:00 0 
Size:              65536 kB
Rss:               60000 kB
";
        assert_eq!(
            dense_anonymous_regions(smaps),
            [(0x55d4_a000_0000, 0x55d4_a080_0000), (0x7f30_0000_0000, 0x7f30_0400_0000)]
        );
        assert_eq!(region_header("Rss:  12 kB"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn residency_is_counted_per_huge_page_step() {
        let step_in = |p: *const u8| (p as usize + HUGE - 1) & !(HUGE - 1);
        let touched = vec![1u8; 3 * HUGE];
        assert_eq!(resident_pages(step_in(touched.as_ptr())), PAGES_PER_HUGE);
        // A large allocation is mapped fresh and stays unresident until written.
        let untouched: Vec<u8> = Vec::with_capacity(3 * HUGE);
        assert!(resident_pages(step_in(untouched.as_ptr())) * 2 < PAGES_PER_HUGE);
    }
}
