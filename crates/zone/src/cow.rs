//! A copy-on-write vector in fixed-size chunks.
//!
//! Cloning a [`ChunkVec`] copies only the list of chunk pointers; changing an element
//! copies the one chunk it lives in if that chunk is shared with another snapshot. This is
//! what lets an update of a large zone share every untouched node with the previous
//! snapshot (ARCHITECTURE.md: copy-on-write of nodes, structural sharing of the rest).
//!
//! The last chunk may be longer than the elements it holds: [`ChunkVec::push`] grows it
//! ahead of need (padding with default values that no accessor returns), so that a
//! change appending many elements copies it a few times, not once per element.

use std::sync::Arc;

/// Elements per chunk, as a power of two, unless a vector says otherwise: 1,024.
///
/// A version's clone copies a pointer and changes a count per chunk (about 30 ns each
/// when the counts are out of the cache, as between two changes of a large zone), and
/// a write to a shared chunk copies the chunk. Elements that are plain values, cheap
/// to copy, go in larger chunks ([`crate::index::NameIndex`]'s slots).
pub const SHIFT: u32 = 10;

/// Padding elements a pushed-to last chunk starts with, at least.
const MIN_TAIL: usize = 8;

/// A vector of `T` split into shared, copy-on-write chunks of 2^`BITS` elements.
#[derive(Clone)]
pub struct ChunkVec<T, const BITS: u32 = SHIFT> {
    /// Every chunk but the last holds [`Self::CHUNK`] elements; the last holds the rest, and
    /// may be padded past them. A boxed slice, not a `Vec`: a word less in every zone's
    /// version, and the list changes only when a whole chunk comes or goes.
    chunks: Box<[Arc<[T]>]>,
    len: usize,
}

impl<T, const BITS: u32> ChunkVec<T, BITS> {
    /// Elements per chunk.
    pub const CHUNK: usize = 1 << BITS;
}

impl<T: Clone, const BITS: u32> ChunkVec<T, BITS> {
    /// An empty vector.
    pub fn new() -> Self {
        ChunkVec { chunks: Box::default(), len: 0 }
    }

    /// Moves a plain vector into chunks, each made at its size. (No empty chunk is made
    /// to find the end: made and freed after a zone's long-lived allocations, it left a
    /// hole among them.)
    pub fn from_vec(items: Vec<T>) -> Self {
        let len = items.len();
        let mut chunks = Vec::with_capacity(len.div_ceil(Self::CHUNK));
        let mut items = items.into_iter();
        while items.len() > 0 {
            chunks.push(items.by_ref().take(Self::CHUNK).collect());
        }
        ChunkVec { chunks: chunks.into_boxed_slice(), len }
    }

    /// A vector of `len` elements, element `i` made by `make(i)`, in order, each written
    /// once, straight into its chunk.
    pub fn from_fn(len: usize, mut make: impl FnMut(usize) -> T) -> Self {
        let chunks = (0..len.div_ceil(Self::CHUNK))
            .map(|c| (c * Self::CHUNK..len.min((c + 1) * Self::CHUNK)).map(&mut make).collect())
            .collect();
        ChunkVec { chunks, len }
    }

    /// A vector of `len` copies of `value`.
    pub fn filled(value: T, len: usize) -> Self {
        Self::from_vec(vec![value; len])
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The element at `index`.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len {
            return None;
        }
        self.chunks.get(index >> BITS)?.get(index & (Self::CHUNK - 1))
    }

    /// Mutable access to the element at `index`, copying its chunk first if it is shared.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index >= self.len {
            return None;
        }
        let chunk = self.chunks.get_mut(index >> BITS)?;
        Arc::make_mut(chunk).get_mut(index & (Self::CHUNK - 1))
    }

    /// Replaces the element at `index`; returns false if out of range.
    pub fn set(&mut self, index: usize, value: T) -> bool {
        match self.get_mut(index) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    /// Appends an element. The last chunk is copied when it is full of elements: into one
    /// with a few more places when it is shared with another snapshot, else into one
    /// twice as long (up to [`Self::CHUNK`]), so that appending n elements copies O(n)
    /// elements, however many chunks the vector has. (A shared chunk with room left is
    /// copied by `Arc::make_mut`, as any write to it.)
    pub fn push(&mut self, value: T)
    where
        T: Default,
    {
        let at = self.len & (Self::CHUNK - 1);
        if at == 0 && self.len == self.chunks.len() * Self::CHUNK {
            self.edit_chunks(|chunks| chunks.push(Arc::from(vec![T::default(); MIN_TAIL])));
        }
        let Some(last) = self.chunks.last_mut() else { return };
        if at >= last.len() {
            // A chunk shared with another snapshot is copied with a little room (most
            // changes add a name or two); one this vector owns already, doubled.
            let room = if Arc::strong_count(last) > 1 { at + MIN_TAIL } else { 2 * at };
            let mut items: Vec<T> = last.get(..at).unwrap_or(&[]).to_vec();
            items.resize(room.clamp(MIN_TAIL, Self::CHUNK), T::default());
            *last = items.into();
        }
        if let Some(slot) = Arc::make_mut(last).get_mut(at) {
            *slot = value;
            self.len += 1;
        }
    }

    /// Removes the last element and returns it. Nothing is written: the element stays in
    /// its chunk, past the length, until a push overwrites it; a chunk left without
    /// elements is let go.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        let value = self.get(last).cloned();
        self.len = last;
        if self.chunks.len() > self.len.div_ceil(Self::CHUNK) {
            self.edit_chunks(|chunks| chunks.pop());
        }
        value
    }

    /// The elements of the first chunk: every element of a vector of at most [`Self::CHUNK`].
    #[inline]
    pub fn head(&self) -> &[T] {
        let head = self.chunks.first().map_or(&[][..], |chunk| &chunk[..]);
        head.get(..self.len.min(Self::CHUNK)).unwrap_or(head)
    }

    /// Changes the list of chunks (made again at its new length).
    fn edit_chunks<R>(&mut self, edit: impl FnOnce(&mut Vec<Arc<[T]>>) -> R) {
        let mut chunks = std::mem::take(&mut self.chunks).into_vec();
        edit(&mut chunks);
        self.chunks = chunks.into_boxed_slice();
    }

    /// Iterates over all elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter()).take(self.len)
    }

    /// Number of chunks shared with `other` (for tests and diagnostics).
    #[cfg(test)]
    pub fn shared_chunks(&self, other: &Self) -> usize {
        self.chunks.iter().zip(&other.chunks).filter(|(a, b)| Arc::ptr_eq(a, b)).count()
    }
}

impl<T: Clone> Default for ChunkVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const BITS: u32> std::fmt::Debug for ChunkVec<T, BITS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChunkVec(len {}, {} chunks)", self.len, self.chunks.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHUNK: usize = ChunkVec::<u32>::CHUNK;

    #[test]
    fn copy_on_write_shares_untouched_chunks() {
        let a = ChunkVec::<_>::from_vec((0..5000u32).collect());
        assert_eq!(a.len(), 5000);
        assert_eq!(a.get(4999), Some(&4999));
        assert_eq!(a.get(5000), None);
        let mut b = a.clone();
        assert!(b.set(1500, 7));
        assert_eq!(b.get(1500), Some(&7));
        assert_eq!(a.get(1500), Some(&1500));
        assert_eq!(b.shared_chunks(&a), 4);
        b.push(99_999);
        assert_eq!(b.get(5000), Some(&99_999));
        assert_eq!(a.len(), 5000);
        assert_eq!(b.iter().copied().filter(|&x| x == 99_999).count(), 1);
    }

    #[test]
    fn made_in_order_across_chunks() {
        for len in [0, 1, CHUNK, CHUNK + 1, 3 * CHUNK - 1] {
            let mut calls = Vec::new();
            let v = ChunkVec::<_>::from_fn(len, |i| {
                calls.push(i);
                i * 2
            });
            assert_eq!(v.len(), len);
            assert_eq!(calls, (0..len).collect::<Vec<_>>(), "each made once, in order");
            assert!(v.iter().copied().eq((0..len).map(|i| i * 2)));
            assert_eq!(v.get(len), None);
        }
    }

    #[test]
    fn pop_takes_back_what_push_added_and_leaves_snapshots_alone() {
        let mut v = ChunkVec::<_>::new();
        for i in 0..(2 * CHUNK + 5) {
            v.push(i);
        }
        let snapshot = v.clone();
        for i in (CHUNK - 3..2 * CHUNK + 5).rev() {
            assert_eq!(v.pop(), Some(i));
        }
        assert_eq!((v.len(), v.chunks.len()), (CHUNK - 3, 1));
        v.push(7);
        v.push(8);
        assert_eq!(
            (v.get(CHUNK - 3), v.get(CHUNK - 2), v.get(CHUNK - 1)),
            (Some(&7), Some(&8), None)
        );
        for i in 0..3 {
            v.push(100 + i);
        }
        assert_eq!((v.len(), v.get(CHUNK), v.chunks.len()), (CHUNK + 2, Some(&101), 2));
        assert!(snapshot.iter().copied().eq(0..2 * CHUNK + 5), "the snapshot is untouched");
        let mut empty: ChunkVec<u32> = ChunkVec::<_>::new();
        assert_eq!(empty.pop(), None);
    }

    #[test]
    fn push_across_chunk_boundary() {
        let mut v = ChunkVec::<_>::new();
        for i in 0..(CHUNK + 3) {
            v.push(i);
        }
        assert_eq!(v.len(), CHUNK + 3);
        assert_eq!(v.get(CHUNK), Some(&CHUNK));
        assert_eq!(v.iter().count(), CHUNK + 3);
    }
}
