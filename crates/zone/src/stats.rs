//! Which row of the per-zone query counters a zone counts in (`query-stats`).
//!
//! The server keeps, in each worker, a fixed number of rows of per-zone counters; the
//! control plane hands a row to each zone that has `query-stats` on, up to that number,
//! and writes the zone's [`StatsTicket`] into its [`ZoneSlot`](crate::ZoneSlot). The
//! data plane reads the ticket when it locates a query's zone, and counts into the
//! ticket's row.
//!
//! A row freed (its zone removed, or its counting turned off) may be handed to another
//! zone: the new ticket has a higher generation, so a worker that still counts a query
//! under the old ticket cannot add it to the new zone's counts, and a worker row that
//! holds the old zone's counts is wiped before it counts the new zone's (the server's
//! `counters::queries`).

/// A zone's row in the per-zone query counters and the generation of that row's
/// assignment to it; or [`StatsTicket::NONE`], for a zone not counted. Packed in a `u64`
/// (the generation in the high half) so that it is read and written at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatsTicket(u64);

impl StatsTicket {
    /// Not counted.
    pub const NONE: StatsTicket = StatsTicket(u64::MAX);

    /// The ticket of `row`, handed out in assignment `generation`.
    pub const fn new(row: u32, generation: u32) -> StatsTicket {
        StatsTicket((generation as u64) << 32 | row as u64)
    }

    /// The ticket packed in `raw` ([`to_raw`](Self::to_raw)).
    #[inline]
    pub const fn from_raw(raw: u64) -> StatsTicket {
        StatsTicket(raw)
    }

    /// The ticket as one `u64`.
    #[inline]
    pub const fn to_raw(self) -> u64 {
        self.0
    }

    /// True when the zone is counted.
    #[inline]
    pub const fn is_some(self) -> bool {
        self.0 != u64::MAX
    }

    /// The row.
    #[inline]
    pub const fn row(self) -> usize {
        (self.0 & 0xffff_ffff) as usize
    }

    /// The generation of the assignment.
    #[inline]
    pub const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// True when this ticket was handed out after `other` (generations compared in
    /// serial-number arithmetic, so that their wrapping around after 2^32 assignments
    /// changes nothing for tickets less than 2^31 assignments apart).
    #[inline]
    pub const fn is_newer_than(self, other: StatsTicket) -> bool {
        (self.generation().wrapping_sub(other.generation()) as i32) > 0
    }
}

impl Default for StatsTicket {
    fn default() -> Self {
        StatsTicket::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_packs_row_and_generation() {
        let ticket = StatsTicket::new(7, 3);
        assert_eq!((ticket.row(), ticket.generation()), (7, 3));
        assert!(ticket.is_some());
        assert!(!StatsTicket::NONE.is_some());
        assert_eq!(StatsTicket::from_raw(ticket.to_raw()), ticket);
        assert!(StatsTicket::new(7, 4).is_newer_than(ticket));
        assert!(!ticket.is_newer_than(StatsTicket::new(1, 4)));
        assert!(!ticket.is_newer_than(ticket));
        // Across the wrap of the generations.
        assert!(StatsTicket::new(0, 1).is_newer_than(StatsTicket::new(0, u32::MAX)));
    }
}
