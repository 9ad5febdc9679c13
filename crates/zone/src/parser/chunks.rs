//! Reading a zone file in chunks, so that a 150 MB zone is parsed through one reused
//! buffer instead of being held in memory whole.
//!
//! Each chunk given to the lexer ends just after a newline (or at the end of the file).
//! An entry can still run past that point inside parentheses; the lexer then says the
//! entry is incomplete and the driver hands back where it started, so the next chunk
//! begins with it. A line or parenthesised entry longer than the buffer grows the buffer,
//! up to [`Limits::max_line`] (and its newline): a longer one is an error, as is reading
//! more than [`Limits::max_file`] bytes.

use std::io::{ErrorKind, Read};

/// The buffer's starting size.
pub(super) const CHUNK: usize = 256 * 1024;

/// How much one file may hold (`Options::max_file_size` and `max_line_length`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// The most bytes read from the file.
    pub max_file: u64,
    /// The longest line (or parenthesised entry), its newline not counted.
    pub max_line: usize,
}

/// Why reading cannot go on.
#[derive(Debug)]
pub(super) enum Stall {
    /// The read failed.
    Io(std::io::Error),
    /// More than [`Limits::max_file`] bytes.
    FileTooBig,
    /// An entry longer than [`Limits::max_line`] bytes.
    LineTooLong,
}

/// A file read through one buffer.
#[derive(Debug)]
pub(super) struct Chunks<R> {
    source: R,
    buf: Vec<u8>,
    filled: usize,
    at_end: bool,
    /// Bytes read from `source` so far.
    read: u64,
    limits: Limits,
}

impl<R: Read> Chunks<R> {
    /// A reader of `source` with a buffer of `size` bytes (at most the longest line and
    /// its newline, so that a longer line is found whatever the size asked for).
    pub fn new(source: R, size: usize, limits: Limits) -> Chunks<R> {
        let size = size.min(limits.max_line.saturating_add(1)).max(1);
        Chunks { source, buf: vec![0; size], filled: 0, at_end: false, read: 0, limits }
    }

    /// Fills the buffer, then returns the text to lex: up to the last newline, or
    /// everything once the file has ended (then `true`: it is the last text). Empty when a
    /// line does not fit: call [`Chunks::grow`].
    pub fn next(&mut self) -> Result<(&[u8], bool), Stall> {
        while self.filled < self.buf.len() && !self.at_end {
            match self.source.read(self.buf.get_mut(self.filled..).unwrap_or(&mut [])) {
                Ok(0) => self.at_end = true,
                Ok(n) => {
                    self.filled += n;
                    self.read = self.read.saturating_add(n as u64);
                    if self.read > self.limits.max_file {
                        return Err(Stall::FileTooBig);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Stall::Io(e)),
            }
        }
        let text = self.buf.get(..self.filled).unwrap_or(&[]);
        if self.at_end {
            return Ok((text, true));
        }
        let end = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        Ok((text.get(..end).unwrap_or(&[]), false))
    }

    /// Drops the first `n` bytes of the text (they have been read).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.filled);
        self.buf.copy_within(n..self.filled, 0);
        self.filled -= n;
    }

    /// Doubles the buffer, for an entry that does not fit in it (one that starts at the
    /// buffer's start), up to the longest line allowed and its newline: an entry that
    /// does not fit in that is too long.
    pub fn grow(&mut self) -> Result<(), Stall> {
        let most = self.limits.max_line.saturating_add(1);
        if self.buf.len() >= most {
            return Err(Stall::LineTooLong);
        }
        self.buf.resize(self.buf.len().saturating_mul(2).min(most), 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Limits = Limits { max_file: u64::MAX, max_line: usize::MAX };

    #[test]
    fn the_buffer_grows_to_the_longest_line_and_no_further() {
        let limits = Limits { max_file: u64::MAX, max_line: 6 };
        // Asked for more, the buffer starts at the longest line and its newline.
        let mut chunks = Chunks::new(&b"123456\n1234567\n"[..], 100, limits);
        assert_eq!(chunks.next().unwrap(), (&b"123456\n"[..], false));
        chunks.consume(7);
        assert_eq!(chunks.next().unwrap(), (&b""[..], false));
        assert!(matches!(chunks.grow(), Err(Stall::LineTooLong)));
        let mut chunks = Chunks::new(&b"12345678"[..], 2, limits);
        assert!(chunks.next().unwrap().0.is_empty());
        chunks.grow().unwrap(); // 4
        chunks.grow().unwrap(); // 7, not 8
        assert!(matches!(chunks.grow(), Err(Stall::LineTooLong)));
    }

    #[test]
    fn reading_past_the_file_limit_stops() {
        let limits = Limits { max_file: 5, max_line: 100 };
        let mut chunks = Chunks::new(&b"ab\ncd\n"[..], 3, limits);
        assert_eq!(chunks.next().unwrap(), (&b"ab\n"[..], false));
        chunks.consume(3);
        assert!(matches!(chunks.next(), Err(Stall::FileTooBig)));
        let limits = Limits { max_file: 6, max_line: 100 };
        let mut chunks = Chunks::new(&b"ab\ncd\n"[..], 100, limits);
        assert_eq!(chunks.next().unwrap(), (&b"ab\ncd\n"[..], true), "at the limit");
    }

    #[test]
    fn chunks_end_at_newlines_until_the_last() {
        // Reads end where the parts of a chain end: "ab", "\ncd", "\nef".
        let source = (&b"ab"[..]).chain(&b"\ncd"[..]).chain(&b"\nef"[..]);
        let mut chunks = Chunks::new(source, 5, NONE);
        assert_eq!(chunks.next().unwrap(), (&b"ab\n"[..], false));
        chunks.consume(3);
        assert_eq!(chunks.next().unwrap(), (&b"cd\n"[..], false));
        chunks.consume(3);
        assert_eq!(chunks.next().unwrap(), (&b"ef"[..], true));
    }

    #[test]
    fn a_long_line_needs_a_bigger_buffer() {
        let source = (&b"abc"[..]).chain(&b"defgh\nx\n"[..]);
        let mut chunks = Chunks::new(source, 4, NONE);
        assert_eq!(chunks.next().unwrap(), (&b""[..], false));
        chunks.grow().unwrap();
        chunks.grow().unwrap();
        assert_eq!(chunks.next().unwrap(), (&b"abcdefgh\nx\n"[..], true));
    }

    #[test]
    fn unread_text_is_kept() {
        let mut chunks = Chunks::new(&b"a (\nb )\n"[..], 4, NONE);
        assert_eq!(chunks.next().unwrap(), (&b"a (\n"[..], false));
        chunks.consume(0);
        chunks.grow().unwrap();
        assert_eq!(chunks.next().unwrap(), (&b"a (\nb )\n"[..], false));
    }
}
