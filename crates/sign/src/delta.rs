//! The DNSSEC part of a change as incremental signing ([`crate::sign_change`]) and
//! signature refresh ([`crate::refresh`]) build it: records to remove, records to add,
//! and RRsets still to sign — signed together at the end, on the options' threads, their
//! RRSIGs (RFC 4034 §3: the RRset's owner and TTL) joining the records added.

use tern_wire::{Dname, Name, Rtype};
use tern_zone::RecordData;

use crate::error::{Error, Result};
use crate::key::SigningKey;
use crate::names::Rrset;
use crate::rrsig::{sign_rrset, RrsetRef, Scratch};
use crate::zone::SignOptions;

/// One RRset to sign, and the keys (indices into the caller's keys) that sign it.
#[derive(Debug)]
struct SignJob {
    owner: Name,
    rrset: Rrset<'static>,
    keys: Vec<usize>,
}

/// DNSSEC records removed and added, and RRsets to sign.
#[derive(Debug, Default)]
pub struct Delta {
    /// Records removed.
    pub removed: Vec<RecordData>,
    /// Records added (the signatures of the jobs come after them).
    pub added: Vec<RecordData>,
    jobs: Vec<SignJob>,
    planned: usize,
}

/// A record of a changeset.
pub fn record(owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) -> RecordData {
    RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() }
}

impl Delta {
    /// Removes the signatures of a stored RRset.
    pub fn remove_sigs(&mut self, owner: &Dname, rrset: &tern_zone::Rrset<'_>) {
        let sigs = rrset.sigs().map(|rd| record(owner, Rtype::RRSIG, rrset.sig_ttl, rd));
        self.removed.extend(sigs);
    }

    /// Removes a stored RRset: its records and its signatures.
    pub fn remove_rrset(&mut self, owner: &Dname, rrset: &tern_zone::Rrset<'_>) {
        let records = rrset.rdatas().map(|rd| record(owner, rrset.rtype, rrset.ttl, rd));
        self.removed.extend(records);
        self.remove_sigs(owner, rrset);
    }

    /// Adds an RRset's records.
    pub fn add_rrset(&mut self, owner: &Dname, rrset: &Rrset<'_>) {
        let records = rrset.rdatas.iter().map(|rd| record(owner, rrset.rtype, rrset.ttl, rd));
        self.added.extend(records);
    }

    /// Signs `rrset` at `owner` with the keys numbered `keys` (nothing without keys).
    pub fn sign(&mut self, owner: &Dname, rrset: Rrset<'static>, keys: Vec<usize>) {
        if keys.is_empty() {
            return;
        }
        self.planned += keys.len();
        self.jobs.push(SignJob { owner: owner.to_name(), rrset, keys });
    }

    /// How many signatures the jobs will make.
    pub fn planned(&self) -> usize {
        self.planned
    }

    /// True when nothing is removed, added or signed.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.added.is_empty() && self.jobs.is_empty()
    }

    /// Makes the signatures (on `options.threads` threads, valid as `options.validity`
    /// says for their owner) and returns the records removed and added.
    pub fn finish(
        self,
        keys: &[SigningKey],
        signer: &Dname,
        options: &SignOptions,
    ) -> Result<(Vec<RecordData>, Vec<RecordData>)> {
        let Delta { removed, mut added, jobs, .. } = self;
        let validity = &options.validity;
        let sigs =
            crate::parallel::map(&jobs, options.threads, Scratch::default, |scratch, job| {
                let view = RrsetRef {
                    owner: &job.owner,
                    rtype: job.rrset.rtype,
                    ttl: job.rrset.ttl,
                    rdatas: &job.rrset.rdatas,
                };
                let times = (validity.inception(), validity.expiration_for(&job.owner));
                let sign = |&i: &usize| {
                    let key = keys.get(i).ok_or(Error::Keys("a key index out of range"))?;
                    sign_rrset(&view, key, signer, times, scratch)
                };
                job.keys.iter().map(sign).collect::<Result<Vec<Vec<u8>>>>()
            })?;
        for (job, sigs) in jobs.iter().zip(sigs) {
            let ttl = job.rrset.ttl;
            added.extend(sigs.iter().map(|rd| record(&job.owner, Rtype::RRSIG, ttl, rd)));
        }
        Ok((removed, added))
    }
}
