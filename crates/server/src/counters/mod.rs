//! The counters behind the metrics (`crate::http::metrics` shows them).
//!
//! * [`queries`]: the data plane's, kept per worker in a slot of its own that only that
//!   worker writes (plain relaxed loads and stores, no shared cache line written per
//!   query); a scrape adds the slots up.
//! * [`control`]: the control plane's (zone loads, transfers, updates, journals), one
//!   set per process, in `tern_control::counters`, with what both share.

pub mod queries;

pub use tern_control::counters::{
    bump, control, rcode_index, Durations, DURATION_BOUNDS, RCODE_LABELS, RCODE_SLOTS,
};
