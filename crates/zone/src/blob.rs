//! Node data blobs: immutable byte strings shared between snapshots by reference
//! counting, behind a one-word pointer.
//!
//! An `Arc<[u8]>` is two words (pointer and length) and puts 16 bytes of counts before
//! the bytes; a [`Blob`] is one word, and its allocation starts with a 4-byte count and
//! the 4-byte length. A zone has a blob per node, so that is 8 bytes less per node in
//! the node table (a node fits in 32 bytes, half a cache line) and 8 bytes less per
//! allocation.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, Ordering};

/// What an allocation starts with; the bytes follow.
#[repr(C)]
struct Header {
    count: AtomicU32,
    len: u32,
}

/// Bytes before the data.
const HEAD: usize = std::mem::size_of::<Header>();

/// Most references one blob may have: past it the program aborts, as `Arc` does (a
/// reference per live snapshot holding the node never comes near).
const MAX_COUNT: u32 = i32::MAX as u32;

/// An immutable, reference-counted byte string (see the module docs).
pub struct Blob {
    header: NonNull<Header>,
}

// SAFETY: the bytes are never written after `new`, and the count is atomic: a blob may
// be shared and dropped across threads like `Arc<[u8]>`.
unsafe impl Send for Blob {}
// SAFETY: as above; `&Blob` only gives shared access to immutable bytes.
unsafe impl Sync for Blob {}

impl Blob {
    /// A blob holding a copy of `bytes` (at most 4 GiB).
    pub fn new(bytes: &[u8]) -> Blob {
        let len = u32::try_from(bytes.len()).unwrap_or_else(|_| std::process::abort());
        let layout = layout(bytes.len());
        // SAFETY: the layout has a nonzero size (the header).
        let raw = unsafe { alloc(layout) };
        let Some(header) = NonNull::new(raw.cast::<Header>()) else { handle_alloc_error(layout) };
        // SAFETY: `raw` is a fresh allocation of `HEAD + len` bytes aligned for
        // `Header`: the header is written in place, the bytes copied right after it.
        unsafe {
            header.as_ptr().write(Header { count: AtomicU32::new(1), len });
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), raw.add(HEAD), bytes.len());
        }
        Blob { header }
    }

    /// Where the allocation starts (its count and length, then the bytes), to prefetch it
    /// without reading it.
    #[inline]
    pub fn address(&self) -> usize {
        self.header.as_ptr() as usize
    }

    /// True when both are the same allocation (shared, not merely equal).
    pub fn ptr_eq(a: &Blob, b: &Blob) -> bool {
        a.header == b.header
    }

    fn header(&self) -> &Header {
        // SAFETY: the header lives as long as any `Blob` pointing to it.
        unsafe { self.header.as_ref() }
    }
}

fn layout(len: usize) -> Layout {
    Layout::from_size_align(HEAD + len, std::mem::align_of::<Header>())
        .unwrap_or_else(|_| std::process::abort())
}

impl std::ops::Deref for Blob {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        let len = self.header().len as usize;
        // SAFETY: `len` bytes were copied right after the header in `new` and are never
        // written again; they live as long as the header.
        unsafe { std::slice::from_raw_parts(self.header.as_ptr().cast::<u8>().add(HEAD), len) }
    }
}

impl Clone for Blob {
    fn clone(&self) -> Blob {
        // Relaxed, as `Arc::clone`: a new reference is made from an existing one, which
        // keeps the blob alive meanwhile.
        if self.header().count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
        Blob { header: self.header }
    }
}

impl Drop for Blob {
    fn drop(&mut self) {
        // Release, then acquire before freeing, as `Arc`'s drop: every use of the bytes
        // by other owners happens before the free.
        if self.header().count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        let layout = layout(self.len());
        // SAFETY: this was the last reference; the allocation was made with this layout.
        unsafe { dealloc(self.header.as_ptr().cast::<u8>(), layout) };
    }
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blob({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    use super::*;

    #[test]
    fn holds_its_bytes_and_frees_with_the_last_reference() {
        for len in [0usize, 1, 7, 8, 64, 300, 70_000] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let a = Blob::new(&bytes);
            let b = a.clone();
            assert_eq!(&*a, bytes.as_slice());
            assert!(Blob::ptr_eq(&a, &b));
            assert!(!Blob::ptr_eq(&a, &Blob::new(&bytes)), "equal, not shared");
            assert_eq!(a.header().count.load(Ordering::Relaxed), 2);
            drop(a);
            assert_eq!(b.header().count.load(Ordering::Relaxed), 1);
            assert_eq!(&*b, bytes.as_slice());
        }
    }

    #[test]
    fn is_shared_and_dropped_across_threads() {
        let blob = Blob::new(b"\x03www\x07example\x00");
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let mine = blob.clone();
                std::thread::spawn(move || (0..1000).map(|_| mine.clone().len()).sum::<usize>())
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 13_000);
        }
        assert_eq!(blob.header().count.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn an_empty_blob_is_its_own_allocation() {
        let a = Blob::new(&[]);
        let b = Blob::new(b"");
        assert!(a.is_empty() && b.is_empty());
        assert_ne!(a.address(), 0);
        assert!(!Blob::ptr_eq(&a, &b), "each empty blob has its own header");
        let c = a.clone();
        assert!(Blob::ptr_eq(&a, &c));
        assert_eq!(format!("{c:?}"), "Blob(0 bytes)");
        drop(a);
        assert_eq!(c.header().count.load(Ordering::Relaxed), 1);
        assert_eq!(&*c, b"");
    }

    #[test]
    fn counts_clones_made_on_many_threads_at_once() {
        const THREADS: usize = 4;
        const HELD: usize = 250;
        let blob = Blob::new(b"\x07example\x00");
        let (all_held, checked) = (Barrier::new(THREADS + 1), Barrier::new(THREADS + 1));
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    let held: Vec<Blob> = (0..HELD).map(|_| blob.clone()).collect();
                    all_held.wait();
                    checked.wait();
                    assert!(held.iter().all(|b| Blob::ptr_eq(b, &blob)));
                });
            }
            all_held.wait();
            let count = blob.header().count.load(Ordering::Relaxed) as usize;
            checked.wait();
            assert_eq!(count, 1 + THREADS * HELD, "no increment lost");
        });
        assert_eq!(blob.header().count.load(Ordering::Relaxed), 1, "no decrement lost");
    }

    #[test]
    fn the_last_reference_may_be_dropped_on_any_thread() {
        // Every thread clones and drops in a loop while the others do; the first owner
        // goes before any of them finish, so the free happens on whichever thread lets go
        // last (valgrind, in scripts/valgrind-blob.sh, checks it is freed exactly once
        // and never read after).
        for len in [0usize, 13, 4096] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let blob = Blob::new(&bytes);
            let start = Arc::new(Barrier::new(4));
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let (mine, start, bytes) = (blob.clone(), Arc::clone(&start), bytes.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        for _ in 0..500 {
                            let other = mine.clone();
                            assert_eq!(&*other, bytes.as_slice());
                        }
                        assert_eq!(&*mine, bytes.as_slice());
                    })
                })
                .collect();
            drop(blob);
            for h in handles {
                h.join().unwrap();
            }
        }
    }

    #[test]
    fn a_node_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Blob>(), 8);
        assert_eq!(std::mem::size_of::<crate::Node>(), 32);
    }
}
