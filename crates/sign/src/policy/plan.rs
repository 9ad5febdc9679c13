//! The plan: the steps due now for a zone's keys, the time of the next one, and the
//! driver that carries them out ([`advance`]).

use super::config::Policy;
use super::state::{DsState, KeyInfo};
use crate::algorithm::Algorithm;
use crate::key::KeyRole;

/// One step of a key's life (ids from [`KeyInfo::id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Make a key of this role and algorithm (the caller does: [`advance`]).
    Generate {
        /// Its role.
        role: KeyRole,
        /// Its algorithm.
        algorithm: Algorithm,
    },
    /// Put its DNSKEY in the DNSKEY RRset.
    Publish(u32),
    /// Record that its DNSKEY is in every cache (RFC 7583 Trdy).
    Ready(u32),
    /// Sign with it.
    Activate(u32),
    /// Stop signing with it.
    Retire(u32),
    /// Take its DNSKEY out of the DNSKEY RRset.
    Remove(u32),
    /// List it in CDS/CDNSKEY: ask the parent for its DS (RFC 7344 §4).
    SubmitDs(u32),
    /// Stop listing it in CDS/CDNSKEY: ask the parent to remove its DS.
    WithdrawDs(u32),
    /// Waiting for the parent: query its servers until the key's DS is `present` (or
    /// gone), then record it with [`KeyInfo::observe_ds`]. Changes nothing by itself.
    AwaitParent {
        /// The key.
        id: u32,
        /// Whether its DS should be there.
        present: bool,
    },
    /// Forget the key: its private key may be deleted.
    Delete(u32),
}

/// What [`plan`](super::plan) found due.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The steps due now, in the order to take them.
    pub actions: Vec<Action>,
    /// When the next step falls due by the clock (`None`: nothing timed; the parent may
    /// still be awaited).
    pub next: Option<u64>,
}

/// What [`advance`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The steps taken, in order (none of them [`Action::AwaitParent`]).
    pub actions: Vec<Action>,
    /// The keys whose DS the parent is awaited for: (id, DS present).
    pub awaiting: Vec<(u32, bool)>,
    /// When to call [`advance`] again by the clock (sooner when the parent changes).
    pub next: Option<u64>,
}

impl Outcome {
    /// True when a step changed what is signed or published.
    pub fn changed(&self) -> bool {
        !self.actions.is_empty()
    }
}

/// Rounds of [`advance`] before it stops (each round's steps make the next ones due: a
/// generated key is published in the next round; four are the most seen).
const MAX_ROUNDS: usize = 8;

/// Takes every step due at `now`: plans, applies the steps (`generate` makes a key and
/// returns its [`KeyInfo`], created at `now`, for [`Action::Generate`]), and plans again
/// until nothing more is due. The caller then saves `keys`, signs with
/// [`key_sets`](super::key_sets), and calls again at [`Outcome::next`] or when the
/// parent's DS changes.
pub fn advance<E>(
    policy: &Policy,
    keys: &mut Vec<KeyInfo>,
    now: u64,
    mut generate: impl FnMut(KeyRole, Algorithm) -> Result<KeyInfo, E>,
) -> Result<Outcome, E> {
    let mut outcome = Outcome::default();
    for _ in 0..MAX_ROUNDS {
        let plan = super::plan(policy, keys, now);
        let awaiting = plan.actions.iter().filter_map(|a| match *a {
            Action::AwaitParent { id, present } => Some((id, present)),
            _ => None,
        });
        outcome.awaiting = awaiting.collect();
        outcome.next = plan.next;
        let steps: Vec<Action> =
            plan.actions.into_iter().filter(|a| !matches!(a, Action::AwaitParent { .. })).collect();
        if steps.is_empty() {
            return Ok(outcome);
        }
        for step in steps {
            match step {
                Action::Generate { role, algorithm } => keys.push(generate(role, algorithm)?),
                _ => apply(keys, &step, now),
            }
            outcome.actions.push(step);
        }
    }
    outcome.next = Some(now);
    Ok(outcome)
}

/// Records `action`, taken at `now`, in `keys` ([`Action::Generate`] and
/// [`Action::AwaitParent`] change nothing here; [`Action::Delete`] drops the key).
pub fn apply(keys: &mut Vec<KeyInfo>, action: &Action, now: u64) {
    let (id, change): (u32, fn(&mut KeyInfo, u64)) = match *action {
        Action::Generate { .. } | Action::AwaitParent { .. } => return,
        Action::Delete(id) => {
            keys.retain(|k| k.id != id);
            return;
        }
        Action::Publish(id) => (id, |k, now| set(&mut k.published, now)),
        Action::Ready(id) => (id, |k, now| set(&mut k.ready, now)),
        Action::Activate(id) => (id, |k, now| set(&mut k.active, now)),
        Action::Retire(id) => (id, |k, now| set(&mut k.retired, now)),
        Action::Remove(id) => (id, |k, now| set(&mut k.removed, now)),
        Action::SubmitDs(id) => (id, |k, now| k.ds = DsState::Submitted { at: now }),
        Action::WithdrawDs(id) => (id, |k, now| k.ds = DsState::Withdrawn { at: now }),
    };
    if let Some(key) = keys.iter_mut().find(|k| k.id == id) {
        change(key, now);
    }
}

/// Sets a timing once: the first time a step is taken is the one kept.
fn set(slot: &mut Option<u64>, now: u64) {
    slot.get_or_insert(now);
}
