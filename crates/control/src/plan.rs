//! What the control plane is told about each zone: its plan, resolved from the
//! configuration by the server (names checked, remotes and keys found, a template's
//! settings applied), so that nothing here reads a configuration file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tern_engine::{Rule, UpdatePolicy};
use tern_wire::tsig::Key;
use tern_wire::Name;
use tern_zone::HistoryLimits;

/// Where a zone's master data is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneSource {
    /// A zone file (RFC 1035 §5).
    File(PathBuf),
    /// Zone-file text built into the binary (`ternd demo`).
    Embedded(&'static str),
    /// A catalog zone written by this server, of these members (RFC 9432).
    Catalog(Arc<[CatalogMember]>),
    /// A zone built by a Lua script ([`crate::script`]).
    Script(Arc<Script>),
    /// A zone whose records live in a database ([`crate::database`]).
    Database(Arc<crate::database::Database>),
}

/// A zone's script and its bounds ([`crate::script`] runs it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Script {
    /// The Lua file.
    pub path: PathBuf,
    /// Bytes Lua may allocate (and the records emitted may take).
    pub max_memory: usize,
    /// Lua instructions a run may execute.
    pub max_instructions: u64,
}

impl Script {
    /// `path` with the default bounds: 256 MiB, a billion instructions (a few seconds).
    pub fn new(path: PathBuf) -> Script {
        Script { path, max_memory: 256 << 20, max_instructions: 1_000_000_000 }
    }
}

/// A remote with its key resolved.
#[derive(Debug, Clone)]
pub struct Remote {
    /// Its id in the configuration.
    pub id: String,
    /// Its addresses, in order.
    pub addrs: Vec<SocketAddr>,
    /// The key to sign with.
    pub key: Option<Key>,
    /// The local addresses to send from (`via`): the first of an address's family is
    /// used for it; none of its family, the kernel chooses.
    pub via: Vec<std::net::IpAddr>,
    /// Reached over TLS (RFC 9103): `addrs` are then its TLS addresses (port 853
    /// unless written), used for SOA queries, transfers and forwarded updates.
    pub tls: Option<crate::peer::Tls>,
}

impl Remote {
    /// The local address to send to `addr` from, when `via` has one of its family.
    pub fn source_for(&self, addr: SocketAddr) -> Option<std::net::IpAddr> {
        self.via.iter().copied().find(|via| via.is_ipv4() == addr.is_ipv4())
    }

    /// `addr` (one of `addrs`) as a peer: its key, `via` and TLS.
    pub fn peer(&self, addr: SocketAddr) -> crate::peer::Peer<'_> {
        crate::peer::Peer {
            addr,
            key: self.key.as_ref(),
            source: self.source_for(addr),
            tls: self.tls.as_ref(),
        }
    }

    /// Where NOTIFY to `addr` (one of `addrs`) goes: `addr` itself, or for a remote
    /// reached over TLS, port 53 of its IP, since NOTIFY stays on UDP (RFC 9103
    /// changes only transfers) and `addrs` name TLS ports.
    pub fn notify_addr(&self, addr: SocketAddr) -> SocketAddr {
        match self.tls {
            Some(_) => SocketAddr::new(addr.ip(), 53),
            None => addr,
        }
    }
}

/// How a zone gets its data.
#[derive(Debug, Clone)]
pub enum Role {
    /// From its zone file.
    Primary,
    /// By transfer from these primaries (in order), kept in its zone file.
    Secondary(Vec<Remote>),
}

/// Bounds on a secondary's SOA timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerBounds {
    /// Refresh interval bounds.
    pub refresh: (Duration, Duration),
    /// Retry interval bounds.
    pub retry: (Duration, Duration),
}

impl TimerBounds {
    /// The bounds of a zone that sets none (`refresh-min` … `retry-max`): 2 s to a day.
    pub const DEFAULT: TimerBounds = TimerBounds {
        refresh: (Duration::from_secs(2), Duration::from_secs(86_400)),
        retry: (Duration::from_secs(2), Duration::from_secs(86_400)),
    };
}

/// Default `zonefile-sync`: updates reach the zone file within a minute (the journal
/// has them at once).
pub const ZONEFILE_SYNC: ZonefileSync = ZonefileSync::After(Duration::from_secs(60));

/// When a primary's zone file is written with the changes it lacks (`zonefile-sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZonefileSync {
    /// This long after the first change it lacks (zero: after every change).
    After(Duration),
    /// Never: the file stays as its author wrote it, and the journal keeps the changes
    /// for good (compacted into one difference from the file).
    Never,
}

impl ZonefileSync {
    /// The delay before a write; `None` when the file is never written.
    pub fn delay(self) -> Option<Duration> {
        match self {
            ZonefileSync::After(delay) => Some(delay),
            ZonefileSync::Never => None,
        }
    }
}

/// Everything the control plane needs about one zone: its name and source, and its
/// settings, shared with every zone that takes the same ones (the zones that only name
/// a template share that template's, resolved once). `plan.notify` and the other
/// settings read through [`Deref`](std::ops::Deref); a change through
/// [`DerefMut`](std::ops::DerefMut) gives the plan its own copy first.
#[derive(Debug, Clone)]
pub struct ZonePlan {
    /// The zone's apex.
    pub name: Name,
    /// Its zone file (the source of a primary, the kept copy of a secondary).
    pub source: ZoneSource,
    /// Its settings, shared.
    pub settings: Arc<ZoneSettings>,
}

/// A zone's settings, resolved from its template's and its own (see [`ZonePlan`]).
#[derive(Debug, Clone)]
pub struct ZoneSettings {
    /// Primary or secondary.
    pub role: Role,
    /// Targets of NOTIFY.
    pub notify: Vec<Remote>,
    /// Access rules (a secondary's primaries may always notify), shared with the
    /// data plane's access table.
    pub rules: Arc<[Rule]>,
    /// History kept for IXFR.
    pub history: HistoryLimits,
    /// SOA timer bounds.
    pub timers: TimerBounds,
    /// How dynamic updates change the zone.
    pub update: UpdatePolicy,
    /// How soon after a dynamic update the zone file is rewritten, if ever.
    pub zonefile_sync: ZonefileSync,
    /// NOTIFY the zone's name servers too (`notify-ns`).
    pub notify_ns: bool,
    /// The zone's part in catalog zones (RFC 9432).
    pub catalog: CatalogRole,
    /// Count the zone's queries by rcode and type (`query-stats`; see
    /// [`crate::query_stats`]).
    pub query_stats: bool,
    /// Signed by this server with this policy (`dnssec-policy`; see [`crate::signer`]).
    pub signing: Option<Arc<SigningPlan>>,
}

impl ZoneSettings {
    /// What the configuration gives a zone that sets nothing else: no NOTIFY targets,
    /// no access rules, the default history, timers and update policy.
    pub fn new(role: Role) -> ZoneSettings {
        ZoneSettings {
            role,
            notify: Vec::new(),
            rules: Arc::from([]),
            history: HistoryLimits::default(),
            timers: TimerBounds::DEFAULT,
            update: UpdatePolicy::default(),
            zonefile_sync: ZONEFILE_SYNC,
            notify_ns: false,
            catalog: CatalogRole::None,
            query_stats: false,
            signing: None,
        }
    }
}

impl ZonePlan {
    /// A plan with the settings of [`ZoneSettings::new`], its own.
    pub fn new(name: Name, source: ZoneSource, role: Role) -> ZonePlan {
        ZonePlan { name, source, settings: Arc::new(ZoneSettings::new(role)) }
    }
}

impl std::ops::Deref for ZonePlan {
    type Target = ZoneSettings;

    fn deref(&self) -> &ZoneSettings {
        &self.settings
    }
}

impl std::ops::DerefMut for ZonePlan {
    /// The plan's own settings: copied first when others share them.
    fn deref_mut(&mut self) -> &mut ZoneSettings {
        Arc::make_mut(&mut self.settings)
    }
}

/// A zone's signing settings, resolved from its `[[policy]]`.
#[derive(Debug, Clone)]
pub struct SigningPlan {
    /// The policy's id, for logs.
    pub id: String,
    /// Keys and timings.
    pub policy: tern_sign::policy::Policy,
    /// NSEC, or NSEC3 (its salt drawn by the signer when `salt_length` is not zero).
    pub denial: tern_sign::DenialConfig,
    /// The NSEC3 salt's length in bytes.
    pub salt_length: u8,
    /// The key directory (each zone has a directory in it).
    pub key_dir: PathBuf,
    /// Threads that sign a whole zone.
    pub threads: usize,
    /// The parent's servers, asked for the zone's DS before a KSK or CSK rollover goes
    /// on (`ksk-submission`); none: the operator says so (`ternctl zone-ksk-submitted`).
    pub parents: Vec<Remote>,
}

impl PartialEq for SigningPlan {
    fn eq(&self, other: &SigningPlan) -> bool {
        let remote = |r: &Remote| (r.id.clone(), r.addrs.clone());
        self.id == other.id
            && self.policy == other.policy
            && self.denial == other.denial
            && self.salt_length == other.salt_length
            && self.key_dir == other.key_dir
            && self.threads == other.threads
            && self.parents.iter().map(remote).eq(other.parents.iter().map(remote))
    }
}

/// A zone's part in catalog zones (RFC 9432).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CatalogRole {
    /// An ordinary zone.
    #[default]
    None,
    /// A catalog whose members this server serves as secondaries.
    Consumer {
        /// `catalog-template`: the members' templates; a member whose group names one
        /// of them takes it, any other the first (none: the `default` template).
        templates: Vec<String>,
        /// The catalog's primaries (`[[remote]]` ids), the members' when their template
        /// names none.
        primaries: Vec<String>,
        /// `catalog-max-members`: the most members served; those listed beyond are not.
        max_members: usize,
    },
    /// A catalog this server writes, of the zones whose `catalog` names it (its
    /// source is [`ZoneSource::Catalog`]).
    Producer,
    /// A member of a catalog this server writes.
    Member {
        /// The catalog.
        catalog: Name,
        /// Its `group` property there.
        group: Option<String>,
    },
}

/// A member of a produced catalog: its name and group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CatalogMember {
    /// The member zone.
    pub zone: Name,
    /// Its `group` property.
    pub group: Option<String>,
}
