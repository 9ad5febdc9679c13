//! DNSSEC signing for Tern, as a pure library: no I/O, no clock (times are arguments),
//! no threads but the scoped ones that sign a zone in parallel.
//!
//! * [`Algorithm`] (`algorithm`): the algorithms signed with — ECDSA P-256 (the
//!   default) and P-384, Ed25519, RSA/SHA-256 and RSA/SHA-512.
//! * [`SigningKey`] (`key`): keys generated or loaded from PKCS#8, their DNSKEY RDATA,
//!   key tag and DS; [`dnskey`] the key tag and DS digests on their own.
//! * [`rrsig`]: the RRSIG of one RRset; [`Validity`] (`validity`) its inception and
//!   expiration, with jitter.
//! * [`sign_zone`] (`zone`): a whole zone signed, with an NSEC ([`nsec`]) or NSEC3
//!   ([`nsec3`]) chain, over the zone's names as [`names`] sees them, on several
//!   threads (`parallel`), a chunk of owners at a time (`batch`).
//! * [`policy`]: the key and signing policy engine — rollovers planned on a clock
//!   passed in (RFC 6781, RFC 7583), and the keys that sign at each moment.
//! * [`sign_change`] (`incremental`): a change to a signed zone signed, touching only
//!   the RRsets it changes and the denial records around them; [`refresh`] (`refresh`)
//!   the signatures that expire or whose keys change, a slice at a time. Both read the
//!   zone through `view` and build their records in a `delta`.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

mod algorithm;
mod batch;
mod delta;
pub mod dnskey;
mod error;
mod incremental;
mod key;
pub mod names;
pub mod nsec;
pub mod nsec3;
mod parallel;
pub mod policy;
mod rdatas;
mod refresh;
pub mod rrsig;
mod rsa_public;
mod validity;
mod view;
mod zone;

pub use algorithm::Algorithm;
pub use dnskey::DigestType;
pub use error::{Error, Result};
pub use incremental::{same_denial, sign_change, sign_change_applied};
pub use key::{verify, KeyRole, SigningKey};
pub use nsec3::Nsec3Config;
pub use refresh::{refresh, RefreshCursor, RefreshOptions, Refreshed};
pub use rsa_public::split_dnskey_form;
pub use validity::{jitter_offset, Validity};
pub use zone::{check_keys, sign_zone, CdsRecords, DenialConfig, SignOptions, SignedZone};

#[cfg(test)]
mod testutil;
