//! The algorithm rollover (RFC 6781 §4.1.4, the conservative order), which also
//! replaces keys of another scheme: the new keys sign everything before their DNSKEYs
//! are published, so that no cached RRset lacks a signature of an algorithm in the
//! DNSKEY RRset; the DS changes once the new DNSKEYs are in every cache; the old
//! DNSKEYs leave once the old DS has left every cache; the old signatures last.

use super::{DsState, KeyInfo, Planner};
use crate::policy::plan::Action;

impl Planner<'_> {
    /// Carries the rollover from `old` (keys of another algorithm or scheme, some still
    /// signing) to `new` one step.
    pub(super) fn replace(&mut self, new: &[&KeyInfo], old: &[&KeyInfo]) {
        if new.is_empty() {
            self.policy.roles().iter().for_each(|&role| self.generate(role));
            return;
        }
        // 1. New RRSIGs.
        let unsigned: Vec<u32> = new.iter().filter(|k| k.active.is_none()).map(|k| k.id).collect();
        if !unsigned.is_empty() {
            unsigned.into_iter().for_each(|id| self.push(Action::Activate(id)));
            return;
        }
        // 2. New DNSKEYs, once every cached RRset carries the new signatures.
        let signing = latest(new.iter().map(|k| k.active));
        if new.iter().any(|k| k.published.is_none()) {
            if self.at(signing + self.policy.signature_interval()) {
                let ids = new.iter().filter(|k| k.published.is_none()).map(|k| k.id);
                ids.collect::<Vec<_>>().into_iter().for_each(|id| self.push(Action::Publish(id)));
            }
            return;
        }
        // 3. New DS, once the new DNSKEYs are in every cache.
        let published = latest(new.iter().map(|k| k.published));
        if !self.at(published + self.policy.publication_interval()) {
            return;
        }
        if self.change_ds(new, old) {
            return;
        }
        // 4. Old DNSKEYs out, once the old DS is out of every cache.
        let Some(parent) = self.parent_done(new, old) else { return };
        if old.iter().any(|k| k.published.is_some() && k.removed.is_none()) {
            if self.at(parent + self.policy.parent_interval()) {
                let ids = old.iter().filter(|k| k.published.is_some() && k.removed.is_none());
                ids.map(|k| k.id).collect::<Vec<_>>().into_iter().for_each(|id| {
                    self.push(Action::Remove(id));
                });
            }
            return;
        }
        // 5. Old RRSIGs out, once the DNSKEY RRset without the old keys is in every cache.
        let removed = latest(old.iter().map(|k| k.removed));
        if self.at(removed + self.policy.dnskey_interval()) {
            for key in old.iter().filter(|k| k.retired.is_none()) {
                self.push(Action::Retire(key.id));
            }
        }
    }

    /// Marks the new keys ready and swaps the CDS/CDNSKEY content from the old KSKs to
    /// the new; true when it took a step.
    fn change_ds(&mut self, new: &[&KeyInfo], old: &[&KeyInfo]) -> bool {
        let before = self.plan.actions.len();
        for key in new.iter().filter(|k| k.ready.is_none()) {
            self.push(Action::Ready(key.id));
        }
        for key in new.iter().filter(|k| k.role.signs_keys()) {
            if matches!(key.ds, DsState::None | DsState::Withdrawn { .. } | DsState::Gone { .. }) {
                self.push(Action::SubmitDs(key.id));
            }
        }
        for key in old.iter().filter(|k| k.ds.listed()) {
            self.push(Action::WithdrawDs(key.id));
        }
        self.plan.actions.len() > before
    }

    /// When the parent was last seen changing, once the new DS is seen and the old gone;
    /// `None` (and the parent awaited) before.
    fn parent_done(&mut self, new: &[&KeyInfo], old: &[&KeyInfo]) -> Option<u64> {
        let mut last = 0;
        let mut waiting = false;
        for key in new.iter().chain(old) {
            match key.ds {
                DsState::Submitted { .. } => self.await_parent(key.id, true),
                DsState::Withdrawn { .. } => self.await_parent(key.id, false),
                DsState::Seen { at } | DsState::Gone { at } => {
                    last = last.max(at);
                    continue;
                }
                DsState::None => continue,
            }
            waiting = true;
        }
        (!waiting).then_some(last)
    }

    /// Signing turned off: the DS withdrawn (CDS/CDNSKEY delete, RFC 8078 §4) and
    /// awaited gone; once no cache holds it, the zone is unsigned and the keys
    /// forgotten.
    pub(super) fn unsign(&mut self, keys: &[KeyInfo]) {
        let listed: Vec<u32> = keys.iter().filter(|k| k.ds.listed()).map(|k| k.id).collect();
        if !listed.is_empty() {
            listed.into_iter().for_each(|id| self.push(Action::WithdrawDs(id)));
            return;
        }
        let refs: Vec<&KeyInfo> = keys.iter().collect();
        let Some(gone) = self.parent_done(&[], &refs) else { return };
        if gone > 0 && !self.at(gone + self.policy.parent_interval()) {
            return;
        }
        for key in keys {
            if key.is_active(self.now) {
                self.push(Action::Retire(key.id));
            }
            if key.is_published(self.now) {
                self.push(Action::Remove(key.id));
            }
            self.push(Action::Delete(key.id));
        }
    }
}

/// The latest of the timings (0 when none is set).
fn latest(times: impl Iterator<Item = Option<u64>>) -> u64 {
    times.flatten().max().unwrap_or(0)
}
