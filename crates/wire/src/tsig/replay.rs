//! The signatures of requests accepted lately, so that a signed request captured on the
//! wire and sent again inside its time window is told from a new one.
//!
//! TSIG stops a request from being forged or changed, not from being sent twice:
//! RFC 8945 §5.2.3 only suggests remembering the latest Time Signed of each key and
//! answering BADTIME to an earlier one, which refuses two clients sharing a key whose
//! requests cross on the way, and lets through a copy sent within the same second. So
//! each key remembers the signatures themselves instead — Time Signed and the first
//! eight bytes of the MAC, which covers the whole message and its time (RFC 8945 §4.3):
//! a copy has both, with its ID changed or its MAC truncated (§5.2.2.1) alike, and no
//! other request of the key can be made to match without the key. A signature is kept
//! until its window ends (Time Signed plus the fudge allowed).
//!
//! Memory is bounded: a key keeps at most [`PER_KEY`] signatures (some 3 MB when full).
//! Past that its oldest is forgotten, and every request signed no later than a signature
//! forgotten inside its window is refused as one that may be a copy
//! ([`Seen::Forgotten`]): no copy is ever taken for new. A client signing with the
//! current time loses nothing unless its key signs more than [`PER_KEY`] requests in
//! the time its clock is behind.
//!
//! Nothing here reads a clock or takes a lock: the caller passes the time, and keeps the
//! state behind its own lock, taken for the requests it checks (signed UPDATEs).

use std::collections::{HashMap, HashSet, VecDeque};

use crate::name::{Dname, Name};

/// Signatures a key remembers at most.
pub const PER_KEY: usize = 65_536;

/// What [`Replays::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Not seen inside its window: remembered now.
    New,
    /// The same signature was accepted before, inside its window: a copy.
    Replayed,
    /// Signed no later than a signature the key had to forget inside its window: it may
    /// be a copy of that one.
    Forgotten,
}

/// The signatures each key made lately (see the module comment).
#[derive(Debug)]
pub struct Replays {
    keys: HashMap<Name, KeySeen>,
    per_key: usize,
}

impl Default for Replays {
    fn default() -> Replays {
        Replays::new(PER_KEY)
    }
}

/// One signature: Time Signed and the MAC's first eight bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Signature {
    time_signed: u64,
    mac: [u8; 8],
}

/// One key's signatures.
#[derive(Debug, Default)]
struct KeySeen {
    /// In the order they came, each with the last second of its window.
    order: VecDeque<(Signature, u64)>,
    signatures: HashSet<Signature>,
    /// The latest Time Signed of a signature forgotten inside its window.
    floor: u64,
    /// The last second of the windows of the signatures forgotten.
    floor_until: u64,
}

impl Replays {
    /// Remembering up to `per_key` signatures a key (at least one).
    pub fn new(per_key: usize) -> Replays {
        Replays { keys: HashMap::new(), per_key: per_key.max(1) }
    }

    /// Checks the signature of a request signed with `key` (verified) at `time_signed`,
    /// accepted for `window` seconds either side (its fudge, as capped), with `mac`, at
    /// `now`; remembers it when new.
    pub fn check(
        &mut self,
        key: &Dname,
        time_signed: u64,
        window: u16,
        mac: &[u8],
        now: u64,
    ) -> Seen {
        let mut prefix = [0u8; 8];
        let len = mac.len().min(8);
        if let (Some(to), Some(from)) = (prefix.get_mut(..len), mac.get(..len)) {
            to.copy_from_slice(from);
        }
        let signature = Signature { time_signed, mac: prefix };
        let until = time_signed.saturating_add(u64::from(window));
        if !self.keys.contains_key(key) {
            self.keys.insert(key.to_name(), KeySeen::default());
        }
        match self.keys.get_mut(key) {
            Some(seen) => seen.check(signature, until, now, self.per_key),
            None => Seen::New,
        }
    }

    /// Signatures remembered for `key`.
    pub fn remembered(&self, key: &Dname) -> usize {
        self.keys.get(key).map_or(0, |seen| seen.order.len())
    }
}

impl KeySeen {
    fn check(&mut self, signature: Signature, until: u64, now: u64, per_key: usize) -> Seen {
        self.expire(now);
        if now <= self.floor_until && signature.time_signed <= self.floor {
            return Seen::Forgotten;
        }
        if self.signatures.contains(&signature) {
            return Seen::Replayed;
        }
        while self.order.len() >= per_key {
            self.forget_oldest(now);
        }
        self.order.push_back((signature, until));
        self.signatures.insert(signature);
        Seen::New
    }

    /// Drops the signatures whose window has ended, oldest first.
    fn expire(&mut self, now: u64) {
        while let Some(&(signature, until)) = self.order.front() {
            if until >= now {
                break;
            }
            self.order.pop_front();
            self.signatures.remove(&signature);
        }
        if self.floor_until < now {
            (self.floor, self.floor_until) = (0, 0);
        }
    }

    /// Forgets the oldest signature, still inside its window: what was signed no later
    /// than it is refused from now on, until its window ends.
    fn forget_oldest(&mut self, now: u64) {
        let Some((signature, until)) = self.order.pop_front() else { return };
        self.signatures.remove(&signature);
        if until >= now {
            self.floor = self.floor.max(signature.time_signed);
            self.floor_until = self.floor_until.max(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Name {
        name.parse().unwrap()
    }

    #[test]
    fn a_copy_is_told_inside_its_window_and_forgotten_after() {
        let mut seen = Replays::default();
        let k = key("k.example.");
        assert_eq!(seen.check(&k, 1000, 300, &[1; 32], 1001), Seen::New);
        assert_eq!(seen.check(&k, 1000, 300, &[1; 32], 1200), Seen::Replayed);
        assert_eq!(seen.check(&k, 1000, 300, &[1; 16], 1200), Seen::Replayed, "truncated");
        let upper = key("K.Example.");
        assert_eq!(seen.check(&upper, 1000, 300, &[1; 32], 1200), Seen::Replayed, "any case");
        assert_eq!(seen.check(&k, 1000, 300, &[2; 32], 1200), Seen::New, "another request");
        assert_eq!(seen.check(&k, 1001, 300, &[1; 32], 1200), Seen::New, "another time");
        assert_eq!(seen.check(&key("other."), 1000, 300, &[1; 32], 1200), Seen::New);
        assert_eq!(seen.remembered(&k), 3);
        // Past the window (which verification refuses anyway), the signature is dropped.
        assert_eq!(seen.check(&k, 1400, 300, &[3; 32], 1301), Seen::New);
        assert_eq!(seen.remembered(&k), 2, "the two of 1000 dropped, 1001's kept");
    }

    /// A full key forgets its oldest signature, and then refuses whatever was signed no
    /// later than it while its window lasts; later signatures are taken as before.
    #[test]
    fn a_full_key_refuses_what_it_may_have_forgotten() {
        let mut seen = Replays::new(4);
        let k = key("k.");
        for (n, time) in (100..104).enumerate() {
            assert_eq!(seen.check(&k, time, 300, &[n as u8; 32], 104), Seen::New);
        }
        assert_eq!(seen.check(&k, 104, 300, &[9; 32], 104), Seen::New);
        assert_eq!(seen.remembered(&k), 4);
        assert_eq!(seen.check(&k, 100, 300, &[0; 32], 105), Seen::Forgotten, "the copy");
        assert_eq!(seen.check(&k, 99, 300, &[7; 32], 105), Seen::Forgotten);
        assert_eq!(seen.check(&k, 101, 300, &[1; 32], 105), Seen::Replayed);
        assert_eq!(seen.check(&k, 105, 300, &[8; 32], 105), Seen::New);
        // Once the forgotten window has ended, so has the floor.
        assert_eq!(seen.check(&k, 403, 300, &[6; 32], 403), Seen::New);
        assert_eq!(seen.check(&k, 100, 300, &[5; 32], 403), Seen::New, "BADTIME before this");
    }
}
