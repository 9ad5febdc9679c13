//! The planner's rules: for a policy, the keys and `now`, the steps due and the time of
//! the next one. Each rule reads only the keys' recorded timings, so a restart at any
//! moment resumes a rollover where it was.
//!
//! * Signing an unsigned zone: the keys publish and sign at once (no DS, so no
//!   resolver validates yet); the DS is asked for once no cache holds the unsigned data
//!   or the absence of the DNSKEY RRset ([`Policy::initial_interval`]).
//! * ZSK: pre-publication (RFC 7583 §3.2.1).
//! * KSK: double-DS (RFC 7583 §3.3.2, RFC 6781 §4.1.2).
//! * CSK: the new key pre-published and its DS added at once; the switch when both are
//!   in every cache (RFC 7583 §3.4, combining §3.2.1 and §3.3.2).
//! * Another algorithm (or scheme): the conservative algorithm rollover of RFC 6781
//!   §4.1.4 — new signatures, then new DNSKEYs, then the DS, then old DNSKEYs out, then
//!   old signatures.
//! * Two keys of one role signing (an imported key beside the zone's own, whose DS the
//!   parent holds): the one added last signs on; the other retires by the same steps
//!   as a predecessor in a rollover, once the DS of the one signing is in every cache.
//! * Signing turned off: CDS/CDNSKEY delete (RFC 8078 §4), the keys removed once the DS
//!   is gone from the parent and from caches.

use super::config::Policy;
use super::plan::{Action, Plan};
use super::state::{DsState, KeyInfo};
use crate::key::KeyRole;

/// The steps due at `now` for `keys` under `policy`, and the time of the next one
/// (see the module docs). Apply them with [`apply`](super::apply) (or let
/// [`advance`](super::advance) do it) and plan again: one step may make another due.
pub fn plan(policy: &Policy, keys: &[KeyInfo], now: u64) -> Plan {
    let mut planner = Planner { policy, now, plan: Plan::default() };
    let (new, old): (Vec<&KeyInfo>, Vec<&KeyInfo>) = keys.iter().partition(|k| fits(policy, k));
    if !policy.signed {
        planner.unsign(keys);
    } else if old.iter().any(|k| k.active.is_some() && k.retired.is_none()) {
        planner.replace(&new, &old);
    } else {
        planner.leftovers(&old);
        planner.signed(&new);
    }
    planner.plan
}

/// True when `key` is of the policy's algorithm and one of its roles.
fn fits(policy: &Policy, key: &KeyInfo) -> bool {
    key.algorithm == policy.algorithm && policy.roles().contains(&key.role)
}

struct Planner<'a> {
    policy: &'a Policy,
    now: u64,
    plan: Plan,
}

/// One role's keys: the one signing, the one following it, those that followed, and
/// other keys that sign beside the one signing (see [`Planner::extras`]).
#[derive(Default)]
struct Slot<'a> {
    current: Option<&'a KeyInfo>,
    successor: Option<&'a KeyInfo>,
    predecessors: Vec<&'a KeyInfo>,
    extras: Vec<&'a KeyInfo>,
}

impl<'a> Slot<'a> {
    /// `role`'s keys; of several signing, the last one added to the store (the
    /// highest id: an imported key that took the role over) is the one signing.
    fn of(keys: &[&'a KeyInfo], role: KeyRole) -> Slot<'a> {
        let mut slot = Slot::default();
        for &key in keys.iter().filter(|k| k.role == role) {
            match (key.active, key.retired) {
                (None, _) => slot.successor = slot.successor.or(Some(key)),
                (Some(_), None) => match slot.current {
                    Some(current) if current.id > key.id => slot.extras.push(key),
                    Some(current) => {
                        slot.extras.push(current);
                        slot.current = Some(key);
                    }
                    None => slot.current = Some(key),
                },
                (Some(_), Some(_)) => slot.predecessors.push(key),
            }
        }
        slot
    }
}

impl Planner<'_> {
    /// True when `due` has come; otherwise notes it as a next event.
    fn at(&mut self, due: u64) -> bool {
        if self.now >= due {
            return true;
        }
        self.plan.next = Some(self.plan.next.map_or(due, |n| n.min(due)));
        false
    }

    fn push(&mut self, action: Action) {
        self.plan.actions.push(action);
    }

    fn generate(&mut self, role: KeyRole) {
        self.push(Action::Generate { role, algorithm: self.policy.algorithm });
    }

    /// The zone is (to be) signed with the policy's keys.
    fn signed(&mut self, keys: &[&KeyInfo]) {
        if keys.is_empty() {
            self.policy.roles().iter().for_each(|&role| self.generate(role));
            return;
        }
        if !keys.iter().any(|k| k.active.is_some() && k.retired.is_none()) {
            // An unsigned zone: publish and sign at once.
            let fresh: Vec<u32> =
                keys.iter().filter(|k| k.active.is_none()).map(|k| k.id).collect();
            if fresh.is_empty() {
                self.policy.roles().iter().for_each(|&role| self.generate(role));
            }
            for id in fresh {
                self.push(Action::Publish(id));
                self.push(Action::Activate(id));
            }
            return;
        }
        for &role in self.policy.roles() {
            let slot = Slot::of(keys, role);
            if slot.current.is_none() && slot.successor.is_none() {
                self.generate(role);
            }
            if let Some(current) = slot.current {
                self.current(current);
            }
            if self.extras(&slot) {
                self.predecessors(&slot);
                continue;
            }
            match role {
                KeyRole::Zsk => self.zsk(&slot),
                KeyRole::Ksk => self.ksk(&slot),
                KeyRole::Csk => self.csk(&slot),
            }
        }
    }

    /// The signing key's readiness and, for a KSK or CSK, its DS.
    fn current(&mut self, key: &KeyInfo) {
        let Some(published) = key.published else { return };
        if key.ready.is_none() && self.at(published + self.policy.publication_interval()) {
            self.push(Action::Ready(key.id));
        }
        if !key.role.signs_keys() {
            return;
        }
        match key.ds {
            DsState::Submitted { .. } => self.await_parent(key.id, true),
            DsState::Seen { .. } => {}
            _ => {
                if self.at(published + self.policy.initial_interval()) {
                    self.push(Action::SubmitDs(key.id));
                }
            }
        }
    }

    fn await_parent(&mut self, id: u32, present: bool) {
        self.push(Action::AwaitParent { id, present });
    }

    /// ZSK pre-publication (RFC 7583 §3.2.1): the successor published Ipub before the
    /// current key's lifetime ends, then signs in its place; the old key's DNSKEY stays
    /// Iret after its retirement.
    fn zsk(&mut self, slot: &Slot) {
        let ipub = self.policy.publication_interval();
        if let Some(next) = slot.successor {
            match next.published {
                None => self.push(Action::Publish(next.id)),
                Some(published) => {
                    if self.at(published + ipub) {
                        self.switch(next, slot.current);
                    }
                }
            }
        } else if let Some(current) = slot.current {
            self.roll_due(current, self.policy.zsk_lifetime.saturating_sub(ipub));
        }
        self.predecessors(slot);
    }

    /// KSK double-DS (RFC 7583 §3.3.2): the successor's DS first; once it is in every
    /// cache, the DNSKEYs are swapped; once the swap is, the old DS is withdrawn.
    fn ksk(&mut self, slot: &Slot) {
        if let Some(next) = slot.successor {
            match next.ds {
                DsState::Submitted { .. } => self.await_parent(next.id, true),
                DsState::Seen { at } => {
                    if self.at(at + self.policy.parent_interval()) {
                        self.push(Action::Publish(next.id));
                        self.switch(next, slot.current);
                        if let Some(current) = slot.current {
                            self.push(Action::Remove(current.id));
                        }
                    }
                }
                _ => self.push(Action::SubmitDs(next.id)),
            }
        } else if let Some(current) = slot.current {
            if slot.predecessors.is_empty() {
                self.roll_due(current, self.policy.ksk_lifetime);
            }
        }
        self.predecessors(slot);
    }

    /// CSK: the successor's DNSKEY and DS published at once; the switch when the
    /// DNSKEY is ready and the DS in every cache; the old DS withdrawn once the DNSKEY
    /// RRset signed by the new key is in every cache; the old DNSKEY removed once no
    /// cache holds the old DS or a signature of the old key.
    fn csk(&mut self, slot: &Slot) {
        if let Some(next) = slot.successor {
            if next.published.is_none() {
                self.push(Action::Publish(next.id));
            }
            match next.ds {
                DsState::Submitted { .. } => self.await_parent(next.id, true),
                DsState::Seen { at } => {
                    let ready =
                        next.published.unwrap_or(self.now) + self.policy.publication_interval();
                    let cached = at + self.policy.parent_interval();
                    let (ready, cached) = (self.at(ready), self.at(cached));
                    if ready && cached {
                        self.switch(next, slot.current);
                    }
                }
                _ => self.push(Action::SubmitDs(next.id)),
            }
        } else if let Some(current) = slot.current {
            if slot.predecessors.is_empty() {
                let lead = self.policy.publication_interval();
                self.roll_due(current, self.policy.csk_lifetime.saturating_sub(lead));
            }
        }
        self.predecessors(slot);
    }

    /// Retired keys on their way out: a KSK's or CSK's DS withdrawn first
    /// ([`Planner::withdraw_old_ds`]), a ZSK's DNSKEY removed once its signatures are
    /// out of every cache.
    fn predecessors(&mut self, slot: &Slot) {
        for &old in &slot.predecessors {
            match old.role.signs_keys() {
                true => self.withdraw_old_ds(old),
                false => self.remove_after_signatures(old, None),
            }
        }
    }

    /// Keys signing beside the one signing (an imported key took their role over while
    /// the parent held their DS, or a state edited by hand): retired as a rollover to
    /// the one signing retires its predecessor, once the one signing is in every cache
    /// — a ZSK then (RFC 7583 §3.2.1); a KSK or CSK once the DS of the one signing has
    /// also been seen at the parent for IpubP (§3.3.2: a KSK's DNSKEY leaves with it; a
    /// CSK's stays until its signatures and DS are gone, §3.4), after which its DS is
    /// withdrawn ([`Planner::withdraw_old_ds`]). No rollover starts meanwhile. False
    /// when there are none.
    fn extras(&mut self, slot: &Slot) -> bool {
        let Some(current) = slot.current.filter(|_| !slot.extras.is_empty()) else {
            return false;
        };
        // [`Planner::current`] marks it ready, asks for its DS and awaits it.
        let due = current.ready.is_some()
            && match current.ds {
                _ if !current.role.signs_keys() => true,
                DsState::Seen { at } => self.at(at + self.policy.parent_interval()),
                _ => false,
            };
        if due {
            for extra in &slot.extras {
                self.push(Action::Retire(extra.id));
                if current.role == KeyRole::Ksk {
                    self.push(Action::Remove(extra.id));
                }
            }
        }
        true
    }

    /// Generates a successor when `current` has signed for `after` seconds (never when
    /// its role's lifetime is 0, nor before its DS is seen).
    fn roll_due(&mut self, current: &KeyInfo, after: u64) {
        let lifetime = self.policy.lifetime(current.role);
        let ds_ready = !current.role.signs_keys() || matches!(current.ds, DsState::Seen { .. });
        if let (true, true, Some(active)) = (lifetime > 0, ds_ready, current.active) {
            if self.at(active + after) {
                self.generate(current.role);
            }
        }
    }

    /// `next` signs instead of `current` (RFC 7583: Tact(N+1) = Tret(N)).
    fn switch(&mut self, next: &KeyInfo, current: Option<&KeyInfo>) {
        if next.ready.is_none() {
            self.push(Action::Ready(next.id));
        }
        self.push(Action::Activate(next.id));
        if let Some(current) = current {
            self.push(Action::Retire(current.id));
        }
    }

    /// A retired KSK's or CSK's DS: withdrawn once the DNSKEY RRset without its
    /// signature is in every cache (Dprp + TTLkey after its retirement); then awaited
    /// gone; then the key removed as [`Planner::remove_after_signatures`] says.
    fn withdraw_old_ds(&mut self, old: &KeyInfo) {
        let retired = old.retired.unwrap_or(self.now);
        match old.ds {
            DsState::Submitted { .. } | DsState::Seen { .. } => {
                if self.at(retired + self.policy.dnskey_interval()) {
                    self.push(Action::WithdrawDs(old.id));
                }
            }
            DsState::Withdrawn { .. } => self.await_parent(old.id, false),
            DsState::Gone { at } => self.remove_after_signatures(old, Some(at)),
            DsState::None => self.remove_after_signatures(old, None),
        }
    }

    /// A retired key's DNSKEY removed once no cache holds a signature it made (Iret
    /// after its retirement) nor, when its DS was seen `gone` at the parent, that DS
    /// (IpubP after); then the key is forgotten.
    fn remove_after_signatures(&mut self, old: &KeyInfo, gone: Option<u64>) {
        if old.removed.is_none() {
            let retired = old.retired.unwrap_or(self.now);
            let signatures = retired + self.policy.retire_interval();
            let ds = gone.map_or(0, |at| at + self.policy.parent_interval());
            if !self.at(signatures.max(ds)) {
                return;
            }
            self.push(Action::Remove(old.id));
        }
        self.push(Action::Delete(old.id));
    }

    /// Keys of another algorithm or scheme that no longer sign (what an algorithm
    /// rollover leaves): their DS withdrawn and awaited gone, then they are forgotten.
    fn leftovers(&mut self, old: &[&KeyInfo]) {
        for key in old {
            match key.ds {
                DsState::Submitted { .. } | DsState::Seen { .. } => {
                    self.push(Action::WithdrawDs(key.id))
                }
                DsState::Withdrawn { .. } => self.await_parent(key.id, false),
                DsState::None | DsState::Gone { .. } => {
                    if key.is_published(self.now) {
                        self.push(Action::Remove(key.id));
                    }
                    self.push(Action::Delete(key.id));
                }
            }
        }
    }
}

mod replace;
