//! DNS over TCP framing (RFC 1035 §4.2.2, RFC 7766 §8): each message is preceded by its
//! length as two bytes in network order.
//!
//! [`FrameBuffer`] collects the bytes read from a connection and hands out complete
//! messages; it grows only when a message longer than its current size arrives (at most
//! 2 + 65535 bytes) and moves a partial message to the front instead of growing otherwise.

/// Initial buffer size: many small pipelined queries fit.
const INITIAL: usize = 4096;
/// The largest frame: a length prefix and a 65535-byte message.
pub const MAX_FRAME: usize = 2 + 65535;

/// Bytes read from a connection and not yet handed out as messages.
#[derive(Debug)]
pub struct FrameBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for FrameBuffer {
    fn default() -> Self {
        FrameBuffer { buf: vec![0; INITIAL], start: 0, end: 0 }
    }
}

impl FrameBuffer {
    /// Whether there are no buffered bytes (no partial message).
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether a complete message is buffered.
    pub fn has_message(&self) -> bool {
        match self.buf.get(self.start..self.end) {
            Some([hi, lo, rest @ ..]) => rest.len() >= usize::from(u16::from_be_bytes([*hi, *lo])),
            _ => false,
        }
    }

    /// Space to read into, made large enough for the message being received. Call it
    /// after taking every complete message: then the space is never empty.
    pub fn spare(&mut self) -> &mut [u8] {
        let pending = self.buf.get(self.start..self.end).unwrap_or_default();
        let needed = match pending {
            [hi, lo, ..] => 2 + usize::from(u16::from_be_bytes([*hi, *lo])),
            _ => 2,
        };
        if self.start + needed > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if needed > self.buf.len() {
                self.buf.resize(needed.min(MAX_FRAME), 0);
            }
        }
        self.buf.get_mut(self.end..).unwrap_or_default()
    }

    /// Records that `n` bytes were read into [`spare`](FrameBuffer::spare).
    pub fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }

    /// The next complete message, if one has arrived.
    pub fn next_message(&mut self) -> Option<&[u8]> {
        let pending = self.buf.get(self.start..self.end)?;
        let (len, rest) = match pending {
            [hi, lo, rest @ ..] => (usize::from(u16::from_be_bytes([*hi, *lo])), rest),
            _ => return None,
        };
        let message = rest.get(..len)?;
        self.start += 2 + len;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` as reads of at most `chunk` bytes, taking complete messages after
    /// each read as a connection does.
    fn feed(frames: &mut FrameBuffer, mut bytes: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        let mut messages = Vec::new();
        while !bytes.is_empty() {
            let spare = frames.spare();
            let n = spare.len().min(bytes.len()).min(chunk);
            assert!(n > 0, "spare space must not be empty");
            spare[..n].copy_from_slice(&bytes[..n]);
            frames.filled(n);
            bytes = &bytes[n..];
            while frames.has_message() {
                let message = frames.next_message().unwrap();
                messages.push(message.to_vec());
            }
        }
        messages
    }

    #[test]
    fn pipelined_messages_come_out_in_order() {
        let mut frames = FrameBuffer::default();
        let got = feed(&mut frames, &[0, 3, b'a', b'b', b'c', 0, 0, 0, 1, b'z', 0], 64);
        assert_eq!(got, [b"abc".to_vec(), vec![], b"z".to_vec()]);
        assert!(!frames.is_empty(), "one byte of the next length");
        assert_eq!(feed(&mut frames, &[1, b'y'], 64), [b"y".to_vec()]);
        assert!(frames.is_empty());
    }

    #[test]
    fn largest_message_grows_the_buffer_once() {
        let mut frames = FrameBuffer::default();
        let mut wire = vec![0xff, 0xff];
        wire.extend((0..65535u32).map(|i| i as u8));
        wire.extend([0, 1, 7]);
        let got = feed(&mut frames, &wire, 1000);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), 65535);
        assert_eq!(got[0][65534], (65534u32 % 256) as u8);
        assert_eq!(got[1], [7]);
        assert_eq!(frames.buf.len(), MAX_FRAME);
    }

    #[test]
    fn partial_message_moves_to_the_front() {
        let mut frames = FrameBuffer::default();
        let mut wire = vec![0x0f, 0x00];
        wire.extend([1u8; 0x0f00]);
        wire.extend([0x02, 0x00]);
        wire.extend([2u8; 0x200]);
        let got = feed(&mut frames, &wire, 4096);
        assert_eq!(got, [vec![1u8; 0x0f00], vec![2u8; 0x200]]);
        assert_eq!(frames.buf.len(), INITIAL, "compacted, not grown");
    }

    #[test]
    fn byte_by_byte() {
        let mut frames = FrameBuffer::default();
        let got = feed(&mut frames, &[0, 2, 9, 8, 0, 1, 7], 1);
        assert_eq!(got, [vec![9, 8], vec![7]]);
    }
}
