//! The daemon's configuration: the TOML file's sections, their defaults, and loading.
//!
//! Every key is documented in `docs/configuration.md`. Unknown keys and bad values are
//! errors that name the file, line and column and give a hint ([`report`]); every table
//! is read on its own, so one file reports all its errors at once (up to
//! [`MAX_ERRORS`]). The same [`Config`] is built by the quick command-line mode and by
//! `ternd demo`. Reading is `read`'s: a large file's `[[zone]]` tables one at a time
//! (`layout`), each planned as it is read (`intake`). Keys, remotes, access rules
//! and templates are in [`xfr`]; rate limiting and cookies in [`defences`]; the HTTP
//! listener in [`http`].

pub mod added_file;
pub mod control;
pub mod database;
pub mod defences;
pub mod files;
pub mod http;
mod intake;
mod layout;
pub mod quic;
mod read;
pub mod report;
pub mod signing;
pub mod tls;
pub mod values;
pub mod xdp;
pub mod xfr;
pub mod xot;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use tern_wire::Name;
use toml::de::DeValue;
use toml::Spanned;
use tracing::level_filters::LevelFilter;

use crate::error::{Error, Result};
pub use control::ControlConfig;
pub use defences::{CookieConfig, RrlConfig};
pub use http::HttpConfig;
pub use quic::QuicConfig;
pub use tern_control::plan::{
    CatalogMember, CatalogRole, Remote, Role, TimerBounds, ZonePlan, ZoneSettings, ZoneSource,
};
pub use tls::{TlsConfig, TlsVersion};
pub use values::{ListenAddr, LogFormat, Toggle};
pub use xdp::{XdpConfig, XdpMode, XdpQueues};
pub use xfr::{Resolved, TransferConfig};

/// Zones read for `zone-add` and their plans, in the same order
/// ([`Config::read_new_zones`]).
pub type NewZones = (Vec<ZoneConfig>, Vec<Arc<ZonePlan>>);

/// Most errors one configuration file reports.
pub const MAX_ERRORS: usize = 20;

/// The whole configuration file.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Listening, workers, privileges, PID file, storage.
    pub server: ServerConfig,
    /// TCP limits (RFC 7766, RFC 7828).
    pub tcp: TcpConfig,
    /// NSID, `version.bind`, `hostname.bind` / `id.server`.
    pub identity: IdentityConfig,
    /// Log level, format and destination.
    pub log: LogConfig,
    /// Limits on zone transfers.
    pub transfer: TransferConfig,
    /// Response rate limiting.
    pub rrl: RrlConfig,
    /// DNS cookies.
    pub cookies: CookieConfig,
    /// The control socket.
    pub control: ControlConfig,
    /// The AF_XDP data plane (off by default).
    pub xdp: XdpConfig,
    /// The HTTP listener (metrics).
    pub http: HttpConfig,
    /// DNS over TLS and the certificate of the encrypted transports.
    pub tls: TlsConfig,
    /// DNS over QUIC.
    pub quic: QuicConfig,
    /// Keys, remotes, access rules and templates as written.
    pub tables: xfr::Tables,
    /// The zones' tables as read, names unique, until they are resolved into
    /// `resolved.zones` (the zones served, in file order); then only those of produced
    /// catalogs are kept ([`Config::producers`]): a zone that joins one changes it.
    zones: Vec<ZoneConfig>,
    /// The databases zones are read from (`[[database]]`).
    pub databases: Vec<Spanned<database::DatabaseConfig>>,
    /// The keys and each zone's plan, checked (see [`xfr::resolve`]).
    pub resolved: Arc<Resolved>,
    /// The file this configuration was read from (`None` for built-in configurations);
    /// SIGHUP re-reads it.
    pub path: Option<PathBuf>,
    /// The zones before this position are the configuration file's; those from it on
    /// were added at run time ([`ADDED_ZONES`]).
    added_from: usize,
    /// What is known of the file of added zones ([`added_file`]).
    pub added_log: added_file::AddedLog,
}

/// `[server]`: where to listen and how many workers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServerConfig {
    /// Addresses to serve on, UDP and TCP alike.
    #[serde(default = "default_listen")]
    pub listen: Vec<ListenAddr>,
    /// UDP worker threads, each with its own `SO_REUSEPORT` socket per address.
    #[serde(default, deserialize_with = "workers")]
    pub udp_workers: Option<NonZeroUsize>,
    /// Threads of the TCP runtime.
    #[serde(default, deserialize_with = "workers")]
    pub tcp_workers: Option<NonZeroUsize>,
    /// Largest UDP response the server sends (RFC 6891 §6.2.5; 1232 after DNS Flag Day 2020).
    #[serde(
        default = "default_udp_payload",
        deserialize_with = "values::count_in::<_, 512, 65535>"
    )]
    pub udp_payload_max: u64,
    /// User to switch to after binding the sockets.
    #[serde(default)]
    pub user: Option<String>,
    /// Group to switch to (default: the user's primary group).
    #[serde(default)]
    pub group: Option<String>,
    /// File to write the process id to.
    #[serde(default)]
    pub pid_file: Option<PathBuf>,
    /// Directory for what the server keeps: secondary zones and their timers.
    #[serde(default = "default_storage")]
    pub storage: PathBuf,
    /// Directories the zone files of zones added at run time (`ternctl zone-add`,
    /// `POST /api/v1/zones`) must be in; empty: `storage` alone. A file elsewhere is
    /// refused without being read.
    #[serde(default)]
    pub added_zone_dirs: Vec<PathBuf>,
    /// Where `ternctl zone-backup` writes and `zone-restore` reads (default:
    /// `storage/backup`); a directory named elsewhere is refused.
    #[serde(default)]
    pub backup_dir: Option<PathBuf>,
    /// Where the DNSSEC keys of zones signed here are kept, a directory per zone
    /// (default: `storage/keys`).
    #[serde(default)]
    pub key_dir: Option<PathBuf>,
    /// Refuse to start when any zone fails to load (by default only when all do).
    #[serde(default)]
    pub strict_start: bool,
    /// The nice value of the control plane's threads (`crate::priority`).
    #[serde(default = "default_control_nice", deserialize_with = "values::count_in::<_, 0, 19>")]
    pub control_nice: u64,
    /// The largest fudge, in seconds, a TSIG-signed request is allowed, whatever fudge
    /// it names (RFC 8945 §5.2.3; §10 recommends 300).
    #[serde(
        default = "default_tsig_max_fudge",
        deserialize_with = "values::count_in::<_, 1, 65535>"
    )]
    pub tsig_max_fudge: u64,
    /// The most zones whose queries are counted (`query-stats`) at once: each worker
    /// holds a row of counters for each.
    #[serde(
        default = "default_query_stats_max_zones",
        deserialize_with = "values::count_in::<_, 0, 100000>"
    )]
    pub query_stats_max_zones: u64,
}

/// `[tcp]`: connection limits and timeouts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TcpConfig {
    /// Close a connection with no query in progress after this long (RFC 7766 §6.2.3);
    /// advertised in the EDNS keepalive option (RFC 7828).
    #[serde(default = "default_idle_timeout", deserialize_with = "values::duration")]
    pub idle_timeout: Duration,
    /// Close a connection that takes longer than this to deliver a query, counted from
    /// its first byte (slow senders), or to take an answer (slow readers).
    #[serde(default = "default_io_timeout", deserialize_with = "values::duration")]
    pub io_timeout: Duration,
    /// Connections open at once, all clients together.
    #[serde(
        default = "default_max_connections",
        deserialize_with = "values::count_in::<_, 1, 1000000>"
    )]
    pub max_connections: u64,
    /// Connections open at once from one client: an IPv4 address or an IPv6 /64 (0: no
    /// limit). The default keeps one client to 1/16 of the default `max_connections`.
    #[serde(
        default = "default_max_connections_per_client",
        deserialize_with = "values::count_in::<_, 0, 1000000>"
    )]
    pub max_connections_per_client: u64,
    /// Queries answered on one connection before it is closed (0: no limit).
    #[serde(default, deserialize_with = "values::count_in::<_, 0, 4294967295>")]
    pub max_queries_per_connection: u64,
    /// Let the kernel hand over a connection only once its first bytes have arrived
    /// (Linux `TCP_DEFER_ACCEPT`).
    #[serde(default = "default_defer_accept")]
    pub defer_accept: bool,
}

/// `[identity]`: what the server says about itself.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IdentityConfig {
    /// EDNS NSID (RFC 5001): `true` sends the host name.
    #[serde(default = "toggle_off")]
    pub nsid: Toggle,
    /// `version.bind` / `version.server` CH TXT: `true` sends `"Tern <version>"`.
    #[serde(default = "toggle_auto")]
    pub version: Toggle,
    /// `hostname.bind` / `id.server` CH TXT (RFC 4892): `true` sends the host name.
    #[serde(default = "toggle_auto")]
    pub hostname: Toggle,
}

/// `[log]`: level, format, destination.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LogConfig {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    #[serde(default = "default_level", deserialize_with = "values::log_level")]
    pub level: LevelFilter,
    /// `human`, `json` or `journal`.
    #[serde(default)]
    pub format: LogFormat,
    /// Append to this file instead of writing to standard error.
    #[serde(default)]
    pub file: Option<PathBuf>,
}

/// The command line's `--log-level`, `--log-format`, `--log-file` and `--workers`: they
/// win over the configuration file's keys, at start and at every reload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--workers`: UDP and TCP workers alike.
    pub workers: Option<NonZeroUsize>,
    /// `--log-level`.
    pub level: Option<LevelFilter>,
    /// `--log-format`.
    pub format: Option<LogFormat>,
    /// `--log-file`, absolute (a daemon reopens it after leaving its directory).
    pub file: Option<PathBuf>,
}

impl Overrides {
    /// Puts the overrides given into `config`.
    pub fn apply(&self, config: &mut Config) {
        if let Some(workers) = self.workers {
            config.server.udp_workers = Some(workers);
            config.server.tcp_workers = Some(workers);
        }
        let log = &mut config.log;
        if let Some(level) = self.level {
            log.level = level;
        }
        if let Some(format) = self.format {
            log.format = format;
        }
        if let Some(file) = &self.file {
            log.file = Some(file.clone());
        }
    }
}

/// One `[[zone]]`: a name, where its data comes from, and settings over its template's.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawZone")]
pub struct ZoneConfig {
    /// The zone's apex.
    pub name: Name,
    /// The zone file (relative paths are relative to the configuration file): a
    /// primary's source, a secondary's kept copy (by default in `storage`).
    pub source: Option<ZoneSource>,
    /// The template it takes its settings from (`default` when none is named).
    pub template: Option<String>,
    /// Its own settings (the `id` is empty).
    pub settings: xfr::TemplateConfig,
    /// `catalog-role`: a catalog zone consumed or produced here.
    pub catalog_role: Option<xfr::CatalogKind>,
    /// `catalog-template`: the templates of a consumed catalog's members.
    pub catalog_templates: Vec<String>,
    /// `catalog-max-members`: the most members of a consumed catalog served.
    pub catalog_max_members: Option<u64>,
}

impl ZoneConfig {
    /// True when the zone sets nothing beside its name, source and template: it then
    /// shares its template's settings with the other zones that do the same.
    pub fn names_only_template(&self) -> bool {
        self.settings == xfr::TemplateConfig::default()
            && self.catalog_role.is_none()
            && self.catalog_templates.is_empty()
            && self.catalog_max_members.is_none()
    }

    /// True for a catalog produced here (`catalog-role = "producer"`).
    pub fn is_producer(&self) -> bool {
        self.catalog_role == Some(xfr::CatalogKind::Producer)
    }

    /// A primary zone served from `source`, with no settings of its own.
    pub fn primary(name: Name, source: ZoneSource) -> ZoneConfig {
        ZoneConfig {
            name,
            source: Some(source),
            template: None,
            settings: Default::default(),
            catalog_role: None,
            catalog_templates: Vec::new(),
            catalog_max_members: None,
        }
    }

    /// The zone of a `[[zone]]` table of string values alone ([`layout::FlatReader`]):
    /// what reading the table gives, when it reads; `None` otherwise (it is then read
    /// the usual way, which says what is wrong and where).
    fn from_strings(values: &[(Cow<'_, str>, Cow<'_, str>)]) -> Option<ZoneConfig> {
        let (mut name, mut file, mut template) = (None, None, None);
        for (key, value) in values {
            match &**key {
                "name" => name = Some(values::parse_zone_name(value).ok()?),
                "file" if !value.is_empty() => {
                    file = Some(ZoneSource::File(PathBuf::from(&**value)))
                }
                "template" => template = Some(value.clone().into_owned()),
                _ => return ZoneConfig::from_string_table(values),
            }
        }
        // What `TryFrom<RawZone>` gives for these keys alone (a test compares them).
        Some(ZoneConfig {
            name: name?,
            source: file,
            template,
            settings: xfr::TemplateConfig::default(),
            catalog_role: None,
            catalog_templates: Vec::new(),
            catalog_max_members: None,
        })
    }

    /// [`Self::from_strings`] for other keys: the table read by serde, as a table
    /// without places.
    fn from_string_table(values: &[(Cow<'_, str>, Cow<'_, str>)]) -> Option<ZoneConfig> {
        let table = values.iter().map(|(key, value)| {
            (key.clone().into_owned(), toml::Value::String(value.clone().into_owned()))
        });
        let raw = RawZone::deserialize(toml::Value::Table(table.collect())).ok()?;
        ZoneConfig::try_from(raw).ok()
    }
}

/// A `[[zone]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawZone {
    #[serde(deserialize_with = "values::zone_name")]
    name: Name,
    #[serde(default, deserialize_with = "zone_file")]
    file: Option<ZoneSource>,
    #[serde(default)]
    script: Option<PathBuf>,
    #[serde(default)]
    database: Option<String>,
    #[serde(default, deserialize_with = "xfr::maybe_size")]
    script_max_memory: Option<u64>,
    #[serde(default)]
    script_max_instructions: Option<u64>,
    #[serde(default)]
    template: Option<String>,
    #[serde(default)]
    primary: Option<toml::Value>,
    #[serde(default)]
    notify: Option<toml::Value>,
    #[serde(default)]
    acl: Option<toml::Value>,
    #[serde(default)]
    ixfr_history: Option<toml::Value>,
    #[serde(default)]
    ixfr_history_size: Option<toml::Value>,
    #[serde(default)]
    refresh_min: Option<toml::Value>,
    #[serde(default)]
    refresh_max: Option<toml::Value>,
    #[serde(default)]
    retry_min: Option<toml::Value>,
    #[serde(default)]
    retry_max: Option<toml::Value>,
    #[serde(default)]
    serial_policy: Option<toml::Value>,
    #[serde(default)]
    zonefile_sync: Option<toml::Value>,
    #[serde(default)]
    notify_ns: Option<toml::Value>,
    #[serde(default)]
    query_stats: Option<toml::Value>,
    #[serde(default)]
    catalog: Option<toml::Value>,
    #[serde(default)]
    catalog_group: Option<toml::Value>,
    #[serde(default)]
    dnssec_policy: Option<toml::Value>,
    #[serde(default)]
    catalog_role: Option<xfr::CatalogKind>,
    #[serde(default, deserialize_with = "xfr::string_or_list")]
    catalog_template: Vec<String>,
    #[serde(default, deserialize_with = "xfr::member_count")]
    catalog_max_members: Option<u64>,
}

impl TryFrom<RawZone> for ZoneConfig {
    type Error = String;

    /// The settings are read as a template's are (same keys, same checks).
    fn try_from(raw: RawZone) -> std::result::Result<Self, String> {
        let source = zone_source(&raw)?;
        let keys = [
            ("primary", raw.primary),
            ("notify", raw.notify),
            ("acl", raw.acl),
            ("ixfr-history", raw.ixfr_history),
            ("ixfr-history-size", raw.ixfr_history_size),
            ("refresh-min", raw.refresh_min),
            ("refresh-max", raw.refresh_max),
            ("retry-min", raw.retry_min),
            ("retry-max", raw.retry_max),
            ("serial-policy", raw.serial_policy),
            ("zonefile-sync", raw.zonefile_sync),
            ("notify-ns", raw.notify_ns),
            ("query-stats", raw.query_stats),
            ("catalog", raw.catalog),
            ("catalog-group", raw.catalog_group),
            ("dnssec-policy", raw.dnssec_policy),
        ];
        // A zone of none of its own (most) has the empty template's: nothing to read.
        let settings = match keys.iter().all(|(_, value)| value.is_none()) {
            true => xfr::TemplateConfig::default(),
            false => zone_settings(&raw.name, keys)?,
        };
        Ok(ZoneConfig {
            name: raw.name,
            source,
            template: raw.template,
            settings,
            catalog_role: raw.catalog_role,
            catalog_templates: raw.catalog_template,
            catalog_max_members: raw.catalog_max_members,
        })
    }
}

/// A zone's settings, read as a template's are (`keys` are those given).
fn zone_settings(
    name: &Name,
    keys: [(&str, Option<toml::Value>); 16],
) -> std::result::Result<xfr::TemplateConfig, String> {
    let mut table = toml::Table::new();
    table.insert("id".into(), toml::Value::String(String::new()));
    for (key, value) in keys {
        if let Some(value) = value {
            table.insert(key.into(), value);
        }
    }
    xfr::TemplateConfig::deserialize(toml::Value::Table(table.clone()))
        .map_err(|e| format!("zone {name}: {}{}", culprit(&table), e.message()))
}

/// A zone's `file`, `script` (with its bounds) or `database` (one of them).
fn zone_source(raw: &RawZone) -> std::result::Result<Option<ZoneSource>, String> {
    let name = &raw.name;
    if let Some(id) = &raw.database {
        if raw.file.is_some() || raw.script.is_some() {
            return Err(format!(
                "zone {name}: `database` and `file` or `script` both given: a zone has one source"
            ));
        }
        return Ok(Some(database::reference(id)));
    }
    let Some(path) = &raw.script else {
        if raw.script_max_memory.is_some() || raw.script_max_instructions.is_some() {
            return Err(format!(
                "zone {name}: `script-max-memory` and `script-max-instructions` need `script`"
            ));
        }
        return Ok(raw.file.clone());
    };
    if raw.file.is_some() {
        return Err(format!("zone {name}: `file` and `script` both given: a zone has one source"));
    }
    if path.as_os_str().is_empty() {
        return Err(format!("zone {name}: the script path is empty"));
    }
    let mut script = tern_control::script::Script::new(path.clone());
    if let Some(bytes) = raw.script_max_memory {
        script.max_memory = usize::try_from(bytes).unwrap_or(usize::MAX).max(1 << 20);
    }
    if let Some(count) = raw.script_max_instructions {
        script.max_instructions = count;
    }
    Ok(Some(ZoneSource::Script(Arc::new(script))))
}

/// The key of a zone's `settings` (as [`ZoneConfig::try_from`] gathers them) that does
/// not read alone, as "`KEY`: " for the error message ([`key_span`] finds its line);
/// empty when none does (the keys only clash together).
fn culprit(settings: &toml::Table) -> String {
    let alone = |key: &String, value: &toml::Value| {
        let mut one = toml::Table::new();
        one.insert("id".into(), toml::Value::String(String::new()));
        one.insert(key.clone(), value.clone());
        xfr::TemplateConfig::deserialize(toml::Value::Table(one)).is_err()
    };
    let found = settings.iter().filter(|(k, _)| *k != "id").find(|(k, v)| alone(k, v));
    found.map_or_else(String::new, |(key, _)| format!("`{key}`: "))
}

/// Where, in a zone's table `item`, the key an error message names (as [`culprit`]
/// writes it: "zone NAME: `KEY`: …") has its value.
fn key_span(item: &Spanned<DeValue<'_>>, message: &str) -> Option<Range<usize>> {
    let (_, rest) = message.split_once(": `")?;
    let (key, _) = rest.split_once("`: ")?;
    let table = item.get_ref().as_table()?;
    table.iter().find(|(k, _)| k.get_ref().as_ref() == key).map(|(_, v)| v.span())
}

/// The identity answers resolved to their values (see [`IdentityConfig::resolve`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// NSID option payload.
    pub nsid: Option<String>,
    /// `version.bind` text.
    pub version: Option<String>,
    /// `hostname.bind` / `id.server` text.
    pub hostname: Option<String>,
}

impl Config {
    /// Reads and checks a configuration file, with the zones added at run time (the
    /// file [`ADDED_ZONES`] in the storage directory it names) after its own.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::File { path: path.to_owned(), source })?;
        let mut config = match Config::read_with(&text, path, read::Added::Storage) {
            Ok(config) => config,
            // The file's own errors come first, as when it is read alone; then those
            // the added zones bring.
            Err(read::Failure { error, added: true }) => {
                Config::from_text(&text, path)?;
                return Err(error);
            }
            Err(read::Failure { error, added: false }) => return Err(error),
        };
        // Absolute, so that a reload after `--daemon` (which changes to `/`) finds it.
        config.path = std::path::absolute(path).ok();
        Ok(config)
    }

    /// Parses configuration text; `path` names it in errors and anchors relative paths.
    /// Every table is read on its own, so all errors are reported (up to
    /// [`MAX_ERRORS`]), each with its line and column.
    pub fn from_text(text: &str, path: &Path) -> Result<Config> {
        Config::read(text, path, None)
    }

    /// The directories zones added at run time may have their files in
    /// (`added-zone-dirs`, else the storage directory).
    pub fn added_zone_dirs(&self) -> Vec<PathBuf> {
        match self.server.added_zone_dirs.is_empty() {
            true => vec![self.server.storage.clone()],
            false => self.server.added_zone_dirs.clone(),
        }
    }

    /// The directory backups are in (`backup-dir`, else `backup` in the storage
    /// directory).
    pub fn backup_dir(&self) -> PathBuf {
        self.server.backup_dir.clone().unwrap_or_else(|| self.server.storage.join("backup"))
    }

    /// The directory of signed zones' keys (`key-dir`, else `keys` in the storage
    /// directory).
    pub fn key_dir(&self) -> PathBuf {
        key_dir(&self.server)
    }

    /// What every `[[policy]]`'s plan shares (the key directory, signing threads).
    pub fn signing_defaults(&self) -> signing::Defaults {
        signing::Defaults::new(self.key_dir())
    }

    /// The file of zones added at run time (`ternctl zone-add`), in the storage
    /// directory; `None` for built-in configurations.
    pub fn added_zones_path(&self) -> Option<PathBuf> {
        self.path.as_ref().map(|_| self.server.storage.join(ADDED_ZONES))
    }

    /// [`from_text`](Self::from_text), with the zones of `added` (text and path) after
    /// the file's own; errors in either are shown in their own file.
    pub fn read(text: &str, path: &Path, added: Option<(&str, &Path)>) -> Result<Config> {
        let added = match added {
            Some((added_text, added_path)) => read::Added::Given(added_text, added_path),
            None => read::Added::Absent,
        };
        Config::read_with(text, path, added).map_err(|failure| failure.error)
    }

    /// The zones of `batch` (`[[zone]]` tables given to `zone-add`, to be added beside
    /// this configuration's) and their plans, read and resolved against this
    /// configuration's keys, remotes, ACLs and templates — the new tables only, so
    /// adding a zone to 100,000 costs what adding it to one does. `producers` are this
    /// configuration's produced catalogs, resolved with them. `None` when a new zone
    /// joins one of them (its member list changes: read the whole configuration again).
    /// Names already served and files already used are the caller's to check.
    pub fn read_new_zones<'z>(
        &self,
        batch: &str,
        added: &Path,
        producers: impl Iterator<Item = &'z ZoneConfig>,
    ) -> Option<Result<NewZones>> {
        let mut errors = Vec::new();
        let (read, _) = read::added_tables(batch, 0, &mut errors, &mut |zone| zone);
        let base = self.base()?;
        let mut zones = Vec::new();
        for spanned in read {
            let span = spanned.span();
            let mut zone = spanned.into_inner();
            anchor_source(&mut zone.source, &base);
            zones.push((span, zone));
        }
        if errors.is_empty() {
            let producers = producers.map(|z| (0..0, z.clone()));
            let all: Vec<_> = zones.iter().cloned().chain(producers).collect();
            let signing = self.signing_defaults();
            let storage = (self.server.storage.as_path(), &signing);
            match xfr::resolve(&self.tables, &all, &base, storage, &self.resolved.shared) {
                Ok(resolved) => {
                    let plans = resolved.zones.get(..zones.len()).unwrap_or_default();
                    if plans.iter().any(|p| matches!(p.catalog, CatalogRole::Member { .. })) {
                        return None;
                    }
                    let zones = zones.into_iter().map(|(_, zone)| zone).collect();
                    return Some(Ok((zones, plans.to_vec())));
                }
                Err(problems) => errors.extend(problems.into_iter().map(|(s, m)| (Some(s), m))),
            }
        }
        let rendered: Vec<String> = errors
            .iter()
            .take(MAX_ERRORS)
            .map(|(span, message)| report::render(added, batch, span.clone(), message))
            .collect();
        Some(Err(Error::Config(rendered.join("\n"))))
    }

    /// Adds `zones`, with their `plans`, after those served (in place: nothing else is
    /// copied, unless another holds the plans, which are then copied once). Of the
    /// tables, only produced catalogs' are kept.
    pub fn push_added(&mut self, zones: Vec<ZoneConfig>, plans: &[Arc<ZonePlan>]) {
        Arc::make_mut(&mut self.resolved).zones.extend(plans.iter().cloned());
        self.zones.extend(zones.into_iter().filter(ZoneConfig::is_producer));
    }

    /// Removes the zone at `at`, which must have been added at run time: the last zone
    /// takes its place (in place, whatever the count). Returns the removed zone's name and
    /// the position the last one moved from, if one moved.
    pub fn swap_remove_added(&mut self, at: usize) -> Option<(Name, Option<usize>)> {
        if at < self.added_from || at >= self.resolved.zones.len() {
            return None;
        }
        let resolved = Arc::make_mut(&mut self.resolved);
        let last = resolved.zones.len() - 1;
        let removed = resolved.zones.swap_remove(at);
        Some((removed.name.clone(), (at != last).then_some(last)))
    }

    /// The plans of the zones of the configuration file, then of those added at run
    /// time.
    pub fn zones_split(&self) -> (&[Arc<ZonePlan>], &[Arc<ZonePlan>]) {
        let zones = &self.resolved.zones;
        zones.split_at(self.added_from.min(zones.len()))
    }

    /// The tables of the catalogs produced here, as read.
    pub fn producers(&self) -> &[ZoneConfig] {
        &self.zones
    }

    /// The directory relative paths in the configuration file are taken from.
    fn base(&self) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        Some(absolute.parent().unwrap_or(Path::new("/")).to_owned())
    }

    /// A configuration with the defaults, serving `zones` on `listen` (quick mode, demo).
    pub fn built_in(listen: Vec<ListenAddr>, zones: Vec<ZoneConfig>) -> Result<Config> {
        let mut config = Config::default();
        config.server.listen = listen;
        let mut seen = std::collections::HashSet::new();
        for zone in &zones {
            if !seen.insert(zone.name.clone()) {
                return Err(Error::Config(format!("zone {} is given twice", zone.name)));
            }
        }
        let mut intake = intake::Intake::new(&config, Path::new("/"), false, zones.len());
        for zone in zones {
            let prepared = intake.prepare(0..0, zone);
            intake.admit(prepared);
        }
        config.added_from = intake.taken();
        let first = intake.errors().next();
        let finished = match first {
            Some(error) => Err(vec![error]),
            None => intake.finish(&config.server.storage),
        };
        match finished {
            Ok((resolved, producers)) => {
                config.resolved = Arc::new(resolved);
                config.zones = producers;
                Ok(config)
            }
            Err(errors) => {
                let message = errors.into_iter().next().map(|(_, message)| message);
                Err(Error::Config(message.unwrap_or_default()))
            }
        }
    }

    /// Makes relative PID, log and other file paths relative to `base` (the zones'
    /// are made so as they are read: see [`intake`]).
    fn resolve_paths(&mut self, base: &Path) {
        let anchor = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        for key in &mut self.tables.keys {
            key.get_mut().secret_file.as_mut().map(anchor);
        }
        self.server.pid_file.as_mut().map(anchor);
        self.server.storage = {
            let mut storage = std::mem::take(&mut self.server.storage);
            anchor(&mut storage);
            storage
        };
        self.server.added_zone_dirs.iter_mut().for_each(anchor);
        self.server.backup_dir.as_mut().map(anchor);
        self.server.key_dir.as_mut().map(anchor);
        self.log.file.as_mut().map(anchor);
        self.control.socket.as_mut().map(anchor);
        self.http.api_token_file.as_mut().map(anchor);
        for file in [&mut self.tls.certificate, &mut self.tls.key, &mut self.tls.client_ca] {
            file.as_mut().map(anchor);
        }
    }

    /// UDP worker count: as configured, else one per CPU.
    pub fn udp_workers(&self) -> usize {
        self.server.udp_workers.map_or_else(cpu_count, NonZeroUsize::get)
    }

    /// TCP worker count: as configured, else one per CPU.
    pub fn tcp_workers(&self) -> usize {
        self.server.tcp_workers.map_or_else(cpu_count, NonZeroUsize::get)
    }

    /// Rows of per-zone query counters each worker holds (`query-stats-max-zones`).
    pub fn query_stats_rows(&self) -> usize {
        usize::try_from(self.server.query_stats_max_zones).unwrap_or(usize::MAX)
    }

    /// The zones whose plan asks to have their queries counted (`query-stats`), beyond
    /// the first `query-stats-max-zones`: at start, these are not counted.
    pub fn query_stats_left_out(&self) -> Vec<&Name> {
        let asking = self.resolved.zones.iter().filter(|plan| plan.query_stats);
        asking.skip(self.query_stats_rows()).map(|plan| &plan.name).collect()
    }
}

impl IdentityConfig {
    /// The values to answer with; `hostname` is the machine's host name.
    pub fn resolve(&self, hostname: &str) -> Identity {
        let version = || format!("Tern {}", env!("CARGO_PKG_VERSION"));
        Identity {
            nsid: self.nsid.resolve(|| hostname.to_owned()),
            version: self.version.resolve(version),
            hostname: self.hostname.resolve(|| hostname.to_owned()),
        }
    }
}

/// CPUs this process may run on (1 when unknown).
pub fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

fn workers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<NonZeroUsize>, D::Error> {
    let count = values::count_in::<D, 1, 1024>(d)?;
    Ok(usize::try_from(count).ok().and_then(NonZeroUsize::new))
}

/// A zone's relative file or script path, made relative to `base` (the configuration
/// file's directory).
fn anchor_source(source: &mut Option<ZoneSource>, base: &Path) {
    match source {
        Some(ZoneSource::File(file)) if file.is_relative() => *file = base.join(&*file),
        Some(ZoneSource::Script(script)) if script.path.is_relative() => {
            Arc::make_mut(script).path = base.join(&script.path);
        }
        _ => {}
    }
}

fn zone_file<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ZoneSource>, D::Error> {
    let path = PathBuf::deserialize(d)?;
    if path.as_os_str().is_empty() {
        return Err(serde::de::Error::custom("the zone file path is empty"));
    }
    Ok(Some(ZoneSource::File(path)))
}

/// The name of the file of zones added at run time, in the storage directory.
pub const ADDED_ZONES: &str = "zones-added.toml";

/// `key-dir`, else `storage/keys`.
fn key_dir(server: &ServerConfig) -> PathBuf {
    server.key_dir.clone().unwrap_or_else(|| server.storage.join("keys"))
}

fn default_storage() -> PathBuf {
    PathBuf::from("/var/lib/tern")
}

fn default_listen() -> Vec<ListenAddr> {
    ["0.0.0.0:53", "[::]:53"].iter().filter_map(|a| ListenAddr::parse(a).ok()).collect()
}

fn default_udp_payload() -> u64 {
    1232
}

fn default_idle_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_io_timeout() -> Duration {
    Duration::from_secs(2)
}

fn default_defer_accept() -> bool {
    true
}

fn default_max_connections() -> u64 {
    1024
}

/// Far above the one connection per client that RFC 7766 §6.2.2 asks of clients (one
/// address may be many resolvers behind NAT), far below the total.
fn default_max_connections_per_client() -> u64 {
    64
}

fn toggle_off() -> Toggle {
    Toggle::Off
}

fn toggle_auto() -> Toggle {
    Toggle::Auto
}

fn default_control_nice() -> u64 {
    10
}

fn default_query_stats_max_zones() -> u64 {
    1000
}

fn default_tsig_max_fudge() -> u64 {
    u64::from(tern_wire::tsig::DEFAULT_FUDGE)
}

fn default_level() -> LevelFilter {
    LevelFilter::INFO
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: default_listen(),
            udp_workers: None,
            tcp_workers: None,
            udp_payload_max: default_udp_payload(),
            user: None,
            group: None,
            pid_file: None,
            storage: default_storage(),
            added_zone_dirs: Vec::new(),
            backup_dir: None,
            key_dir: None,
            strict_start: false,
            control_nice: default_control_nice(),
            tsig_max_fudge: default_tsig_max_fudge(),
            query_stats_max_zones: default_query_stats_max_zones(),
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            idle_timeout: default_idle_timeout(),
            io_timeout: default_io_timeout(),
            max_connections: default_max_connections(),
            max_connections_per_client: default_max_connections_per_client(),
            max_queries_per_connection: 0,
            defer_accept: default_defer_accept(),
        }
    }
}

impl Default for IdentityConfig {
    fn default() -> Self {
        IdentityConfig { nsid: Toggle::Off, version: Toggle::Auto, hostname: Toggle::Auto }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { level: default_level(), format: LogFormat::Human, file: None }
    }
}

#[cfg(test)]
mod tests;
