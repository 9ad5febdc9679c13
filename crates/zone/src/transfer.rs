//! Reading a zone transfer as a secondary receives it: the records of an AXFR (RFC 5936)
//! or IXFR (RFC 1995) response stream, in order, turned into a new zone or a list of
//! changesets. Messages, TSIG and sockets are the caller's; this is only what the
//! records mean.
//!
//! * AXFR: the SOA, every record, the SOA again. The records go straight into a
//!   [`ZoneBuilder`], so a large zone is never held twice, and its nodes are encoded as
//!   their records arrive ([`ZoneBuilder::work_ahead`]), so that little is left after
//!   the last message.
//! * IXFR: the server's SOA first. A lone SOA (or one not newer than ours) means we are
//!   up to date. If the next record is an SOA with our serial, difference sequences
//!   follow — old SOA, removed records, new SOA, added records — until the server's SOA
//!   comes again. Anything else is an AXFR-style answer (§4: the whole zone).
//!
//! Every record is checked: class IN, RDATA well-formed for its type, no record after
//! the end. A record outside the zone is ignored, in an AXFR and an IXFR alike, and
//! counted ([`Incoming::outside`]) for the caller to log: it is no part of the zone (RFC
//! 1035 §5.2 says the same of zone files, which load with a warning), so it is not served
//! whatever is done with it, and refusing the transfer for it would only keep an older
//! version (as Knot DNS, which ignores such records with a warning). Limits on size are
//! the caller's (it counts messages and bytes).

use tern_wire::message::RecordIn;
use tern_wire::{rdata, Class, Dname, Name, Rtype};

use crate::builder::ZoneBuilder;
use crate::changeset::{Changeset, RecordData};
use crate::contents::ZoneContents;
use crate::error::Error;
use crate::records::{serial_gt, soa_serial};
use crate::report::Report;

/// What a finished transfer brought.
#[derive(Debug)]
pub enum Received {
    /// The server has nothing newer than our serial.
    UpToDate {
        /// The server's serial.
        serial: u32,
    },
    /// A whole zone (AXFR, or IXFR answered AXFR-style), built and checked.
    Full(Box<ZoneContents>, Report),
    /// Changes to apply in order, oldest first.
    Changes(Vec<Changeset>),
}

/// Where the stream is.
#[derive(Debug)]
enum State {
    /// Nothing read yet.
    Start,
    /// IXFR: the server's SOA read; the next record decides the answer's form.
    Decide,
    /// A whole zone is being read.
    Full(Box<ZoneBuilder>),
    /// IXFR difference sequences: removing while `adding` is false.
    Diffs { done: Vec<Changeset>, current: Option<Changeset>, adding: bool },
    /// The closing SOA was read.
    Done(Box<Outcome>),
}

/// The finished transfer, before the zone is built.
#[derive(Debug)]
enum Outcome {
    UpToDate,
    Full(Box<ZoneBuilder>),
    Changes(Vec<Changeset>),
}

/// One transfer being read.
#[derive(Debug)]
pub struct Incoming {
    origin: Name,
    /// Our serial, for IXFR; `None` for AXFR.
    ours: Option<u32>,
    /// The server's SOA (the first record).
    soa: Option<RecordData>,
    state: State,
    records: u64,
    outside: Outside,
}

/// The records of a transfer that were outside the zone, and ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outside {
    /// How many.
    pub count: u64,
    /// The first of them: its owner and type (`stray.example. A`).
    pub first: Option<String>,
}

/// A transfer that cannot be used; the message says why.
fn broken(what: impl std::fmt::Display) -> Error {
    Error::Record(format!("transfer: {what}"))
}

impl Incoming {
    /// Reading an AXFR of `origin`.
    pub fn axfr(origin: &Dname) -> Incoming {
        Incoming {
            origin: origin.to_name(),
            ours: None,
            soa: None,
            state: State::Start,
            records: 0,
            outside: Outside::default(),
        }
    }

    /// Reading the answer to an IXFR of `origin` asked from serial `ours`.
    pub fn ixfr(origin: &Dname, ours: u32) -> Incoming {
        Incoming { ours: Some(ours), ..Incoming::axfr(origin) }
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The records outside the zone read so far (ignored).
    pub fn outside(&self) -> &Outside {
        &self.outside
    }

    /// True once the closing SOA has been read.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// The server's serial, once its SOA has been read.
    pub fn serial(&self) -> Option<u32> {
        self.soa.as_ref().and_then(RecordData::soa_serial)
    }

    /// Reads the next record of the stream.
    pub fn record(
        &mut self,
        owner: &Dname,
        rtype: Rtype,
        class: Class,
        ttl: u32,
        data: &[u8],
    ) -> Result<(), Error> {
        check(owner, rtype, class, Some(data))?;
        self.add(owner, rtype, ttl, data)
    }

    /// Reads the next record of the stream as [`MessageReader::record_in`] read it: its
    /// RDATA is not walked again when reading it checked all of it
    /// ([`RecordIn::rdata_checked`]: NS, SOA, MX, …, most of a zone).
    ///
    /// [`MessageReader::record_in`]: tern_wire::message::MessageReader::record_in
    pub fn record_read(&mut self, record: &RecordIn<'_, '_>) -> Result<(), Error> {
        let RecordIn { owner, rtype, class, ttl, rdata, rdata_checked, .. } = *record;
        check(owner, rtype, class, (!rdata_checked).then_some(rdata))?;
        self.add(owner, rtype, ttl, rdata)
    }

    /// The next record, checked.
    fn add(&mut self, owner: &Dname, rtype: Rtype, ttl: u32, data: &[u8]) -> Result<(), Error> {
        self.records += 1;
        let started = !matches!(self.state, State::Start | State::Done(_));
        if started && !owner.ends_with(&self.origin) {
            self.ignore_outside(owner, rtype);
            return Ok(());
        }
        // The common case, a record of a whole zone, is added in place: the state is
        // not moved out and back for each record.
        let closing = rtype == Rtype::SOA && self.closes(owner, soa_serial(data));
        if let State::Full(builder) = &mut self.state {
            if !closing {
                builder.add(owner, rtype, ttl, data);
                builder.work_ahead();
                return Ok(());
            }
        }
        let state = std::mem::replace(&mut self.state, State::Start);
        self.state = self.step(state, owner, rtype, ttl, data)?;
        Ok(())
    }

    /// Counts a record outside the zone (see the module comment).
    #[cold]
    fn ignore_outside(&mut self, owner: &Dname, rtype: Rtype) {
        self.outside.count += 1;
        if self.outside.first.is_none() {
            self.outside.first = Some(format!("{owner} {rtype}"));
        }
    }

    /// One record in one state.
    fn step(
        &mut self,
        state: State,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        data: &[u8],
    ) -> Result<State, Error> {
        let serial = (rtype == Rtype::SOA).then(|| soa_serial(data)).flatten();
        match state {
            State::Start => self.first(owner, rtype, ttl, data),
            State::Decide => Ok(self.decide(owner, rtype, ttl, data, serial)),
            State::Full(builder) if self.closes(owner, serial) => {
                Ok(State::Done(Box::new(Outcome::Full(builder))))
            }
            State::Full(mut builder) => {
                builder.add(owner, rtype, ttl, data);
                Ok(State::Full(builder))
            }
            State::Diffs { done, current, adding } => {
                self.diff_step(done, current, adding, record(owner, rtype, ttl, data), serial)
            }
            State::Done(_) => Err(broken(format!("{owner} {rtype} after the closing SOA"))),
        }
    }

    /// The first record must be the zone's SOA.
    fn first(
        &mut self,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        data: &[u8],
    ) -> Result<State, Error> {
        if rtype != Rtype::SOA || !owner.eq_ignore_case(&self.origin) {
            return Err(broken(format!(
                "starts with {owner} {rtype}, not the SOA of {}",
                self.origin
            )));
        }
        self.soa = Some(record(owner, rtype, ttl, data));
        let theirs = soa_serial(data).ok_or_else(|| broken("the SOA is malformed"))?;
        match self.ours {
            None => Ok(self.start_full(owner, rtype, ttl, data)),
            // RFC 1995 §2: not newer than ours, nothing to transfer.
            Some(ours) if !serial_gt(theirs, ours) => Ok(State::Done(Box::new(Outcome::UpToDate))),
            Some(_) => Ok(State::Decide),
        }
    }

    fn start_full(&self, owner: &Dname, rtype: Rtype, ttl: u32, data: &[u8]) -> State {
        let mut builder = ZoneBuilder::for_transfer(&self.origin);
        builder.add(owner, rtype, ttl, data);
        State::Full(Box::new(builder))
    }

    /// IXFR: after the server's SOA, an SOA with our serial starts difference sequences;
    /// the server's SOA again is an empty answer (RFC 1995 §4: a lone SOA over TCP is
    /// read as "up to date"); anything else is the zone, AXFR-style.
    fn decide(
        &self,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        data: &[u8],
        serial: Option<u32>,
    ) -> State {
        let Some(soa) = &self.soa else { return State::Start };
        if serial.is_some() && serial == self.ours && owner.eq_ignore_case(&self.origin) {
            let current = Changeset {
                soa_from: Some(record(owner, rtype, ttl, data)),
                ..Changeset::default()
            };
            return State::Diffs { done: Vec::new(), current: Some(current), adding: false };
        }
        if self.closes(owner, serial) {
            return State::Done(Box::new(Outcome::UpToDate));
        }
        let mut builder = ZoneBuilder::for_transfer(&self.origin);
        builder.add(&soa.owner, soa.rtype, soa.ttl, &soa.rdata);
        builder.add(owner, rtype, ttl, data);
        State::Full(Box::new(builder))
    }

    /// True for the closing record: the apex SOA with the server's serial.
    fn closes(&self, owner: &Dname, serial: Option<u32>) -> bool {
        serial.is_some() && serial == self.serial() && owner.eq_ignore_case(&self.origin)
    }

    /// One record of the difference sequences.
    fn diff_step(
        &self,
        mut done: Vec<Changeset>,
        current: Option<Changeset>,
        adding: bool,
        rec: RecordData,
        serial: Option<u32>,
    ) -> Result<State, Error> {
        let apex_soa = serial.is_some() && rec.owner.eq_ignore_case(&self.origin);
        let Some(mut change) = current else {
            // Between sequences: the server's SOA ends the answer, another SOA starts one.
            if self.closes(&rec.owner, serial) {
                return Ok(State::Done(Box::new(Outcome::Changes(done))));
            }
            if !apex_soa {
                return Err(broken(format!(
                    "{} {} where a sequence should start",
                    rec.owner, rec.rtype
                )));
            }
            self.check_continues(&done, serial)?;
            let change = Changeset { soa_from: Some(rec), ..Changeset::default() };
            return Ok(State::Diffs { done, current: Some(change), adding: false });
        };
        match (apex_soa, adding) {
            (true, false) => {
                change.soa_to = Some(rec);
                Ok(State::Diffs { done, current: Some(change), adding: true })
            }
            (true, true) => {
                done.push(change);
                self.diff_step(done, None, false, rec, serial)
            }
            (false, false) => {
                change.removed.push(rec);
                Ok(State::Diffs { done, current: Some(change), adding })
            }
            (false, true) => {
                change.added.push(rec);
                Ok(State::Diffs { done, current: Some(change), adding })
            }
        }
    }

    /// A sequence must start where the one before ended.
    fn check_continues(&self, done: &[Changeset], serial: Option<u32>) -> Result<(), Error> {
        let expected = done.last().and_then(Changeset::to_serial).or(self.ours);
        if serial != expected {
            return Err(broken(format!(
                "a difference sequence starts at serial {serial:?}, expected {expected:?}"
            )));
        }
        Ok(())
    }

    /// Ends the transfer: the zone is built and checked (semantic errors refuse it), or
    /// the changes are returned. An unfinished stream is an error.
    pub fn finish(self) -> Result<Received, Error> {
        let serial = self.serial().unwrap_or(0);
        let State::Done(outcome) = self.state else {
            return Err(broken("the stream ended before the closing SOA"));
        };
        match *outcome {
            Outcome::UpToDate => Ok(Received::UpToDate { serial }),
            Outcome::Changes(changes) => Ok(Received::Changes(changes)),
            Outcome::Full(builder) => {
                let (zone, report) = builder.finish()?;
                Ok(Received::Full(Box::new(zone), report))
            }
        }
    }
}

/// Refuses a record of another class than IN, or with malformed RDATA (`unchecked`: the
/// RDATA still to check, if any).
fn check(owner: &Dname, rtype: Rtype, class: Class, unchecked: Option<&[u8]>) -> Result<(), Error> {
    if class != Class::IN {
        return Err(broken(format!("{owner} {rtype} has class {class}, not IN")));
    }
    match unchecked.map(|data| rdata::validate(rtype, data)) {
        Some(Err(e)) => Err(broken(format!("{owner} {rtype} has malformed RDATA: {e}"))),
        _ => Ok(()),
    }
}

fn record(owner: &Dname, rtype: Rtype, ttl: u32, data: &[u8]) -> RecordData {
    let ttl = crate::records::rfc2181_ttl(ttl); // as the zone holds it, for the history
    RecordData { owner: owner.to_name(), rtype, ttl, rdata: data.to_vec() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(incoming: &mut Incoming, lines: &[&str]) -> Result<(), Error> {
        let origin: Name = "example.".parse().unwrap();
        for line in lines {
            let mut parts = line.splitn(4, ' ');
            let owner = Name::parse_text(parts.next().unwrap().as_bytes(), Some(&origin)).unwrap();
            let ttl: u32 = parts.next().unwrap().parse().unwrap();
            let rtype = Rtype::from_mnemonic(parts.next().unwrap().as_bytes()).unwrap();
            let data = rdata::parse_str(rtype, parts.next().unwrap(), Some(&origin)).unwrap();
            incoming.record(&owner, rtype, Class::IN, ttl, &data)?;
        }
        Ok(())
    }

    const SOA1: &str = "example. 60 SOA ns1 h 1 60 60 600 60";
    const SOA2: &str = "example. 60 SOA ns1 h 2 60 60 600 60";
    const SOA3: &str = "example. 60 SOA ns1 h 3 60 60 600 60";
    const NS: &str = "example. 60 NS ns1";
    const GLUE: &str = "ns1 60 A 192.0.2.53";

    fn origin() -> Name {
        "example.".parse().unwrap()
    }

    #[test]
    fn axfr_builds_the_zone() {
        let mut t = Incoming::axfr(&origin());
        feed(&mut t, &[SOA2, NS, GLUE, "www 60 A 192.0.2.1", SOA2]).unwrap();
        assert!(t.is_done());
        let Received::Full(zone, _) = t.finish().unwrap() else { panic!("not full") };
        assert_eq!((zone.serial(), zone.record_count()), (2, 4));
    }

    #[test]
    fn ixfr_sequences_become_changesets() {
        let mut t = Incoming::ixfr(&origin(), 1);
        feed(
            &mut t,
            &[
                SOA3,
                SOA1,
                "a 60 A 192.0.2.1",
                SOA2,
                "b 60 A 192.0.2.2",
                SOA2,
                SOA3,
                "c 60 A 192.0.2.3",
                SOA3,
            ],
        )
        .unwrap();
        let Received::Changes(changes) = t.finish().unwrap() else { panic!("not changes") };
        assert_eq!(changes.len(), 2);
        assert_eq!((changes[0].from_serial(), changes[0].to_serial()), (Some(1), Some(2)));
        assert_eq!((changes[0].removed.len(), changes[0].added.len()), (1, 1));
        assert_eq!((changes[1].from_serial(), changes[1].to_serial()), (Some(2), Some(3)));
        assert_eq!((changes[1].removed.len(), changes[1].added.len()), (0, 1));
    }

    #[test]
    fn ixfr_forms_up_to_date_and_full() {
        let mut lone = Incoming::ixfr(&origin(), 2);
        feed(&mut lone, &[SOA2]).unwrap();
        assert!(matches!(lone.finish().unwrap(), Received::UpToDate { serial: 2 }));
        let mut full = Incoming::ixfr(&origin(), 1);
        feed(&mut full, &[SOA3, NS, GLUE, SOA3]).unwrap();
        assert!(matches!(full.finish().unwrap(), Received::Full(z, _) if z.serial() == 3));
    }

    #[test]
    fn broken_streams_are_errors() {
        let mut t = Incoming::axfr(&origin());
        assert!(feed(&mut t, &[NS]).is_err(), "must start with the SOA");
        let mut t = Incoming::axfr(&origin());
        feed(&mut t, &[SOA2, NS]).unwrap();
        assert!(t.finish().is_err(), "no closing SOA");
        let mut t = Incoming::axfr(&origin());
        feed(&mut t, &[SOA2, NS, GLUE, SOA2]).unwrap();
        assert!(feed(&mut t, &[GLUE]).is_err(), "record after the end");
        let mut t = Incoming::ixfr(&origin(), 1);
        assert!(feed(&mut t, &[SOA3, SOA1, SOA2, SOA1, SOA3, SOA3]).is_err(), "gap");
        let mut t = Incoming::axfr(&origin());
        let soa = rdata::parse_str(Rtype::SOA, "ns1 h 2 60 60 600 60", Some(&origin())).unwrap();
        assert!(t.record(&origin(), Rtype::SOA, Class::CH, 60, &soa).is_err(), "class");
        assert!(t.record(&origin(), Rtype::A, Class::IN, 60, &[1, 2, 3]).is_err(), "RDATA");
    }

    /// Issue 49: a record outside the zone was dropped silently in an AXFR and refused
    /// the whole IXFR; both now ignore it and count it.
    #[test]
    fn records_outside_the_zone_are_ignored_and_counted_in_axfr_and_ixfr() {
        let stray = "stray.other. 60 A 192.0.2.9";
        let mut axfr = Incoming::axfr(&origin());
        feed(&mut axfr, &[SOA2, NS, stray, GLUE, stray, SOA2]).unwrap();
        let first = Some("stray.other. A".to_owned());
        assert_eq!(*axfr.outside(), Outside { count: 2, first: first.clone() });
        let Received::Full(zone, _) = axfr.finish().unwrap() else { panic!("not full") };
        assert_eq!(zone.record_count(), 3);
        let mut ixfr = Incoming::ixfr(&origin(), 1);
        feed(&mut ixfr, &[SOA2, SOA1, stray, SOA2, "a 60 A 192.0.2.1", stray, SOA2]).unwrap();
        assert_eq!(*ixfr.outside(), Outside { count: 2, first });
        let Received::Changes(changes) = ixfr.finish().unwrap() else { panic!("not changes") };
        assert_eq!((changes[0].removed.len(), changes[0].added.len()), (0, 1));
        let mut lone = Incoming::ixfr(&origin(), 1);
        feed(&mut lone, &[SOA2, stray, NS, GLUE, SOA2]).unwrap();
        assert!(matches!(lone.finish().unwrap(), Received::Full(z, _) if z.record_count() == 3));
    }

    /// A record as `MessageReader::record_in` gives it.
    fn read<'r>(
        owner: &'r Dname,
        rtype: Rtype,
        rdata: &'r [u8],
        checked: bool,
    ) -> RecordIn<'r, 'r> {
        let section = tern_wire::message::Section::Answer;
        let (class, ttl, rdata_checked) = (Class::IN, 60, checked);
        RecordIn {
            section,
            offset: 0,
            owner,
            rtype,
            class,
            ttl,
            rdata,
            rdata_offset: 0,
            end: 0,
            rdata_checked,
        }
    }

    #[test]
    fn records_read_from_messages_are_validated_unless_reading_checked_them() {
        let owner = origin();
        let soa = rdata::parse_str(Rtype::SOA, "ns1 h 1 60 60 600 60", Some(&owner)).unwrap();
        let mut t = Incoming::axfr(&owner);
        t.record_read(&read(&owner, Rtype::SOA, &soa, true)).unwrap();
        t.record_read(&read(&owner, Rtype::NS, b"\x03ns1\0", true)).unwrap();
        let bad = t.record_read(&read(&owner, Rtype::A, &[1, 2, 3], false)).unwrap_err();
        assert!(bad.to_string().contains("malformed RDATA"), "{bad}");
    }
}
