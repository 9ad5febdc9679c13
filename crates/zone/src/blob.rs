//! Node data blobs: immutable byte strings shared between snapshots by reference
//! counting, behind a one-word pointer.
//!
//! An `Arc<[u8]>` is two words (pointer and length) and puts 16 bytes of counts before
//! the bytes; a [`Blob`] is one word, and its allocation starts with a 4-byte count and
//! the 4-byte length. A zone has a blob per node, so that is 8 bytes less per node in
//! the node table (a node fits in 32 bytes, half a cache line) and 8 bytes less per
//! allocation.
//!
//! A small zone's blobs share one allocation, a pack ([`Blob::pack`]): each part has
//! the header of a blob of its own, but its count word holds [`PACKED`] and the part's
//! distance from the pack's start, where a header of the same shape holds the count of
//! every part's references and the pack's length. Reading a blob is the same either
//! way; a clone or a drop counts on the pack, which is freed with the last reference to
//! any of its parts. Allocators keep a few bytes of their own per allocation (glibc 8,
//! and rounds to 16): for a million small zones of nine names each, packing saves about
//! 8 million of them.

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

/// Most references one blob (or pack) may have: past it the program aborts, as `Arc`
/// does (a reference per live snapshot holding the node never comes near). A count
/// therefore never has its top bit set, and that bit marks a packed part.
const MAX_COUNT: u32 = i32::MAX as u32;

/// In a part's count word: the part is in a pack, at the distance the other bits give
/// from the pack's header (see the module docs). Never set in a count.
const PACKED: u32 = 1 << 31;

/// Alignment of every part's header in a pack.
const ALIGN: usize = std::mem::align_of::<Header>();

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

    /// Blobs holding copies of `parts`, given to `each` in order, all in one allocation
    /// (see the module docs). The pack is freed with the last reference to any of them.
    /// Every part has a header: a pack is 8 bytes plus, per part, 8 bytes and its length
    /// rounded up to 4. `parts` is walked twice: to size the pack, then to fill it.
    pub fn pack<'a, I>(parts: I, mut each: impl FnMut(Blob))
    where
        I: Iterator<Item = &'a [u8]> + Clone,
    {
        let (size, count) = parts.clone().fold((HEAD, 0usize), |(size, count), p| {
            (size.saturating_add(part_room(p.len())), count + 1)
        });
        if count == 0 {
            return; // a pack without parts would never be freed
        }
        let (len, count) = match (u32::try_from(size - HEAD), u32::try_from(count)) {
            (Ok(len), Ok(count)) if len < PACKED && count <= MAX_COUNT => (len, count),
            _ => std::process::abort(),
        };
        let layout = layout(size - HEAD);
        // SAFETY: the layout has a nonzero size (the header).
        let raw = unsafe { alloc(layout) };
        let Some(pack) = NonNull::new(raw.cast::<Header>()) else { handle_alloc_error(layout) };
        // SAFETY: `raw` is a fresh allocation of `size` bytes aligned for `Header`. The
        // pack's header, then each part's header (at a multiple of `ALIGN`) and bytes,
        // are written in place, each part checked to fit first: a clone of `parts` that
        // gave other slices than the first walk aborts, and at most `count` are written.
        unsafe {
            pack.as_ptr().write(Header { count: AtomicU32::new(count), len });
            let mut at = HEAD;
            for part in parts.take(count as usize) {
                if at + part_room(part.len()) > size {
                    std::process::abort();
                }
                let header = raw.add(at).cast::<Header>();
                let word = PACKED | at as u32;
                header.write(Header { count: AtomicU32::new(word), len: part.len() as u32 });
                std::ptr::copy_nonoverlapping(part.as_ptr(), raw.add(at + HEAD), part.len());
                at += part_room(part.len());
                each(Blob { header: NonNull::new_unchecked(header) });
            }
        }
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

    /// True when both are counted together: the same blob, or parts of one pack.
    #[cfg(test)]
    pub(crate) fn same_allocation(a: &Blob, b: &Blob) -> bool {
        a.counted() == b.counted()
    }

    /// The header that counts this blob's references: its own, or its pack's.
    #[inline]
    fn counted(&self) -> NonNull<Header> {
        // Relaxed: a part's word is written once, before the part is shared, and a
        // count's top bit is never set (`MAX_COUNT`), whatever the count's value.
        let word = self.header().count.load(Ordering::Relaxed);
        if word & PACKED == 0 {
            return self.header;
        }
        let back = (word & !PACKED) as usize;
        // SAFETY: a part's word gives its distance from its pack's header, in the same
        // allocation, which lives as long as any part's `Blob`.
        unsafe { NonNull::new_unchecked(self.header.as_ptr().cast::<u8>().sub(back).cast()) }
    }
}

/// Bytes a part of `len` bytes takes in a pack: its header, its bytes, and the padding
/// that puts the next part's header on a multiple of `ALIGN`.
fn part_room(len: usize) -> usize {
    (HEAD + len).next_multiple_of(ALIGN)
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
        // SAFETY: the counting header lives as long as this blob.
        let counted = unsafe { self.counted().as_ref() };
        // Relaxed, as `Arc::clone`: a new reference is made from an existing one, which
        // keeps the blob alive meanwhile.
        if counted.count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
        Blob { header: self.header }
    }
}

impl Drop for Blob {
    fn drop(&mut self) {
        let counted = self.counted();
        // SAFETY: the counting header lives until its count reaches zero below.
        let header = unsafe { counted.as_ref() };
        // Release, then acquire before freeing, as `Arc`'s drop: every use of the bytes
        // by other owners happens before the free.
        if header.count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        // A pack's length is that of all its parts: the layout it was made with.
        let layout = layout(header.len as usize);
        // SAFETY: this was the last reference; the allocation was made with this layout.
        unsafe { dealloc(counted.as_ptr().cast::<u8>(), layout) };
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
    fn packed_parts_hold_their_bytes_and_the_pack_goes_with_the_last() {
        let owned: Vec<Vec<u8>> = [0usize, 1, 3, 4, 5, 13, 300]
            .iter()
            .map(|&n| (0..n).map(|i| i as u8).collect())
            .collect();
        let parts: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let mut blobs = Vec::new();
        Blob::pack(parts.iter().copied(), |b| blobs.push(b));
        assert_eq!(blobs.len(), parts.len());
        for (blob, part) in blobs.iter().zip(&parts) {
            assert_eq!(&**blob, *part);
            assert_eq!(blob.address() % ALIGN, 0, "each part's header is aligned");
            assert_eq!(format!("{blob:?}"), format!("Blob({} bytes)", part.len()));
        }
        let pack = blobs[0].counted();
        assert!(blobs.iter().all(|b| b.counted() == pack), "one pack counts them all");
        // SAFETY: the pack lives while `blobs` does.
        let count = || unsafe { pack.as_ref() }.count.load(Ordering::Relaxed);
        assert_eq!(count(), 7);
        let kept = blobs[5].clone();
        assert!(Blob::ptr_eq(&kept, &blobs[5]) && !Blob::ptr_eq(&kept, &blobs[4]));
        assert_eq!(count(), 8);
        blobs.truncate(2);
        assert_eq!(count(), 3);
        drop(blobs);
        assert_eq!(count(), 1, "one part kept holds the pack");
        assert_eq!(&*kept, parts[5]);
        drop(kept); // frees the pack (valgrind checks it is freed once, and in whole)
        let mut none = 0;
        Blob::pack(std::iter::empty(), |_| none += 1);
        assert_eq!(none, 0, "no parts, no pack");
    }

    #[test]
    fn a_packed_part_is_shared_and_dropped_across_threads() {
        let parts: [&[u8]; 3] = [b"\x03www\x07example\x00", b"", b"\x04mail\x07example\x00"];
        let mut blobs = Vec::new();
        Blob::pack(parts.iter().copied(), |b| blobs.push(b));
        let start = Arc::new(Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (mine, start) = (blobs[t % 3].clone(), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    (0..1000).map(|_| mine.clone().len()).sum::<usize>()
                })
            })
            .collect();
        drop(blobs); // the threads' clones hold the pack now
        let sums: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(sums, [13_000, 0, 14_000, 13_000]); // the last thread's drop freed the pack
    }

    #[test]
    fn a_node_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Blob>(), 8);
        assert_eq!(std::mem::size_of::<crate::Node>(), 32);
    }
}
