//! Reading a zone file in chunks, so that a 150 MB zone is parsed through one reused
//! buffer instead of being held in memory whole.
//!
//! Each chunk given to the lexer ends just after a newline (or at the end of the file).
//! An entry can still run past that point inside parentheses; the lexer then says the
//! entry is incomplete and the driver hands back where it started, so the next chunk
//! begins with it. A line or parenthesised entry longer than the buffer grows the buffer
//! (up to the file's size: the same as reading the file whole).

use std::io::{ErrorKind, Read};

/// The buffer's starting size.
pub(super) const CHUNK: usize = 256 * 1024;

/// A file read through one buffer.
#[derive(Debug)]
pub(super) struct Chunks<R> {
    source: R,
    buf: Vec<u8>,
    filled: usize,
    at_end: bool,
}

impl<R: Read> Chunks<R> {
    /// A reader of `source` with a buffer of `size` bytes.
    pub fn new(source: R, size: usize) -> Chunks<R> {
        Chunks { source, buf: vec![0; size.max(1)], filled: 0, at_end: false }
    }

    /// Fills the buffer, then returns the text to lex: up to the last newline, or
    /// everything once the file has ended (then `true`: it is the last text). Empty when a
    /// line does not fit: call [`Chunks::grow`].
    pub fn next(&mut self) -> std::io::Result<(&[u8], bool)> {
        while self.filled < self.buf.len() && !self.at_end {
            match self.source.read(self.buf.get_mut(self.filled..).unwrap_or(&mut [])) {
                Ok(0) => self.at_end = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
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

    /// Doubles the buffer, for an entry that does not fit in it.
    pub fn grow(&mut self) {
        self.buf.resize(self.buf.len() * 2, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_until_the_last() {
        // Reads end where the parts of a chain end: "ab", "\ncd", "\nef".
        let source = (&b"ab"[..]).chain(&b"\ncd"[..]).chain(&b"\nef"[..]);
        let mut chunks = Chunks::new(source, 5);
        assert_eq!(chunks.next().unwrap(), (&b"ab\n"[..], false));
        chunks.consume(3);
        assert_eq!(chunks.next().unwrap(), (&b"cd\n"[..], false));
        chunks.consume(3);
        assert_eq!(chunks.next().unwrap(), (&b"ef"[..], true));
    }

    #[test]
    fn a_long_line_needs_a_bigger_buffer() {
        let source = (&b"abc"[..]).chain(&b"defgh\nx\n"[..]);
        let mut chunks = Chunks::new(source, 4);
        assert_eq!(chunks.next().unwrap(), (&b""[..], false));
        chunks.grow();
        chunks.grow();
        assert_eq!(chunks.next().unwrap(), (&b"abcdefgh\nx\n"[..], true));
    }

    #[test]
    fn unread_text_is_kept() {
        let mut chunks = Chunks::new(&b"a (\nb )\n"[..], 4);
        assert_eq!(chunks.next().unwrap(), (&b"a (\n"[..], false));
        chunks.consume(0);
        chunks.grow();
        assert_eq!(chunks.next().unwrap(), (&b"a (\nb )\n"[..], false));
    }
}
