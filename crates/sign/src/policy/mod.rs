//! The key and signing policy engine, pure: no I/O and no clock (`now` is an
//! argument, in seconds since the epoch), so that years of key life run in a test.
//!
//! * [`Policy`] (`config`): KSK+ZSK or CSK, algorithm, lifetimes, TTLs, propagation
//!   delays and safety margins, and the intervals of RFC 7583 derived from them.
//! * [`KeyInfo`] (`state`): each key's identity, its RFC 7583 timings and its DS
//!   state at the parent; [`key_sets`]: which keys are in the DNSKEY RRset, which
//!   sign it, which sign the rest, and the CDS/CDNSKEY content, at a moment.
//! * [`plan`] (`rules`): the steps due now and the time of the next;
//!   [`advance`] (`plan`) takes them, asking the caller to make keys.
//!
//! A caller (the control plane) keeps the keys' state durably, calls [`advance`] at
//! [`Outcome::next`] and whenever the parent's DS changes (recorded with
//! [`KeyInfo::observe_ds`] for the keys of [`Outcome::awaiting`]), saves the state,
//! then signs the zone as [`key_sets`] says.

mod config;
mod plan;
mod rules;
mod state;

pub use config::{Policy, Scheme};
pub use plan::{advance, apply, Action, Outcome, Plan};
pub use rules::plan;
pub use state::{key_sets, Cds, DsState, KeyInfo, KeySets, CDNSKEY_DELETE, CDS_DELETE};

#[cfg(test)]
mod tests;
