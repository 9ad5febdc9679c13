//! What the policy engine knows of each key: its identity and its RFC 7583 §2 timings
//! (seconds since the epoch, each set once when the step happens), and where its DS
//! stands at the parent; and, from these, the keys a zone is signed with at a moment.

use crate::algorithm::Algorithm;
use crate::key::KeyRole;

/// Where a key's DS stands at the parent, as the child knows it (RFC 7344: the child
/// lists the DS it wants in CDS/CDNSKEY; the parent's servers are queried to see it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DsState {
    /// Not asked for.
    #[default]
    None,
    /// Listed in CDS/CDNSKEY since `at`; not yet seen at the parent.
    Submitted {
        /// When it was first listed.
        at: u64,
    },
    /// Seen in the parent's DS RRset at `at` (or declared so by an operator).
    Seen {
        /// When.
        at: u64,
    },
    /// No longer listed in CDS/CDNSKEY since `at`; maybe still at the parent.
    Withdrawn {
        /// When it was withdrawn.
        at: u64,
    },
    /// Seen gone from the parent's DS RRset at `at`.
    Gone {
        /// When.
        at: u64,
    },
}

impl DsState {
    /// True when the CDS/CDNSKEY RRsets list the key.
    pub fn listed(self) -> bool {
        matches!(self, DsState::Submitted { .. } | DsState::Seen { .. })
    }
}

/// One key of a zone, as the policy engine sees it. Timings are `None` until the step
/// happens: `published` (its DNSKEY enters the DNSKEY RRset), `ready` (every cache
/// that holds the DNSKEY RRset holds it), `active` (it signs), `retired` (it no longer
/// signs), `removed` (its DNSKEY leaves the RRset). In an algorithm rollover a new key
/// signs before its DNSKEY is published and an old one after its DNSKEY is removed
/// (RFC 6781 §4.1.4), so the order of the timings is not always the one listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key's number in its zone's key store (unique there; key tags may collide).
    pub id: u32,
    /// Its key tag (RFC 4034 Appendix B).
    pub tag: u16,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// Its role.
    pub role: KeyRole,
    /// When it was made (or imported).
    pub created: u64,
    /// Its DNSKEY entered the DNSKEY RRset.
    pub published: Option<u64>,
    /// Its DNSKEY is in every cache (RFC 7583 Trdy).
    pub ready: Option<u64>,
    /// It began to sign.
    pub active: Option<u64>,
    /// It stopped signing.
    pub retired: Option<u64>,
    /// Its DNSKEY left the DNSKEY RRset.
    pub removed: Option<u64>,
    /// Its DS at the parent.
    pub ds: DsState,
}

impl KeyInfo {
    /// A key made at `created`, not yet published nor signing.
    pub fn new(id: u32, tag: u16, algorithm: Algorithm, role: KeyRole, created: u64) -> KeyInfo {
        KeyInfo {
            id,
            tag,
            algorithm,
            role,
            created,
            published: None,
            ready: None,
            active: None,
            retired: None,
            removed: None,
            ds: DsState::None,
        }
    }

    /// True when its DNSKEY is in the DNSKEY RRset at `_now`: published and not
    /// removed. A step recorded after now (the clock set back since) stays taken.
    pub fn is_published(&self, _now: u64) -> bool {
        taken_not_undone(self.published, self.removed)
    }

    /// True when it signs at `_now`: activated and not retired.
    pub fn is_active(&self, _now: u64) -> bool {
        taken_not_undone(self.active, self.retired)
    }

    /// Records what the parent's DS RRset showed at `now`: the key's DS `present` or
    /// not (a query to the parent's servers, or `ternctl zone-ksk-submitted`). Only a
    /// change of what the child expects is recorded: a submitted DS becomes seen, a
    /// withdrawn one gone.
    pub fn observe_ds(&mut self, present: bool, now: u64) {
        self.ds = match (self.ds, present) {
            (DsState::Submitted { .. }, true) => DsState::Seen { at: now },
            (DsState::Withdrawn { .. }, false) => DsState::Gone { at: now },
            (state, _) => state,
        };
    }
}

/// True when the step `from` was taken and `until` was not. A timing is recorded when
/// its step is taken, so one after now means the clock was set back since: the step
/// stays taken (a DNSKEY withdrawn, or its signatures dropped, because the clock went
/// back would break the chain of trust — issue #51's "a clock jump backwards").
fn taken_not_undone(from: Option<u64>, until: Option<u64>) -> bool {
    from.is_some() && until.is_none()
}

/// The RDATA of the CDS delete form, `0 0 0 00` (RFC 8078 §4).
pub const CDS_DELETE: [u8; 5] = [0, 0, 0, 0, 0];

/// The RDATA of the CDNSKEY delete form, `0 3 0 AA==` (RFC 8078 §4).
pub const CDNSKEY_DELETE: [u8; 5] = [0, 0, 3, 0, 0];

/// The CDS and CDNSKEY RRsets a zone publishes (RFC 7344 §4; RFC 8078 §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cds {
    /// None.
    Absent,
    /// The DS the parent should have: one CDS (SHA-256) and one CDNSKEY per key id.
    Keys(Vec<u32>),
    /// The delete form ([`CDS_DELETE`], [`CDNSKEY_DELETE`]): remove the DS.
    Delete,
}

/// The keys a zone is signed with at a moment (ids from [`KeyInfo::id`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySets {
    /// The keys whose DNSKEY is in the DNSKEY RRset.
    pub dnskey: Vec<u32>,
    /// The keys that sign the DNSKEY, CDS and CDNSKEY RRsets.
    pub sign_keys: Vec<u32>,
    /// The keys that sign every other RRset.
    pub sign_zone: Vec<u32>,
    /// The CDS and CDNSKEY RRsets' content.
    pub cds: Cds,
}

impl KeySets {
    /// True when the zone is signed at all.
    pub fn is_signed(&self) -> bool {
        !self.sign_zone.is_empty()
    }
}

/// The keys the zone is signed with at `now` (see [`KeySets`]). While signing is being
/// turned off ([`Policy::signed`](super::Policy::signed) false) and keys are still
/// published, the CDS and CDNSKEY take their delete form.
pub fn key_sets(policy: &super::Policy, keys: &[KeyInfo], now: u64) -> KeySets {
    let ids = |f: &dyn Fn(&KeyInfo) -> bool| keys.iter().filter(|k| f(k)).map(|k| k.id).collect();
    let dnskey: Vec<u32> = ids(&|k| k.is_published(now));
    let cds = if !policy.signed && !dnskey.is_empty() {
        Cds::Delete
    } else {
        let listed: Vec<u32> = ids(&|k| k.role.signs_keys() && k.ds.listed());
        if listed.is_empty() {
            Cds::Absent
        } else {
            Cds::Keys(listed)
        }
    };
    KeySets {
        dnskey,
        sign_keys: ids(&|k| k.role.signs_keys() && k.is_active(now)),
        sign_zone: ids(&|k| k.role.signs_zone() && k.is_active(now)),
        cds,
    }
}
