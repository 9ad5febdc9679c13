//! The response under construction: a [`MessageWriter`] plus the truncation policy.
//!
//! RRsets are written whole or not at all (RFC 2181 §9). What does not fit in the answer
//! or authority section, or required glue in the additional section (RFC 9471), sets TC;
//! other additional data is left out quietly.
//!
//! Owners cost no compression lookup in the common cases: an owner that is the question's
//! name points to offset 12, a zone cut above it to its tail in the question, and every
//! record after the first of an RRset points to where the first one's owner is.

use std::num::NonZeroU16;

use tern_wire::message::{Flags, Mark, MessageWriter, Owner, PreparedRrset, RrsetHead, Section};
use tern_wire::{Class, Dname, Rcode, Rtype};
use tern_zone::{has_targets, NegativeSoa, Rrset};

use crate::class::ResponseClass;

/// The message did not fit and TC is set: stop adding to the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

/// Where the question's name sits in every response.
const QNAME_AT: u16 = 12;

/// A response being written.
#[derive(Debug)]
pub struct Response<'b> {
    /// The message.
    pub writer: MessageWriter<'b>,
    /// The query asked for DNSSEC records (DO=1).
    pub dnssec: bool,
    /// The response code so far.
    pub rcode: Rcode,
    /// An Extended DNS Error to report (RFC 8914), when the query had EDNS.
    pub ede: Option<u16>,
    /// The transport the query came over.
    pub transport: crate::Transport,
    /// The class the answer is counted in by rate limiting ([`crate::class`]);
    /// answering sets it.
    pub class: ResponseClass,
    /// The node a wildcard answer or a referral is counted under (the wildcard, the
    /// cut).
    pub node: tern_zone::NodeId,
    /// Told the class and node as soon as answering decides them
    /// ([`decided`](Self::decided)), when the caller asked.
    pub early: Option<Early<'b>>,
    /// Address of the query's QNAME bytes: an owner at this address is the question's
    /// name, already in the response at offset 12.
    qname_addr: usize,
    /// Length of the question's name in wire form.
    qname_len: usize,
    /// The origin (by address) of the zone answering the question, and where that
    /// origin is in the message: the question name's tail.
    question_apex: Option<(usize, u16)>,
    /// Where the first RDATA name of each record of the last RRset written decodes
    /// from: an NS target's glue can point its owner there.
    names_at: [Option<NonZeroU16>; MAX_TARGETS],
    /// A name value (by address) known to be in the message, and where.
    alias: Option<(usize, u16)>,
    /// A zone cut's owner (by address) that is a suffix of the question's name, and
    /// where that suffix is in the question.
    cut: Option<(usize, u16)>,
}

/// What the caller is told as soon as answering decides an answer's class and node
/// ([`Response::decided`]).
#[derive(Clone, Copy)]
pub struct Early<'b>(pub &'b dyn Fn(ResponseClass, tern_zone::NodeId));

impl std::fmt::Debug for Early<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Early")
    }
}

/// Records per RRset whose RDATA name positions are remembered.
pub const MAX_TARGETS: usize = 16;

const IN: Class = Class::IN;

/// Types whose RDATA is one compressible name ([`MessageWriter::push_name_rrset`]).
#[inline]
fn is_one_name(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::NS | Rtype::CNAME | Rtype::PTR)
}

/// The owner for [`MessageWriter::push_rrset`]: where it already is, or the name.
fn owner_ref(owner: &Dname, at: Option<u16>) -> Owner<'_> {
    at.map_or(Owner::Name(owner), Owner::At)
}

impl<'b> Response<'b> {
    /// Wraps a writer whose header is written; the question, of name `qname`, is to be
    /// written next.
    pub fn new(
        writer: MessageWriter<'b>,
        dnssec: bool,
        transport: crate::Transport,
        qname: &Dname,
    ) -> Self {
        let qname_addr = qname.as_wire().as_ptr() as usize;
        let names_at = [None; MAX_TARGETS];
        Response {
            writer,
            dnssec,
            rcode: Rcode::NOERROR,
            ede: None,
            transport,
            class: ResponseClass::Error,
            node: tern_zone::NO_NODE,
            early: None,
            qname_addr,
            qname_len: qname.len(),
            question_apex: None,
            names_at,
            alias: None,
            cut: None,
        }
    }

    /// Tells the caller, when it asked ([`Response::early`]), the class and node just
    /// decided: before the records are written, so that what it will read for them can
    /// load meanwhile.
    #[inline(always)]
    pub fn decided(&self) {
        if let Some(Early(early)) = self.early {
            early(self.class, self.node);
        }
    }

    /// Sets or clears the AA bit.
    pub fn set_authoritative(&mut self, on: bool) {
        self.writer.set_flag(Flags::AA, on);
    }

    /// Records in a section so far.
    pub fn count(&self, section: Section) -> u16 {
        self.writer.count(section)
    }

    /// Sets TC.
    pub fn truncate(&mut self) -> Truncated {
        self.writer.set_flag(Flags::TC, true);
        Truncated
    }

    /// True once TC is set.
    pub fn is_truncated(&self) -> bool {
        self.writer.flags().has(Flags::TC)
    }

    /// Writes an RRset (and its RRSIGs when DO is set) that the response needs: on
    /// overflow the RRset is taken out again and TC is set.
    pub fn must(
        &mut self,
        section: Section,
        owner: &Dname,
        rrset: &Rrset<'_>,
        ttl: u32,
    ) -> Result<(), Truncated> {
        let mark = self.writer.mark();
        match self.put(section, owner, rrset, ttl) {
            Ok(()) => Ok(()),
            Err(()) => {
                self.writer.rollback(mark);
                Err(self.truncate())
            }
        }
    }

    /// [`must`](Self::must) for an RRset (with its signatures) of a node one label below
    /// `origin`, the apex of the zone answering the question (an NSEC3 record's owner,
    /// RFC 5155 §3): the label is written and the rest points to the apex in the
    /// question, without a compression lookup. Any other owner is written as `must`
    /// writes it.
    pub fn must_below_apex(
        &mut self,
        section: Section,
        owner: &Dname,
        origin: &Dname,
        rrset: &Rrset<'_>,
    ) -> Result<(), Truncated> {
        let apex_at = self.apex_at(origin);
        let label = owner
            .parent()
            .filter(|p| p.eq_ignore_case(origin))
            .and_then(|p| owner.as_wire().get(..owner.len() - p.len()));
        let (Some(at), Some(label), true) = (apex_at, label, rrset.has_records()) else {
            return self.must(section, owner, rrset, rrset.ttl);
        };
        let owner = Owner::Under(label, at);
        let head = RrsetHead { owner, rtype: rrset.rtype, class: IN, ttl: rrset.ttl };
        let w = &mut self.writer;
        // Both calls write all or nothing. (The same choice as `put_at` makes: sharing it
        // through one helper cost 20–55 instructions per answer in callgrind, inlining.)
        let written = if self.dnssec && rrset.sig_count > 0 {
            w.push_signed_rrset(section, &head, rrset.rdatas(), &mut [], rrset.sigs())
        } else {
            w.push_rrset(section, &head, rrset.rdatas(), &mut [])
        };
        written.map(drop).map_err(|_| self.truncate())
    }

    /// Writes a prepared RRset whose owner sits under the name at `at` (an NSEC3 record
    /// and its signatures under the apex in the question); on overflow it is taken out
    /// again and TC is set.
    pub fn must_prepared(
        &mut self,
        section: Section,
        prepared: &PreparedRrset,
        at: u16,
    ) -> Result<(), Truncated> {
        let written = self.writer.push_prepared_rrset(section, prepared, at);
        written.map(drop).map_err(|_| self.truncate())
    }

    /// Declares `origin` the origin of a zone the question's name is at or below (the
    /// caller found the zone by that name): [`Response::apex_at`] then knows where it is.
    pub fn question_zone(&mut self, origin: &Dname) {
        let at = self.qname_len.checked_sub(origin.len()).map(|tail| usize::from(QNAME_AT) + tail);
        self.question_apex = at
            .and_then(|at| u16::try_from(at).ok())
            .map(|at| (origin.as_wire().as_ptr() as usize, at));
    }

    /// Declares `owner` (this very value) the name of a zone cut above `name`, found by
    /// looking `name` up: when `name` is the question's name, `owner` is its tail, so the
    /// referral's records point their owners into the question (in its spelling) without
    /// a compression lookup.
    pub fn cut_above(&mut self, name: &Dname, owner: &Dname) {
        let is_question = name.as_wire().as_ptr() as usize == self.qname_addr;
        let tail = self.qname_len.checked_sub(owner.len()).filter(|_| is_question);
        debug_assert!(tail.is_none_or(|t| name
            .as_wire()
            .get(t..)
            .is_some_and(|w| { tern_wire::ascii::eq_ignore_case(w, owner.as_wire()) })));
        self.cut = tail
            .and_then(|tail| u16::try_from(usize::from(QNAME_AT) + tail).ok())
            .map(|at| (owner.as_wire().as_ptr() as usize, at));
    }

    /// Where `origin` (this very value) is in the message, when it is the origin given to
    /// [`Response::question_zone`]: the question's tail, in the question's spelling.
    #[inline]
    pub fn apex_at(&self, origin: &Dname) -> Option<u16> {
        let addr = origin.as_wire().as_ptr() as usize;
        self.question_apex.filter(|&(a, _)| a == addr).map(|(_, at)| at)
    }

    /// Writes the zone's prepared negative SOA, the apex being at `apex_at`, and the RRSIGs
    /// of `signed` (the SOA RRset, given when DO is set); on overflow it is taken out
    /// again and TC is set.
    pub fn must_negative_soa(
        &mut self,
        soa: &NegativeSoa,
        apex: &Dname,
        apex_at: u16,
        signed: Option<&Rrset<'_>>,
        ttl: u32,
    ) -> Result<(), Truncated> {
        let mark = self.writer.mark();
        let section = Section::Authority;
        let mut fields = [0; 12];
        let (record, slots) = soa.record(ttl, &mut fields);
        let written = self.writer.push_prepared(section, record, slots, apex_at);
        let all = written.map_err(drop).and_then(|owner_at| match signed {
            Some(rrset) => self.sigs(section, apex, owner_at, rrset, ttl),
            None => Ok(()),
        });
        all.map_err(|()| {
            self.writer.rollback(mark);
            self.truncate()
        })
    }

    /// Writes an RRset if it fits; returns false (without TC) when it does not.
    /// `owner_at`, when known, is where the owner already is in the message.
    pub fn may(
        &mut self,
        section: Section,
        owner: &Dname,
        owner_at: Option<u16>,
        rrset: &Rrset<'_>,
    ) -> bool {
        let mark = self.writer.mark();
        let fits = self.put_at(section, owner, owner_at, rrset, rrset.ttl).is_ok();
        if !fits {
            self.writer.rollback(mark);
        }
        fits
    }

    /// Where the first RDATA name of record `i` of the last RRset written decodes from.
    pub fn name_at(&self, i: usize) -> Option<NonZeroU16> {
        self.names_at.get(i).copied().flatten()
    }

    /// A mark to roll back to.
    pub fn mark(&self) -> Mark {
        self.writer.mark()
    }

    /// Undoes everything written since `mark`.
    pub fn rollback(&mut self, mark: Mark) {
        self.writer.rollback(mark);
    }

    fn put(
        &mut self,
        section: Section,
        owner: &Dname,
        rrset: &Rrset<'_>,
        ttl: u32,
    ) -> Result<(), ()> {
        let owner_at = self.known_owner(owner);
        self.put_at(section, owner, owner_at, rrset, ttl)
    }

    fn put_at(
        &mut self,
        section: Section,
        owner: &Dname,
        mut owner_at: Option<u16>,
        rrset: &Rrset<'_>,
        ttl: u32,
    ) -> Result<(), ()> {
        if rrset.has_records() {
            // The writer sets an entry per record written, and only those are read.
            let names_at = if has_targets(rrset.rtype) { &mut self.names_at[..] } else { &mut [] };
            let head =
                RrsetHead { owner: owner_ref(owner, owner_at), rtype: rrset.rtype, class: IN, ttl };
            let w = &mut self.writer;
            let one_name = is_one_name(rrset.rtype);
            let signed = self.dnssec && rrset.sig_count > 0 && !one_name;
            let written = if one_name {
                // Validated when stored: no need to parse the RDATA again.
                let names = rrset.rdatas().map(|rd| Dname::from_stored(rd).unwrap_or(Dname::ROOT));
                w.push_name_rrset(section, &head, names, names_at)
            } else if signed {
                w.push_signed_rrset(section, &head, rrset.rdatas(), names_at, rrset.sigs())
            } else {
                w.push_rrset(section, &head, rrset.rdatas(), names_at)
            };
            owner_at = written.map_err(drop)?;
            if signed {
                return Ok(()); // the signatures went with it
            }
        }
        if self.dnssec {
            self.sigs(section, owner, owner_at, rrset, ttl)?;
        }
        Ok(())
    }

    /// Where `owner` already is in the message without a lookup: the question's name, or
    /// the name a chain is following (see [`Response::alias`]).
    #[inline]
    fn known_owner(&self, owner: &Dname) -> Option<u16> {
        let addr = owner.as_wire().as_ptr() as usize;
        if addr == self.qname_addr {
            return Some(QNAME_AT);
        }
        let known = |slot: Option<(usize, u16)>| slot.filter(|&(a, _)| a == addr);
        known(self.alias).or(known(self.cut)).map(|(_, at)| at)
    }

    /// Declares that `name` (this very value) is already in the message at `at`: the
    /// target of the CNAME a chain follows, so records owned by it point there.
    pub fn alias(&mut self, name: &Dname, at: Option<u16>) {
        self.alias = at.map(|at| (name.as_wire().as_ptr() as usize, at));
    }

    /// Writes one record, pointing to its owner when it is already in the message;
    /// returns where the owner now is, for the records that follow.
    #[inline]
    fn record(
        &mut self,
        section: Section,
        owner: &Dname,
        owner_at: Option<u16>,
        rtype: Rtype,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<Option<u16>, ()> {
        let w = &mut self.writer;
        let written = match owner_at {
            Some(at) => w.push_record_at(section, at, rtype, Class::IN, ttl, rdata),
            None => w.push_record(section, owner, rtype, Class::IN, ttl, rdata),
        };
        written.map_err(drop)?;
        Ok(self.writer.last_owner_at())
    }

    /// Writes the RRSIGs of an RRset (RFC 4035 §3.1.1), with the TTL the RRset is given.
    fn sigs(
        &mut self,
        section: Section,
        owner: &Dname,
        owner_at: Option<u16>,
        rrset: &Rrset<'_>,
        ttl: u32,
    ) -> Result<(), ()> {
        let ttl = if rrset.has_records() { ttl } else { rrset.sig_ttl };
        if rrset.sig_count == 0 {
            return Ok(());
        }
        let head =
            RrsetHead { owner: owner_ref(owner, owner_at), rtype: Rtype::RRSIG, class: IN, ttl };
        self.writer.push_rrset(section, &head, rrset.sigs(), &mut []).map_err(drop)?;
        Ok(())
    }

    /// Writes the RRSIGs of an RRset whatever DO says (a query for type RRSIG).
    pub fn must_sigs(
        &mut self,
        section: Section,
        owner: &Dname,
        rrset: &Rrset<'_>,
    ) -> Result<(), Truncated> {
        let mark = self.writer.mark();
        let owner_at = self.known_owner(owner);
        if self.sigs(section, owner, owner_at, rrset, rrset.sig_ttl).is_err() {
            self.writer.rollback(mark);
            return Err(self.truncate());
        }
        Ok(())
    }

    /// Writes one record the response needs (a synthesized CNAME).
    pub fn must_record(
        &mut self,
        section: Section,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<(), Truncated> {
        let owner_at = self.known_owner(owner);
        match self.record(section, owner, owner_at, rtype, ttl, rdata) {
            Ok(_) => {
                if let Some(slot) = self.names_at.first_mut() {
                    *slot = self.writer.last_rdata_name_at().and_then(NonZeroU16::new);
                }
                Ok(())
            }
            Err(()) => Err(self.truncate()),
        }
    }
}
