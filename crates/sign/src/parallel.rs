//! Work spread over threads (`std::thread::scope`): items taken in chunks, in turn, by
//! as many threads as asked; results put back in the items' order ([`map`]), or the
//! items changed in place, a chunk at a time ([`for_each_chunk`]), so that the outcome
//! does not depend on the number of threads or on which thread did what.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Items a thread takes at a time: enough to make taking them cheap, few enough that
/// threads finish together.
const CHUNK: usize = 64;

/// The results of one thread: (chunk number, results of its items).
type Done<R> = Vec<(usize, Vec<R>)>;

/// `work` applied to every item on `threads` threads (at least one; the calling thread
/// is one of them), each with its own state from `init`. The results are in the items'
/// order. The first error stops every thread at its next chunk and is returned.
pub fn map<T, R, S>(
    items: &[T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> Result<R> + Sync,
) -> Result<Vec<R>>
where
    T: Sync,
    R: Send,
{
    let chunks: Vec<&[T]> = items.chunks(CHUNK).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let run = || -> Result<Done<R>> {
        let mut state = init();
        let mut done = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = chunks.get(i) else { break };
            let results: Result<Vec<R>> = chunk.iter().map(|item| work(&mut state, item)).collect();
            match results {
                Ok(results) => done.push((i, results)),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(done)
    };
    let threads = threads.clamp(1, chunks.len().max(1));
    let mut parts = if threads == 1 { run()? } else { run_scoped(threads, &run)? };
    parts.sort_unstable_by_key(|(i, _)| *i);
    Ok(parts.into_iter().flat_map(|(_, results)| results).collect())
}

/// `work` applied to every chunk of `items`, which it may change, on `threads` threads
/// (at least one; the calling thread is one of them), each with its own state from
/// `init`: the sum of what it returned. Each chunk is worked on where it lies, by one
/// thread: nothing is handed from thread to thread but which chunk is next. The first
/// error stops every thread at its next chunk and is returned.
pub fn for_each_chunk<T, S>(
    items: &mut [T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &mut [T]) -> Result<usize> + Sync,
) -> Result<usize>
where
    T: Send,
{
    let threads = threads.clamp(1, items.len().div_ceil(CHUNK).max(1));
    let chunks = Mutex::new(items.chunks_mut(CHUNK));
    let stop = AtomicBool::new(false);
    let run = || -> Result<usize> {
        let mut state = init();
        let mut total = 0;
        while !stop.load(Ordering::Relaxed) {
            // A poisoned lock: another thread panicked, and its join says so.
            let Some(chunk) = chunks.lock().ok().and_then(|mut c| c.next()) else { break };
            match work(&mut state, chunk) {
                Ok(count) => total += count,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(total)
    };
    if threads == 1 {
        return run();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut all = run();
        for handle in handles {
            let theirs = handle.join().unwrap_or(Err(Error::Crypto("a signing thread panicked")));
            all = match (all, theirs) {
                (Ok(mine), Ok(theirs)) => Ok(mine + theirs),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        all
    })
}

/// Runs `run` on `threads` threads (this one and `threads - 1` more) and joins what
/// they did.
fn run_scoped<R: Send>(
    threads: usize,
    run: &(impl Fn() -> Result<Done<R>> + Sync),
) -> Result<Done<R>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut all = run();
        for handle in handles {
            let theirs = handle.join().unwrap_or(Err(Error::Crypto("a signing thread panicked")));
            all = match (all, theirs) {
                (Ok(mut mine), Ok(theirs)) => {
                    mine.extend(theirs);
                    Ok(mine)
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_order_whatever_the_threads() {
        let items: Vec<u32> = (0..1000).collect();
        let expect: Vec<u64> = items.iter().map(|&i| u64::from(i) * 3).collect();
        for threads in [0, 1, 2, 3, 8, 64] {
            let out = map(&items, threads, || (), |_, &i| Ok(u64::from(i) * 3)).unwrap();
            assert_eq!(out, expect, "{threads} threads");
        }
        assert!(map(&[] as &[u32], 4, || (), |_, &i| Ok(i)).unwrap().is_empty());
    }

    #[test]
    fn every_item_changed_once_whatever_the_threads() {
        let triple = |_: &mut (), chunk: &mut [u64]| {
            chunk.iter_mut().for_each(|item| *item *= 3);
            Ok(chunk.iter().filter(|&&v| v % 2 == 0).count())
        };
        for threads in [0, 1, 2, 3, 8, 64] {
            let mut items: Vec<u64> = (0..1000).collect();
            assert_eq!(for_each_chunk(&mut items, threads, || (), triple), Ok(500), "{threads}");
            assert!(items.iter().enumerate().all(|(i, &v)| v == i as u64 * 3), "{threads}");
        }
        assert_eq!(for_each_chunk(&mut [] as &mut [u32], 4, || (), |_, c| Ok(c.len())), Ok(0));
        let mut items: Vec<u32> = (0..1000).collect();
        let failed = for_each_chunk(
            &mut items,
            4,
            || (),
            |_, chunk| match chunk.contains(&777) {
                true => Err(Error::Crypto("x")),
                false => Ok(1),
            },
        );
        assert_eq!(failed, Err(Error::Crypto("x")));
    }

    #[test]
    fn an_error_is_returned() {
        let items: Vec<u32> = (0..1000).collect();
        let out =
            map(&items, 4, || (), |_, &i| if i == 777 { Err(Error::Crypto("x")) } else { Ok(i) });
        assert_eq!(out, Err(Error::Crypto("x")));
    }
}
