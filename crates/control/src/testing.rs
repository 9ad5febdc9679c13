//! Test doubles for the control plane's unit tests: a network that answers nothing,
//! and (with the commit function's tests) an in-memory primary.

use std::time::Duration;

use tern_wire::Dname;
use tern_zone::{Changeset, RecordData};

use crate::peer::{ClientError, Limits, Network, Peer, TransferIn};

/// A network where no remote answers.
#[derive(Debug, Default)]
pub struct NoNetwork;

fn unreachable() -> ClientError {
    ClientError::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
}

impl Network for NoNetwork {
    fn soa_serial(&self, _: Peer<'_>, _: &Dname, _: Duration) -> Result<u32, ClientError> {
        Err(unreachable())
    }

    fn transfer(
        &self,
        _: Peer<'_>,
        _: &Dname,
        _: Option<&RecordData>,
        _: Limits,
    ) -> Result<TransferIn, ClientError> {
        Err(unreachable())
    }

    fn notify(
        &self,
        _: Peer<'_>,
        _: &Dname,
        _: &RecordData,
        _: Duration,
    ) -> Result<(), ClientError> {
        Err(unreachable())
    }

    fn forward(&self, _: Peer<'_>, _: &[u8], _: Duration) -> Result<Vec<u8>, ClientError> {
        Err(unreachable())
    }

    fn addresses(&self, _: &tern_wire::Name) -> std::io::Result<Vec<std::net::IpAddr>> {
        Err(std::io::Error::from(std::io::ErrorKind::NotFound))
    }
}

/// A small zone, `example.com.` at serial 1.
pub const ZONE_TEXT: &str = "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n";

/// A primary's plan for `name`, from `source`.
pub fn primary(
    name: &str,
    source: crate::plan::ZoneSource,
) -> std::sync::Arc<crate::plan::ZonePlan> {
    use crate::plan::{Role, ZonePlan};
    std::sync::Arc::new(ZonePlan::new(name.parse().unwrap(), source, Role::Primary))
}

/// A secondary's plan for `name`, its copy in `storage`, of one primary at `primary`.
pub fn secondary(
    name: &str,
    storage: &std::path::Path,
    primary: std::net::SocketAddr,
) -> std::sync::Arc<crate::plan::ZonePlan> {
    use crate::plan::{Remote, Role, ZonePlan, ZoneSource};
    let name: tern_wire::Name = name.parse().unwrap();
    let copy = tern_journal::files::ZoneFiles::new(storage, &name).zone_copy();
    let remote =
        Remote { id: "p".into(), addrs: vec![primary], key: None, via: Vec::new(), tls: None };
    std::sync::Arc::new(ZonePlan::new(name, ZoneSource::File(copy), Role::Secondary(vec![remote])))
}

/// An UPDATE of `zone`: `records` (owner, type, class, RDATA text) in its update
/// section, after a prerequisite that `owner` has no `rtype` RRset, if given.
pub fn update(
    zone: &str,
    records: &[(&str, tern_wire::Rtype, tern_wire::Class, &str)],
    absent: Option<(&str, tern_wire::Rtype)>,
) -> Vec<u8> {
    use tern_wire::message::{CompressionTable, Flags, MessageWriter, Section};
    use tern_wire::{rdata, Class, Name, Opcode, Rtype};
    let (mut buf, mut table) = (vec![0u8; 512], CompressionTable::new());
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    let mut flags = Flags(0);
    flags.set_opcode(Opcode::UPDATE);
    w.set_flags(flags);
    let name = |text: &str| -> Name { text.parse().unwrap() };
    w.push_question(&name(zone), Rtype::SOA, Class::IN).unwrap();
    if let Some((owner, rtype)) = absent {
        w.push_record(Section::Answer, &name(owner), rtype, Class::NONE, 0, &[]).unwrap();
    }
    for &(owner, rtype, class, text) in records {
        let data = match text.is_empty() {
            true => Vec::new(),
            false => rdata::parse_str(rtype, text, None).unwrap(),
        };
        let ttl = if class == Class::IN { 300 } else { 0 };
        w.push_record(Section::Authority, &name(owner), rtype, class, ttl, &data).unwrap();
    }
    w.finish().to_vec()
}

/// The UPDATE `messages` as the engine hands them over for `zone`, and where each
/// one's answer arrives.
pub fn update_tasks(
    zone: &std::sync::Arc<tern_zone::ZoneContents>,
    messages: &[Vec<u8>],
) -> (Vec<crate::updates::UpdateTask>, Vec<std::sync::mpsc::Receiver<Vec<u8>>>) {
    use std::sync::Arc;
    use tern_engine::ZoneAccess;
    use tern_engine::{Access, Action, Config, Engine, Outcome, Request, Rule, Transport};
    use tern_wire::message::CompressionTable;
    use tern_zone::{ZoneSet, ZoneSlot};
    let slot = Arc::new(ZoneSlot::new(zone.origin()));
    slot.publish(Arc::clone(zone));
    let zones = ZoneSet::new(vec![slot]);
    let engine = Engine::new(Config::default());
    let mut access = Access::default();
    let rule = Rule { actions: vec![Action::Update], ..Rule::default() };
    access.zones.insert((zone.origin().to_name(), ZoneAccess { rules: vec![rule].into() }));
    engine.set_access(access);
    let client: std::net::IpAddr = "127.0.0.1".parse().unwrap();
    let (mut tasks, mut answers) = (Vec::new(), Vec::new());
    for message in messages {
        let request = Request { client, ..Request::new(message, Transport::Tcp) };
        let (mut out, mut table) = (vec![0u8; 65535], CompressionTable::new());
        let Outcome::Update(update) = engine.answer(&zones, &request, &mut out, &mut table) else {
            panic!("not handed over");
        };
        let (reply, answer) = crate::updates::Reply::tcp();
        tasks.push(crate::updates::UpdateTask::new(update, reply));
        answers.push(answer);
    }
    (tasks, answers)
}

/// The RCODE of an answer that arrived at `answer`.
pub fn answered(answer: &std::sync::mpsc::Receiver<Vec<u8>>) -> tern_wire::Rcode {
    let message = answer.recv_timeout(Duration::from_secs(5)).expect("no answer");
    tern_wire::Rcode(u16::from(message[3] & 0x0F))
}

/// A primary in memory: it serves one zone by AXFR, and by IXFR from any serial its
/// history reaches, and counts the NOTIFYs it is sent and the transfers it gives.
#[derive(Debug)]
pub struct MemoryPrimary {
    zone: std::sync::Mutex<std::sync::Arc<tern_zone::ZoneContents>>,
    /// NOTIFYs received.
    pub notifies: std::sync::atomic::AtomicUsize,
    /// Transfers given.
    pub transfers: std::sync::atomic::AtomicUsize,
    /// SOA queries answered.
    pub soa_queries: std::sync::atomic::AtomicUsize,
}

impl MemoryPrimary {
    /// A primary serving `text` as `origin`.
    pub fn new(origin: &str, text: &str) -> std::sync::Arc<MemoryPrimary> {
        let zone = load(origin, text);
        std::sync::Arc::new(MemoryPrimary {
            zone: std::sync::Mutex::new(std::sync::Arc::new(zone)),
            notifies: Default::default(),
            transfers: Default::default(),
            soa_queries: Default::default(),
        })
    }

    /// Changes its zone by `change`, kept in its history.
    pub fn change(&self, change: Changeset) {
        let mut zone = self.zone.lock().unwrap();
        let mut next = tern_zone::ZoneContents::clone(&zone);
        next.apply_in_place(&change).unwrap();
        let history = zone.history().push(std::sync::Arc::new(change), Default::default());
        next.set_history(std::sync::Arc::new(history));
        *zone = std::sync::Arc::new(next);
    }

    /// Its zone now.
    pub fn zone(&self) -> std::sync::Arc<tern_zone::ZoneContents> {
        std::sync::Arc::clone(&self.zone.lock().unwrap())
    }
}

impl Network for MemoryPrimary {
    fn soa_serial(&self, _: Peer<'_>, _: &Dname, _: Duration) -> Result<u32, ClientError> {
        self.soa_queries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(self.zone().serial())
    }

    fn transfer(
        &self,
        _: Peer<'_>,
        _: &Dname,
        soa: Option<&RecordData>,
        _: Limits,
    ) -> Result<TransferIn, ClientError> {
        use tern_zone::transfer::Received;
        self.transfers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let zone = self.zone();
        let ours = soa.and_then(RecordData::soa_serial);
        let path = ours.and_then(|from| zone.history().path(from, zone.serial()));
        let received = match (ours, path) {
            (Some(ours), _) if ours == zone.serial() => Received::UpToDate { serial: ours },
            (_, Some(path)) => Received::Changes(path.into_iter().cloned().collect()),
            _ => {
                Received::Full(Box::new(tern_zone::ZoneContents::clone(&zone)), Default::default())
            }
        };
        let records = zone.record_count() as u64;
        Ok(TransferIn { received, messages: 1, records, bytes: 0, outside: Default::default() })
    }

    fn notify(
        &self,
        _: Peer<'_>,
        _: &Dname,
        _: &RecordData,
        _: Duration,
    ) -> Result<(), ClientError> {
        self.notifies.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn forward(&self, _: Peer<'_>, _: &[u8], _: Duration) -> Result<Vec<u8>, ClientError> {
        Err(unreachable())
    }

    fn addresses(&self, _: &tern_wire::Name) -> std::io::Result<Vec<std::net::IpAddr>> {
        Ok(Vec::new())
    }
}

/// `text` loaded as the zone `origin`.
pub fn load(origin: &str, text: &str) -> tern_zone::ZoneContents {
    let origin: tern_wire::Name = origin.parse().unwrap();
    let path = std::path::Path::new("<test>");
    tern_zone::load_bytes(text.as_bytes(), path, &origin, &Default::default()).unwrap().contents
}

/// A change of `zone`'s SOA from `from` to `to` adding `www2` A 192.0.2.(`to`).
pub fn soa_change(zone: &tern_zone::ZoneContents, to: u32) -> Changeset {
    use tern_wire::{rdata, Rtype};
    let from = zone.soa_record().unwrap();
    let mut next = from.clone();
    next.rdata = tern_zone::records::with_soa_serial(&from.rdata, to).unwrap();
    let owner = format!("www{to}.{}", zone.origin()).parse().unwrap();
    let address = format!("192.0.2.{}", to % 250);
    let added = RecordData {
        owner,
        rtype: Rtype::A,
        ttl: 300,
        rdata: rdata::parse_str(Rtype::A, &address, None).unwrap(),
    };
    Changeset { added: vec![added], ..Changeset::between(from, next) }
}
