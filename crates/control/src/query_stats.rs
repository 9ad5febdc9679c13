//! Which zones have their queries counted (`query-stats`): the rows of the per-zone
//! query counters handed to zones, at most a fixed number, the server's
//! `query-stats-max-zones` (each worker of the data plane holds that many rows, made
//! once at start).
//!
//! [`QueryStatsRows::assign`] runs with every apply of the zones ([`crate::Control`]):
//! first the rows of zones removed, or whose plan no longer asks to be counted, are
//! freed; then each zone that asks, in the plans' order, keeps its row or takes a free
//! one (a never used one first, then the one freed longest ago, rows freed together
//! in row order) with a new
//! [`StatsTicket`] written into its slot. Zones beyond the rows are not counted, and
//! named to the caller, which logs them. A zone keeps its row, and so its counts, as
//! long as it is served and asks for it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tern_wire::Name;
use tern_zone::{StatsTicket, ZoneSlot};

use crate::plan::ZonePlan;

/// The rows handed to zones (see the module comment).
#[derive(Debug)]
pub struct QueryStatsRows {
    /// Rows in all.
    rows: u32,
    /// Rows never handed out start here.
    fresh: u32,
    /// Rows freed, the one freed longest ago first.
    free: VecDeque<u32>,
    /// The generation of the next ticket.
    generation: u32,
    /// The zones counted: their slot and ticket.
    owners: HashMap<Name, (Arc<ZoneSlot>, StatsTicket)>,
}

impl QueryStatsRows {
    /// `rows` rows, none handed out.
    pub fn new(rows: usize) -> QueryStatsRows {
        QueryStatsRows {
            rows: u32::try_from(rows).unwrap_or(u32::MAX - 1).min(u32::MAX - 1),
            fresh: 0,
            free: VecDeque::new(),
            generation: 1,
            owners: HashMap::new(),
        }
    }

    /// Hands rows to the zones of `plans` that ask for them (their slots in `slots`,
    /// in the same order) and frees the others' (see the module comment). Returns the
    /// zones that ask to be counted and are not: no row was left for them.
    pub fn assign(&mut self, plans: &[Arc<ZonePlan>], slots: &[Arc<ZoneSlot>]) -> Vec<Name> {
        let wanted: HashMap<&Name, &Arc<ZoneSlot>> = plans
            .iter()
            .zip(slots)
            .filter(|(plan, _)| plan.query_stats)
            .map(|(plan, slot)| (&plan.name, slot))
            .collect();
        self.free_unwanted(&wanted);
        let mut left_out = Vec::new();
        for (plan, slot) in plans.iter().zip(slots).filter(|(plan, _)| plan.query_stats) {
            if !self.keep_or_take(&plan.name, slot) {
                slot.set_stats_ticket(StatsTicket::NONE);
                left_out.push(plan.name.clone());
            }
        }
        left_out
    }

    /// [`assign`](Self::assign) for a change of a few zones, the others untouched: the
    /// rows of `removed` are freed (in row order), then each zone of `added` that asks
    /// keeps its row or takes a free one. Costs what the change holds, not what is
    /// served. Returns the added zones left out.
    pub fn assign_change(
        &mut self,
        added: &[Arc<ZonePlan>],
        slots: &[Arc<ZoneSlot>],
        removed: &[Name],
    ) -> Vec<Name> {
        let mut freed = Vec::new();
        for name in removed {
            if let Some((slot, ticket)) = self.owners.remove(name) {
                slot.set_stats_ticket(StatsTicket::NONE);
                freed.push(ticket.row() as u32);
            }
        }
        freed.sort_unstable();
        self.free.extend(freed);
        let mut left_out = Vec::new();
        for (plan, slot) in added.iter().zip(slots) {
            if !plan.query_stats {
                if let Some((_, ticket)) = self.owners.remove(&plan.name) {
                    slot.set_stats_ticket(StatsTicket::NONE);
                    self.free.push_back(ticket.row() as u32);
                }
            } else if !self.keep_or_take(&plan.name, slot) {
                slot.set_stats_ticket(StatsTicket::NONE);
                left_out.push(plan.name.clone());
            }
        }
        left_out
    }

    /// Frees the rows of zones not in `wanted` (or with another slot now); rows freed
    /// together are queued in row order (not the map's, which varies from run to run).
    fn free_unwanted(&mut self, wanted: &HashMap<&Name, &Arc<ZoneSlot>>) {
        let mut freed = Vec::new();
        self.owners.retain(|name, (slot, ticket)| {
            let kept = wanted.get(name).is_some_and(|w| Arc::ptr_eq(w, slot));
            if !kept {
                slot.set_stats_ticket(StatsTicket::NONE);
                freed.push(ticket.row() as u32);
            }
            kept
        });
        freed.sort_unstable();
        self.free.extend(freed);
    }

    /// Gives `name` (served in `slot`) its row: the one it has, or a free one under a
    /// new ticket. False when no row is free.
    fn keep_or_take(&mut self, name: &Name, slot: &Arc<ZoneSlot>) -> bool {
        if let Some((_, ticket)) = self.owners.get(name) {
            slot.set_stats_ticket(*ticket);
            return true;
        }
        let row = if self.fresh < self.rows {
            self.fresh += 1;
            self.fresh - 1
        } else if let Some(row) = self.free.pop_front() {
            row
        } else {
            return false;
        };
        let ticket = StatsTicket::new(row, self.generation);
        // Generation 0 is never handed out: a worker's row that counts for no zone
        // holds 0.
        self.generation = self.generation.wrapping_add(1).max(1);
        slot.set_stats_ticket(ticket);
        self.owners.insert(name.clone(), (Arc::clone(slot), ticket));
        true
    }

    /// The zones counted and their tickets (for tests and status).
    pub fn counted(&self) -> impl Iterator<Item = (&Name, StatsTicket)> {
        self.owners.iter().map(|(name, (_, ticket))| (name, *ticket))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Role, ZoneSource};

    fn plan(name: &str, query_stats: bool) -> Arc<ZonePlan> {
        let source = ZoneSource::Embedded("");
        let mut plan = ZonePlan::new(name.parse().unwrap(), source, Role::Primary);
        plan.query_stats = query_stats;
        Arc::new(plan)
    }

    fn slots(plans: &[Arc<ZonePlan>], kept: &[Arc<ZoneSlot>]) -> Vec<Arc<ZoneSlot>> {
        plans
            .iter()
            .map(|p| {
                let found = kept.iter().find(|s| s.origin() == &p.name).cloned();
                found.unwrap_or_else(|| Arc::new(ZoneSlot::new(&p.name)))
            })
            .collect()
    }

    #[test]
    fn rows_go_to_the_zones_that_ask_up_to_the_limit() {
        let mut rows = QueryStatsRows::new(2);
        let plans = [plan("a.", true), plan("b.", false), plan("c.", true), plan("d.", true)];
        let first = slots(&plans, &[]);
        let left_out = rows.assign(&plans, &first);
        assert_eq!(left_out, vec!["d.".parse::<Name>().unwrap()]);
        assert_eq!(first[0].stats_ticket(), StatsTicket::new(0, 1));
        assert_eq!(first[1].stats_ticket(), StatsTicket::NONE);
        assert_eq!(first[2].stats_ticket(), StatsTicket::new(1, 2));
        assert_eq!(first[3].stats_ticket(), StatsTicket::NONE);
        // Applied again: every zone keeps what it has.
        assert_eq!(rows.assign(&plans, &first).len(), 1);
        assert_eq!(first[0].stats_ticket(), StatsTicket::new(0, 1));
        assert_eq!(rows.counted().count(), 2);
    }

    #[test]
    fn a_freed_row_goes_to_the_next_zone_under_a_newer_ticket() {
        let mut rows = QueryStatsRows::new(2);
        let plans = [plan("a.", true), plan("b.", true)];
        let first = slots(&plans, &[]);
        rows.assign(&plans, &first);
        let a_ticket = first[0].stats_ticket();
        // a. removed, c. added; b. turns counting off: c. takes a.'s row (freed first).
        let plans = [plan("b.", false), plan("c.", true), plan("d.", true)];
        let second = slots(&plans, &first);
        assert!(rows.assign(&plans, &second).is_empty());
        assert_eq!(first[0].stats_ticket(), StatsTicket::NONE, "the removed zone's slot");
        assert_eq!(second[0].stats_ticket(), StatsTicket::NONE, "b. no longer counted");
        let c_ticket = second[1].stats_ticket();
        assert_eq!(c_ticket.row(), a_ticket.row());
        assert!(c_ticket.is_newer_than(a_ticket));
        assert_eq!(second[2].stats_ticket().row(), 1, "d. takes b.'s row");
        // b. asks again: no row is left.
        let plans = [plan("b.", true), plan("c.", true), plan("d.", true)];
        let third = slots(&plans, &second);
        assert_eq!(rows.assign(&plans, &third), vec!["b.".parse::<Name>().unwrap()]);
        assert_eq!(third[1].stats_ticket(), c_ticket, "c. keeps its row");
    }

    #[test]
    fn a_change_frees_the_removed_zones_rows_and_leaves_the_others() {
        let mut rows = QueryStatsRows::new(2);
        let plans = [plan("a.", true), plan("b.", true)];
        let first = slots(&plans, &[]);
        rows.assign(&plans, &first);
        let b_ticket = first[1].stats_ticket();
        let added = [plan("c.", true), plan("d.", true)];
        let fresh = slots(&added, &[]);
        let a: Name = "a.".parse().unwrap();
        assert_eq!(rows.assign_change(&added, &fresh, &[a]), vec!["d.".parse::<Name>().unwrap()]);
        assert_eq!(first[0].stats_ticket(), StatsTicket::NONE, "a.'s row freed");
        assert_eq!(first[1].stats_ticket(), b_ticket, "b. untouched");
        assert_eq!(fresh[0].stats_ticket().row(), 0, "c. takes a.'s row");
        assert_eq!(fresh[1].stats_ticket(), StatsTicket::NONE);
        assert_eq!(rows.counted().count(), 2);
    }

    #[test]
    fn no_rows_count_nothing() {
        let mut rows = QueryStatsRows::new(0);
        let plans = [plan("a.", true)];
        let first = slots(&plans, &[]);
        assert_eq!(rows.assign(&plans, &first).len(), 1);
        assert_eq!(first[0].stats_ticket(), StatsTicket::NONE);
    }
}
