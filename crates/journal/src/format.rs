//! The journal's bytes: a header, then one frame per changeset.
//!
//! ```text
//! header   "TERNJRNL" (8 bytes), version u32 = 1, reserved u32 = 0      (16 bytes)
//! frame    length u32 (of the payload), crc32 u32 (IEEE, of the payload), payload
//! payload  from-SOA record, to-SOA record,
//!          removed count u32, records, added count u32, records
//! record   owner (uncompressed wire name), type u16, TTL u32, RDLENGTH u16, RDATA
//! ```
//!
//! All integers are big-endian. A frame is written in one `write` and synced; a crash
//! can leave the last frame short or with a wrong checksum, which reading finds and
//! reports as the place to cut ([`Decoded::valid_len`]).
//!
//! After the last frame the file may hold zeros, to its end: space written ahead, so
//! that appending overwrites it and leaves the file's size and block map alone
//! (`fdatasync` then has neither to write). Eight or more zeros to the end are that
//! space ([`Decoded::spare`]): a frame never starts with eight zero bytes (its payload
//! holds two SOA records). Fewer, or zeros followed by anything else, are damage.
//!
//! Reading is bounded: a frame longer than [`MAX_FRAME`] is damage, every name and RDATA is checked as a message's
//! would be, and nothing is trusted before its checksum matched.

use tern_wire::{rdata, Dname, Rtype};
use tern_zone::{Changeset, RecordData};

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"TERNJRNL";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Bytes of the header.
pub const HEADER_LEN: usize = 16;
/// Largest payload a frame may carry (a changeset of some 256 MiB).
pub const MAX_FRAME: usize = 256 << 20;

/// The header of a new journal.
pub fn header() -> [u8; HEADER_LEN] {
    let mut out = [0u8; HEADER_LEN];
    for (dst, src) in out.iter_mut().zip(MAGIC.iter().chain(&VERSION.to_be_bytes())) {
        *dst = *src;
    }
    out
}

/// Appends the frame of `change` (which must have both SOAs) to `out`.
pub fn encode(change: &Changeset, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let (Some(from), Some(to)) = (&change.soa_from, &change.soa_to) else {
        return Err("a journaled changeset needs its from- and to-SOA");
    };
    let start = out.len();
    out.extend_from_slice(&[0; 8]);
    record(from, out)?;
    record(to, out)?;
    for list in [&change.removed, &change.added] {
        let count = u32::try_from(list.len()).map_err(|_| "too many records")?;
        out.extend_from_slice(&count.to_be_bytes());
        for r in list {
            record(r, out)?;
        }
    }
    let payload = out.get(start + 8..).unwrap_or(&[]);
    let len = u32::try_from(payload.len()).ok().filter(|&l| l as usize <= MAX_FRAME);
    let len = len.ok_or("changeset too large for one journal frame")?;
    let crc = crc32fast::hash(payload);
    let [a, b, c, d] = len.to_be_bytes();
    let [e, f, g, h] = crc.to_be_bytes();
    if let Some(slot) = out.get_mut(start..start + 8) {
        slot.copy_from_slice(&[a, b, c, d, e, f, g, h]);
    }
    Ok(())
}

fn record(r: &RecordData, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let len = u16::try_from(r.rdata.len()).map_err(|_| "RDATA longer than 65535 bytes")?;
    out.extend_from_slice(r.owner.as_wire());
    out.extend_from_slice(&r.rtype.0.to_be_bytes());
    out.extend_from_slice(&r.ttl.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&r.rdata);
    Ok(())
}

/// What reading a journal's bytes found.
#[derive(Debug, Default)]
pub struct Decoded {
    /// The changesets of the whole, intact frames before any damage, in order.
    pub changes: Vec<Changeset>,
    /// Bytes from the start of the file to the end of the last intact frame before any
    /// damage: where to cut a torn tail.
    pub valid_len: usize,
    /// Why reading stopped before the end, when it did (a torn or damaged frame).
    pub damage: Option<String>,
    /// The damage is a torn tail: the last write, cut short by a crash (nothing but
    /// zeros, or nothing, after the damaged frame). A torn frame was never synced, so
    /// never acknowledged: cutting it loses nothing anyone was told of. Damage that is
    /// not torn (intact frames or other bytes after it: a flipped bit, a bad block) is
    /// corruption, and what follows it must not be cut away.
    pub torn: bool,
    /// Intact frames found after a damaged one that is not a torn tail, in order: they
    /// cannot be applied (a change before them is lost), but they tell which serials
    /// were served.
    pub later: Vec<Changeset>,
    /// Bytes of zeros after the last frame, to the end (space written ahead).
    pub spare: usize,
}

/// Reads a whole journal file's bytes. A bad header is an error (this is not a journal);
/// a damaged frame ends the intact part, reported in [`Decoded::damage`]: a torn tail
/// ends the reading, other damage is skipped when an intact frame can be found after it
/// (`resync`), whose frames go to [`Decoded::later`].
pub fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let header = bytes.get(..HEADER_LEN).ok_or("shorter than a journal header")?;
    if header.get(..8) != Some(&MAGIC[..]) {
        return Err("not a Tern journal (bad magic)".into());
    }
    let version = header.get(8..12).and_then(|v| v.try_into().ok()).map(u32::from_be_bytes);
    if version != Some(VERSION) {
        return Err(format!("journal format version {version:?}, this ternd reads {VERSION}"));
    }
    let mut decoded = Decoded { valid_len: HEADER_LEN, ..Decoded::default() };
    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let rest = bytes.get(at..).unwrap_or_default();
        // (A frame's header is not zero: the scan stops within its first 8 bytes.)
        if rest.len() >= 8 && rest.iter().all(|&b| b == 0) {
            decoded.spare = rest.len();
            break;
        }
        match frame(bytes, at) {
            Ok((change, next)) if decoded.damage.is_none() => {
                decoded.changes.push(change);
                decoded.valid_len = next;
                at = next;
            }
            Ok((change, next)) => {
                decoded.later.push(change);
                at = next;
            }
            Err(why) => {
                if decoded.damage.is_none() {
                    decoded.damage = Some(format!("at byte {at}: {why}"));
                    decoded.torn = true;
                }
                match resync(bytes, at) {
                    Some(next) => {
                        decoded.torn = false;
                        at = next;
                    }
                    None => {
                        decoded.torn &= torn_tail(bytes, at);
                        break;
                    }
                }
            }
        }
    }
    Ok(decoded)
}

/// Positions after a damaged frame at which an intact one is looked for.
const RESYNC_WINDOW: usize = 1 << 20;

/// Payload bytes checksummed at most while looking for an intact frame.
const RESYNC_BUDGET: usize = 64 << 20;

/// The smallest payload: two SOA records with root names and two counts.
const MIN_PAYLOAD: usize = 2 * (1 + 2 + 4 + 2 + 22) + 8;

/// Where the next intact frame after a damaged one at `at` starts: first where the
/// damaged frame's own length says (a flipped bit in a payload leaves the length
/// alone), else the first position within [`RESYNC_WINDOW`] where a whole frame with
/// its checksum is found (bounded by [`RESYNC_BUDGET`]). `None` when there is none.
fn resync(bytes: &[u8], at: usize) -> Option<usize> {
    if let Some(next) = declared_end(bytes, at).filter(|&n| n < bytes.len()) {
        if frame(bytes, next).is_ok() {
            return Some(next);
        }
    }
    let end = bytes.len().min(at.saturating_add(RESYNC_WINDOW));
    let mut budget = RESYNC_BUDGET;
    for p in at + 1..end {
        let Some(len) = frame_len(bytes, p) else { break };
        if len < MIN_PAYLOAD || len > budget || p + 8 + len > bytes.len() {
            continue;
        }
        budget -= len;
        if frame(bytes, p).is_ok() {
            return Some(p);
        }
    }
    None
}

/// The payload length in the frame header at `at`, when 8 bytes are there.
fn frame_len(bytes: &[u8], at: usize) -> Option<usize> {
    let head = bytes.get(at..at + 4)?;
    bytes.get(at + 4..at + 8)?;
    Some(u32::from_be_bytes(head.try_into().ok()?) as usize)
}

/// Where the frame at `at` ends by its header (`None` when the header is cut short or
/// the length is beyond the limit).
fn declared_end(bytes: &[u8], at: usize) -> Option<usize> {
    let len = frame_len(bytes, at).filter(|&len| len <= MAX_FRAME)?;
    Some(at + 8 + len)
}

/// True when the damaged frame at `at` is a torn last write: its header or payload runs
/// past the end, or only zeros follow where it ends (written ahead).
fn torn_tail(bytes: &[u8], at: usize) -> bool {
    match declared_end(bytes, at) {
        None => frame_len(bytes, at).is_none() || bytes.get(at + 8..).is_none_or(zeros),
        Some(end) => bytes.get(end..).is_none_or(zeros),
    }
}

fn zeros(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// One frame at `at`: the changeset and where the next frame starts.
fn frame(bytes: &[u8], at: usize) -> Result<(Changeset, usize), &'static str> {
    let head: [u8; 8] = bytes
        .get(at..at + 8)
        .and_then(|h| h.try_into().ok())
        .ok_or("the frame header is cut short")?;
    let [a, b, c, d, e, f, g, h] = head;
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    let crc = u32::from_be_bytes([e, f, g, h]);
    if len > MAX_FRAME {
        return Err("frame longer than the limit");
    }
    let payload = bytes.get(at + 8..at + 8 + len).ok_or("the frame is cut short")?;
    if crc32fast::hash(payload) != crc {
        return Err("checksum mismatch");
    }
    let mut reader = Reader { bytes: payload, at: 0 };
    let change = reader.changeset()?;
    if reader.at != payload.len() {
        return Err("bytes left over in the frame");
    }
    Ok((change, at + 8 + len))
}

/// A bounds-checked reader over one payload.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], &'static str> {
        let out = self.bytes.get(self.at..self.at + n).ok_or("the changeset is cut short")?;
        self.at += n;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16, &'static str> {
        let b = self.take(2)?.try_into().map_err(|_| "the changeset is cut short")?;
        Ok(u16::from_be_bytes(b))
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        let b = self.take(4)?.try_into().map_err(|_| "the changeset is cut short")?;
        Ok(u32::from_be_bytes(b))
    }

    fn record(&mut self) -> Result<RecordData, &'static str> {
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        let (owner, len) = Dname::from_wire_prefix(rest).map_err(|_| "a bad owner name")?;
        let owner = owner.to_name();
        self.at += len;
        let rtype = Rtype(self.u16()?);
        let ttl = self.u32()?;
        let rdlength = usize::from(self.u16()?);
        let data = self.take(rdlength)?.to_vec();
        if rtype.is_meta() || rdata::validate(rtype, &data).is_err() {
            return Err("a record with bad RDATA");
        }
        Ok(RecordData { owner, rtype, ttl, rdata: data })
    }

    fn list(&mut self) -> Result<Vec<RecordData>, &'static str> {
        let count = self.u32()? as usize;
        // Each record takes at least 11 bytes: never reserve more than could fit.
        let mut list = Vec::with_capacity(count.min(self.bytes.len() / 11));
        for _ in 0..count {
            list.push(self.record()?);
        }
        Ok(list)
    }

    fn changeset(&mut self) -> Result<Changeset, &'static str> {
        let from = self.record()?;
        let to = self.record()?;
        if from.soa_serial().is_none() || to.soa_serial().is_none() {
            return Err("a changeset without its SOAs");
        }
        let removed = self.list()?;
        let added = self.list()?;
        Ok(Changeset { soa_from: Some(from), soa_to: Some(to), removed, added })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    pub(crate) fn soa(serial: u32) -> RecordData {
        let text = format!("ns.example. h.example. {serial} 60 60 600 60");
        let rdata = rdata::parse_str(Rtype::SOA, &text, None).unwrap();
        RecordData { owner: "example.".parse().unwrap(), rtype: Rtype::SOA, ttl: 60, rdata }
    }

    pub(crate) fn change(from: u32) -> Changeset {
        let a = |ip: &str| RecordData {
            owner: "www.example.".parse::<Name>().unwrap(),
            rtype: Rtype::A,
            ttl: 300,
            rdata: rdata::parse_str(Rtype::A, ip, None).unwrap(),
        };
        Changeset {
            removed: vec![a("192.0.2.1")],
            added: vec![a("192.0.2.2"), a("192.0.2.3")],
            ..Changeset::between(soa(from), soa(from + 1))
        }
    }

    #[test]
    fn frames_round_trip() {
        let mut bytes = header().to_vec();
        for serial in 1..4 {
            encode(&change(serial), &mut bytes).unwrap();
        }
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded.changes, vec![change(1), change(2), change(3)]);
        assert_eq!((decoded.valid_len, decoded.damage), (bytes.len(), None));
    }

    #[test]
    fn a_torn_or_damaged_tail_is_found_and_the_whole_frames_kept() {
        let mut bytes = header().to_vec();
        encode(&change(1), &mut bytes).unwrap();
        let one = bytes.len();
        encode(&change(2), &mut bytes).unwrap();
        for cut in one + 1..bytes.len() {
            let decoded = decode(&bytes[..cut]).unwrap();
            assert_eq!(decoded.changes, vec![change(1)], "cut at {cut}");
            assert_eq!(decoded.valid_len, one);
            assert!(decoded.damage.is_some() && decoded.torn, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[one + 20] ^= 1;
        let decoded = decode(&flipped).unwrap();
        assert_eq!((decoded.changes.len(), decoded.valid_len), (1, one));
        assert!(decoded.damage.unwrap().contains("checksum"));
    }

    /// Eight or more zeros to the end are space written ahead; fewer, or zeros and then
    /// other bytes, are damage.
    #[test]
    fn zeros_after_the_frames_are_spare_space() {
        let mut bytes = header().to_vec();
        encode(&change(1), &mut bytes).unwrap();
        let one = bytes.len();
        for zeros in [8, 9, 4096] {
            let padded = [&bytes[..], &vec![0; zeros]].concat();
            let decoded = decode(&padded).unwrap();
            assert_eq!(decoded.changes, vec![change(1)]);
            assert_eq!((decoded.valid_len, decoded.spare, decoded.damage), (one, zeros, None));
        }
        let short = [&bytes[..], &[0; 7]].concat();
        assert!(decode(&short).unwrap().damage.is_some());
        let mut junk = [&bytes[..], &[0; 100]].concat();
        junk[one + 50] = 1;
        let decoded = decode(&junk).unwrap();
        assert_eq!((decoded.changes.len(), decoded.valid_len, decoded.spare), (1, one, 0));
        assert!(decoded.damage.is_some() && !decoded.torn, "not a torn write: other bytes follow");
    }

    /// A flipped bit inside the journal (not in its last frame) is corruption, not a
    /// torn tail: the frames after it are found, by the damaged frame's length or, when
    /// the length itself is hit, by looking for the next intact frame.
    #[test]
    fn damage_before_intact_frames_is_corruption_and_they_are_found() {
        let mut bytes = header().to_vec();
        let mut starts = Vec::new();
        for serial in 1..5 {
            starts.push(bytes.len());
            encode(&change(serial), &mut bytes).unwrap();
        }
        for (at, what) in [(starts[0] + 30, "payload"), (starts[0] + 1, "length")] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            let decoded = decode(&flipped).unwrap();
            assert!(decoded.changes.is_empty(), "{what}");
            assert_eq!(decoded.valid_len, HEADER_LEN, "{what}");
            assert!(!decoded.torn, "{what}");
            assert_eq!(decoded.later, vec![change(2), change(3), change(4)], "{what}");
        }
        let mut second = bytes.clone();
        second[starts[1] + 30] ^= 1;
        let decoded = decode(&second).unwrap();
        assert_eq!(decoded.changes, vec![change(1)]);
        assert_eq!((decoded.valid_len, decoded.torn), (starts[1], false));
        assert_eq!(decoded.later, vec![change(3), change(4)]);
        let mut last = bytes.clone();
        last[starts[3] + 30] ^= 1;
        let padded = [&last[..], &[0; 4096]].concat();
        for tail in [&last[..], &padded[..]] {
            let decoded = decode(tail).unwrap();
            assert_eq!(decoded.changes.len(), 3);
            assert!(decoded.torn && decoded.later.is_empty(), "the last write: torn");
        }
    }

    #[test]
    fn not_a_journal() {
        assert!(decode(b"short").is_err());
        assert!(decode(&[0u8; 16]).is_err());
        let mut other = header();
        other[11] = 9;
        assert!(decode(&other).unwrap_err().contains("version"));
        assert!(encode(&Changeset::default(), &mut Vec::new()).is_err(), "no SOAs");
    }
}
