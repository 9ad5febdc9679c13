//! A per-thread buffer of [`MAX_MESSAGE_LEN`] bytes and a per-thread compression
//! table, lent out and taken back, for code off the query path that reads or writes one
//! message at a time (an UPDATE, its answer): zeroing 64 KiB for each of those cost more
//! than the rest of the message's handling, and a new table's 4 KiB wipe was half of
//! what answering an update cost its writer. A nested borrower gets a fresh one, so
//! lending never fails.

use std::cell::Cell;

use super::{CompressionTable, MAX_MESSAGE_LEN};

thread_local! {
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    static TABLE: Cell<Option<Box<CompressionTable>>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's buffer ([`MAX_MESSAGE_LEN`] bytes; what an earlier
/// borrower left in it is still there).
pub fn with_buffer<R>(f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut buffer = BUFFER.take();
    if buffer.len() < MAX_MESSAGE_LEN {
        buffer = vec![0; MAX_MESSAGE_LEN];
    }
    let result = f(&mut buffer);
    BUFFER.set(buffer);
    result
}

/// Runs `f` with this thread's compression table (a
/// [`MessageWriter`](super::MessageWriter) clears it when it starts, in O(1)).
pub fn with_table<R>(f: impl FnOnce(&mut CompressionTable) -> R) -> R {
    let mut table = TABLE.take().unwrap_or_default();
    let result = f(&mut table);
    TABLE.set(Some(table));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lends_the_same_table_again_and_a_fresh_one_when_nested() {
        let first = with_table(|t| std::ptr::from_mut(t) as usize);
        let (again, nested) = with_table(|t| {
            (std::ptr::from_mut(t) as usize, with_table(|i| std::ptr::from_mut(i) as usize))
        });
        assert_eq!(first, again);
        assert_ne!(nested, again);
    }

    #[test]
    fn lends_the_same_buffer_again_and_a_fresh_one_when_nested() {
        let first = with_buffer(|b| {
            b[0] = 7;
            b.as_ptr() as usize
        });
        let (again, kept, nested) = with_buffer(|b| {
            let nested = with_buffer(|inner| (inner.as_ptr() as usize, inner.len()));
            (b.as_ptr() as usize, b[0], nested)
        });
        assert_eq!((first, kept), (again, 7));
        assert_ne!(nested.0, again);
        assert_eq!(nested.1, MAX_MESSAGE_LEN);
    }
}
