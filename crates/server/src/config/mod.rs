//! The daemon's configuration: the TOML file's sections, their defaults, and loading.
//!
//! Every key is documented in `docs/configuration.md`. Unknown keys and bad values are
//! errors that name the file, line and column and give a hint ([`report`]). The same
//! [`Config`] is built by the quick command-line mode and by `ternd demo`.

pub mod report;
pub mod values;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tern_wire::Name;
use toml::Spanned;
use tracing::level_filters::LevelFilter;

use crate::error::{Error, Result};
pub use values::{ListenAddr, LogFormat, Toggle};

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Listening, workers, privileges, PID file.
    #[serde(default)]
    pub server: ServerConfig,
    /// TCP limits (RFC 7766, RFC 7828).
    #[serde(default)]
    pub tcp: TcpConfig,
    /// NSID, `version.bind`, `hostname.bind` / `id.server`.
    #[serde(default)]
    pub identity: IdentityConfig,
    /// Log level, format and destination.
    #[serde(default)]
    pub log: LogConfig,
    /// The zones as written, with their spans (checked, then moved to `zones`).
    #[serde(default, rename = "zone")]
    raw_zones: Vec<Spanned<ZoneConfig>>,
    /// The served zones, in file order, names unique.
    #[serde(skip)]
    pub zones: Vec<ZoneConfig>,
    /// The file this configuration was read from (`None` for built-in configurations);
    /// SIGHUP re-reads it.
    #[serde(skip)]
    pub path: Option<PathBuf>,
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
    /// `human` or `json`.
    #[serde(default)]
    pub format: LogFormat,
    /// Append to this file instead of writing to standard error.
    #[serde(default)]
    pub file: Option<PathBuf>,
}

/// One `[[zone]]`: a name and where its data comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ZoneConfig {
    /// The zone's apex.
    #[serde(deserialize_with = "values::zone_name")]
    pub name: Name,
    /// The zone's data: a file (relative paths are relative to the configuration file).
    #[serde(rename = "file", deserialize_with = "zone_file")]
    pub source: ZoneSource,
}

/// Where a zone's master data is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneSource {
    /// A zone file (RFC 1035 §5).
    File(PathBuf),
    /// Zone-file text built into the binary (`ternd demo`).
    Embedded(&'static str),
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
    /// Reads and checks a configuration file.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::File { path: path.to_owned(), source })?;
        let mut config = Config::from_text(&text, path)?;
        // Absolute, so that a reload after `--daemon` (which changes to `/`) finds it.
        config.path = std::path::absolute(path).ok();
        Ok(config)
    }

    /// Parses configuration text; `path` names it in errors and anchors relative paths.
    pub fn from_text(text: &str, path: &Path) -> Result<Config> {
        let mut config: Config = toml::from_str(text)
            .map_err(|e| Error::Config(report::render(path, text, e.span(), e.message())))?;
        config.path = Some(path.to_owned());
        config.take_zones(text)?;
        let base = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        config.resolve_paths(base.parent().unwrap_or(Path::new("/")));
        Ok(config)
    }

    /// A configuration with the defaults, serving `zones` on `listen` (quick mode, demo).
    pub fn built_in(listen: Vec<ListenAddr>, zones: Vec<ZoneConfig>) -> Result<Config> {
        let mut config = Config::default();
        config.server.listen = listen;
        let mut seen = std::collections::HashSet::new();
        for zone in zones {
            if !seen.insert(zone.name.clone()) {
                return Err(Error::Config(format!("zone {} is given twice", zone.name)));
            }
            config.zones.push(zone);
        }
        Ok(config)
    }

    /// Moves `raw_zones` to `zones`, refusing a zone listed twice.
    fn take_zones(&mut self, text: &str) -> Result<()> {
        let path = self.path.clone().unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        for spanned in std::mem::take(&mut self.raw_zones) {
            let span = spanned.span();
            let zone = spanned.into_inner();
            if !seen.insert(zone.name.clone()) {
                let message = format!("zone {} is listed twice", zone.name);
                return Err(Error::Config(report::render(&path, text, Some(span), &message)));
            }
            self.zones.push(zone);
        }
        Ok(())
    }

    /// Makes relative zone, PID and log file paths relative to `base`.
    fn resolve_paths(&mut self, base: &Path) {
        let anchor = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        for zone in &mut self.zones {
            if let ZoneSource::File(file) = &mut zone.source {
                anchor(file);
            }
        }
        self.server.pid_file.as_mut().map(anchor);
        self.log.file.as_mut().map(anchor);
    }

    /// UDP worker count: as configured, else one per CPU.
    pub fn udp_workers(&self) -> usize {
        self.server.udp_workers.map_or_else(cpu_count, NonZeroUsize::get)
    }

    /// TCP worker count: as configured, else one per CPU.
    pub fn tcp_workers(&self) -> usize {
        self.server.tcp_workers.map_or_else(cpu_count, NonZeroUsize::get)
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

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

fn workers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<NonZeroUsize>, D::Error> {
    let count = values::count_in::<D, 1, 1024>(d)?;
    Ok(usize::try_from(count).ok().and_then(NonZeroUsize::new))
}

fn zone_file<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ZoneSource, D::Error> {
    let path = PathBuf::deserialize(d)?;
    if path.as_os_str().is_empty() {
        return Err(serde::de::Error::custom("the zone file path is empty"));
    }
    Ok(ZoneSource::File(path))
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
