//! A naive quadratic name compressor, the yardstick for the linear one: for each suffix,
//! longest first, it decodes every name position written so far and compares. Shared by
//! the round-trip tests (same output size) and the compression benchmark.

use tern_wire::message::read_name;
use tern_wire::Dname;

/// Writes names one after another into a message body, compressing against everything
/// written before.
pub struct NaiveCompressor {
    pub msg: Vec<u8>,
    targets: Vec<usize>,
}

impl NaiveCompressor {
    /// Starts after a 12-byte header.
    pub fn new() -> Self {
        NaiveCompressor { msg: vec![0; 12], targets: Vec::new() }
    }

    /// Starts with existing message bytes (no known targets).
    pub fn clear(&mut self) {
        self.msg.truncate(12);
        self.targets.clear();
    }

    /// Appends raw bytes (not compression targets).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.msg.extend_from_slice(bytes);
    }

    /// Appends `name`, pointing to the longest suffix found anywhere before.
    pub fn write_name(&mut self, name: &Dname) {
        let wire = name.as_wire();
        let offsets = name.label_offsets();
        let start = self.msg.len();
        for (i, &off) in offsets.as_slice().iter().enumerate() {
            let suffix = Dname::from_wire(&wire[usize::from(off)..]).unwrap();
            if let Some(&target) = self
                .targets
                .iter()
                .find(|&&t| read_name(&self.msg, t).is_ok_and(|(n, _)| n.eq_ignore_case(suffix)))
            {
                self.msg.extend_from_slice(&wire[..usize::from(off)]);
                self.msg.extend_from_slice(&(0xC000 | target as u16).to_be_bytes());
                self.remember(start, &offsets.as_slice()[..i]);
                return;
            }
        }
        self.msg.extend_from_slice(wire);
        self.remember(start, offsets.as_slice());
    }

    fn remember(&mut self, start: usize, offsets: &[u8]) {
        for &off in offsets {
            let at = start + usize::from(off);
            if at < 0x4000 {
                self.targets.push(at);
            }
        }
    }
}
