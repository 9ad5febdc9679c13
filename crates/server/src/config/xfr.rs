//! The configuration of a server among others: TSIG keys (`[[key]]`), the servers it
//! talks to (`[[remote]]`), who may do what (`[[acl]]`), settings shared by zones
//! (`[[template]]`), and the limits on transfers (`[transfer]`).
//!
//! The tables are read as written; a [`Resolver`] then checks every reference (a zone's
//! `primary`, `notify`, `acl` and `template`, a remote's or rule's `key`), reads secrets
//! from files, and gives each zone its [`ZonePlan`] as the zone is read ([`resolve`]: a
//! batch of zones at once): its role, remotes and access rules (an update rule's
//! relative `update-owner-name`s completed with the zone's name). The zones that set
//! nothing beside their name, source and template share one value of their template's
//! settings, resolved once (a million such zones cost their names and files, not a
//! million copies of the settings).
//!
//! Update rules take Knot DNS's keys and meanings (`update-owner`, `update-owner-match`,
//! `update-owner-name`, `update-type`), so that a Knot DNS ACL reads the same here; a
//! name list alone implies `update-owner = "name"`, so that the usual ACME rule ("this
//! key may only touch `_acme-challenge.<name>` TXT") is two lines beside `key` and
//! `action`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::de::{self, Deserializer};
use serde::Deserialize;
use tern_engine::{
    Action, OwnerMatch, Owners, Prefix, Rule, SerialPolicy, UpdateLimits, UpdatePolicy,
};
use tern_journal::files::ZoneFiles;
use tern_wire::tsig::{Algorithm, Key};
use tern_wire::{Name, Rtype};
use tern_zone::HistoryLimits;

use super::values;
use super::xot::{self, TlsMode};
use super::{
    CatalogMember, CatalogRole, Remote, Role, TimerBounds, ZoneConfig, ZonePlan, ZoneSettings,
    ZoneSource,
};

/// `[[key]]`: a TSIG key (RFC 8945), named as BIND and Knot DNS name theirs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KeyConfig {
    /// The key's name (a domain name; both sides must use the same).
    #[serde(deserialize_with = "values::zone_name")]
    pub name: Name,
    /// `hmac-sha256` (the default), `hmac-sha224`, `hmac-sha384`, `hmac-sha512`,
    /// `hmac-sha1`, or `hmac-md5` for old peers.
    #[serde(default = "default_algorithm", deserialize_with = "algorithm")]
    pub algorithm: Algorithm,
    /// The secret in base64.
    #[serde(default)]
    pub secret: Option<String>,
    /// A file holding the secret in base64 (relative to the configuration file).
    #[serde(default)]
    pub secret_file: Option<PathBuf>,
}

/// `[[remote]]`: another server — a primary to transfer from, or a target of NOTIFY.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RemoteConfig {
    /// The name zones use to refer to it.
    pub id: String,
    /// Its addresses, tried in order: `IP`, `IP:PORT` or `[IPv6]:PORT` (port 53 by
    /// default, 853 with `tls`).
    #[serde(deserialize_with = "remote_addresses")]
    pub address: Vec<RemoteAddr>,
    /// The key to sign with (and to expect) when talking to it.
    #[serde(default)]
    pub key: Option<String>,
    /// The local addresses to send to it from (NOTIFY, SOA queries, transfer requests,
    /// forwarded updates): one IPv4 and/or one IPv6 address, each used for the remote's
    /// addresses of its family.
    #[serde(default, deserialize_with = "via")]
    pub via: Vec<std::net::IpAddr>,
    /// Transfers from it over TLS (RFC 9103): `true` (its certificate checked as
    /// `tls-hostname` and `cert-key` say), `"opportunistic"` (not checked), or `false`.
    #[serde(default, deserialize_with = "xot::tls_mode")]
    pub tls: TlsMode,
    /// The name its certificate must be valid for.
    #[serde(default)]
    pub tls_hostname: Option<String>,
    /// CA certificates (PEM) that certificate must chain to; none: the system's.
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    /// Pins (base64 SHA-256 of the SubjectPublicKeyInfo) one of which its key must
    /// match.
    #[serde(default, deserialize_with = "one_or_many")]
    pub cert_key: Vec<String>,
    /// The certificate chain (PEM) Tern presents to it (mutual TLS).
    #[serde(default)]
    pub tls_client_certificate: Option<PathBuf>,
    /// The key of `tls-client-certificate` (PEM).
    #[serde(default)]
    pub tls_client_key: Option<PathBuf>,
}

/// A remote's address as written: an IP and, when written, a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteAddr {
    /// The IP address.
    pub ip: std::net::IpAddr,
    /// The port, if written.
    pub port: Option<u16>,
}

impl RemoteAddr {
    /// Parses `IP`, `IP:PORT` or `[IPv6]:PORT`.
    pub fn parse(text: &str) -> Result<RemoteAddr, String> {
        if let Ok(addr) = text.parse::<std::net::SocketAddr>() {
            return Ok(RemoteAddr { ip: addr.ip(), port: Some(addr.port()) });
        }
        text.parse().map(|ip| RemoteAddr { ip, port: None }).map_err(|_| {
            format!("`{text}` is not an address (expected `192.0.2.1`, `192.0.2.1:53` or `[2001:db8::1]:53`)")
        })
    }

    /// With `default` as its port when none is written.
    pub fn or_port(self, default: u16) -> std::net::SocketAddr {
        std::net::SocketAddr::new(self.ip, self.port.unwrap_or(default))
    }
}

/// A remote's `address`: one or a list (each error said, not lost in the list's).
fn remote_addresses<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RemoteAddr>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts.iter().map(|text| RemoteAddr::parse(text).map_err(de::Error::custom)).collect()
}

/// `[[acl]]`: one access rule.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AclConfig {
    /// The name zones use to refer to it.
    pub id: String,
    /// Client prefixes (`192.0.2.0/24`, `2001:db8::/32`, `127.0.0.1`); none: any address.
    #[serde(default, deserialize_with = "prefixes")]
    pub address: Vec<Prefix>,
    /// Key names one of which must have signed the request; none: signed or not.
    #[serde(default, deserialize_with = "one_or_many")]
    pub key: Vec<String>,
    /// `transfer`, `notify` and/or `update`.
    #[serde(deserialize_with = "actions")]
    pub action: Vec<Action>,
    /// Deny what the rule matches instead of allowing it.
    #[serde(default)]
    pub deny: bool,
    /// Update rules: the owners an update may touch, `key` (the TSIG key's name),
    /// `zone` (the apex) or `name` (`update-owner-name`); none: every name.
    #[serde(default)]
    pub update_owner: Option<UpdateOwner>,
    /// How owners compare with them: `sub-or-equal` (the default), `equal` or `sub`.
    #[serde(default, deserialize_with = "owner_match")]
    pub update_owner_match: Option<OwnerMatch>,
    /// The names of `update-owner = "name"` (implied when given); a name without a
    /// final dot is relative to the zone.
    #[serde(default, deserialize_with = "one_or_many")]
    pub update_owner_name: Vec<String>,
    /// The types an update may touch (none: every type).
    #[serde(default, deserialize_with = "types")]
    pub update_type: Vec<Rtype>,
    /// Only requests that came over TLS or QUIC (RFC 9103: transfers over TLS).
    #[serde(default)]
    pub tls: bool,
    /// Only clients over TLS or QUIC whose certificate's key has one of these pins
    /// (base64 SHA-256 of the SubjectPublicKeyInfo; Knot DNS's `cert-key`).
    #[serde(default, deserialize_with = "pins")]
    pub cert_key: Vec<crate::tls::Pin>,
    /// Only clients over TLS or QUIC whose certificate chained to `[tls] client-ca`
    /// (mutual TLS).
    #[serde(default)]
    pub client_cert: bool,
}

pub use tern_control::plan::{ZonefileSync, ZONEFILE_SYNC};

/// `update-owner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateOwner {
    /// The TSIG key's name.
    Key,
    /// The zone's apex.
    Zone,
    /// The names of `update-owner-name`.
    Name,
}

/// Settings a `[[template]]` gives and a `[[zone]]` may override.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TemplateConfig {
    /// The name zones use to refer to it; `default` applies to zones that name none.
    pub id: String,
    /// Remotes the zone is transferred from (makes zones secondaries).
    #[serde(default, deserialize_with = "maybe_list")]
    pub primary: Option<Vec<String>>,
    /// Remotes told of every change with NOTIFY.
    #[serde(default, deserialize_with = "maybe_list")]
    pub notify: Option<Vec<String>>,
    /// Access rules, in order.
    #[serde(default, deserialize_with = "maybe_list")]
    pub acl: Option<Vec<String>>,
    /// Changesets kept for IXFR.
    #[serde(default)]
    pub ixfr_history: Option<u64>,
    /// Bytes of changesets kept for IXFR (`64M`, `1G`, or a number of bytes).
    #[serde(default, deserialize_with = "maybe_size")]
    pub ixfr_history_size: Option<u64>,
    /// Shortest and longest time between checks of a primary, whatever the SOA says.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub refresh_min: Option<Duration>,
    /// See `refresh-min`.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub refresh_max: Option<Duration>,
    /// Shortest and longest time before a failed check is retried.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub retry_min: Option<Duration>,
    /// See `retry-min`.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub retry_max: Option<Duration>,
    /// How a dynamic update raises the serial: `increment`, `unixtime` or `dateserial`.
    #[serde(default, deserialize_with = "serial_policy")]
    pub serial_policy: Option<SerialPolicy>,
    /// How soon after a dynamic update a primary's zone file is rewritten (`0`: after
    /// every change; `never`: the file is never written).
    #[serde(default, deserialize_with = "zonefile_sync")]
    pub zonefile_sync: Option<ZonefileSync>,
    /// Also NOTIFY the name servers of the zone's apex NS RRset.
    #[serde(default)]
    pub notify_ns: Option<bool>,
    /// Count the zone's queries by rcode and type in the metrics.
    #[serde(default)]
    pub query_stats: Option<bool>,
    /// The produced catalog (a zone with `catalog-role = "producer"`) that lists the
    /// zone.
    #[serde(default, deserialize_with = "maybe_zone_name")]
    pub catalog: Option<Name>,
    /// The zone's `group` property in that catalog.
    #[serde(default)]
    pub catalog_group: Option<String>,
    /// The `[[policy]]` this server signs the zone with (online signing).
    #[serde(default)]
    pub dnssec_policy: Option<String>,
}

fn maybe_zone_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Name>, D::Error> {
    let text = String::deserialize(d)?;
    values::parse_zone_name(&text).map(Some).map_err(serde::de::Error::custom)
}

/// `[transfer]`: limits on zone transfers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TransferConfig {
    /// Transfers from primaries at once, all zones together.
    #[serde(default = "default_transfers", deserialize_with = "values::count_in::<_, 1, 10000>")]
    pub max_incoming: u64,
    /// Transfers to secondaries at once; more are answered SERVFAIL, to be retried.
    #[serde(default = "default_transfers", deserialize_with = "values::count_in::<_, 1, 10000>")]
    pub max_outgoing: u64,
    /// Longest wait for a primary: to connect, for an answer, for each message.
    #[serde(default = "default_timeout", deserialize_with = "values::duration")]
    pub timeout: Duration,
    /// Largest zone accepted from a primary, in bytes of messages.
    #[serde(default = "default_max_size", deserialize_with = "size")]
    pub max_zone_size: u64,
    /// Longest a transfer from a primary may take, all of it (BIND's
    /// `max-transfer-time-in`); a longer one is cut off and retried later.
    #[serde(default = "default_max_time_in", deserialize_with = "positive_duration")]
    pub max_time_in: Duration,
    /// Longest a transfer from a primary may go without a byte (BIND's
    /// `max-transfer-idle-in`); `None`: `timeout`.
    #[serde(default, deserialize_with = "maybe_positive_duration")]
    pub idle_timeout_in: Option<Duration>,
}

impl TransferConfig {
    /// `idle-timeout-in`, or `timeout` when it is not set.
    pub fn idle_in(&self) -> Duration {
        self.idle_timeout_in.unwrap_or(self.timeout)
    }
}

impl Default for TransferConfig {
    fn default() -> Self {
        TransferConfig {
            max_incoming: default_transfers(),
            max_outgoing: default_transfers(),
            timeout: default_timeout(),
            max_zone_size: default_max_size(),
            max_time_in: default_max_time_in(),
            idle_timeout_in: None,
        }
    }
}

/// Default `max-time-in`: an hour, in which a zone of the default `max-zone-size` (4G)
/// comes at about 10 Mbit/s; BIND allows two.
fn default_max_time_in() -> Duration {
    Duration::from_secs(3600)
}

/// A duration above zero (a limit of zero would refuse every transfer).
fn positive_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let duration = values::duration(d)?;
    if duration.is_zero() {
        return Err(de::Error::custom("must be longer than zero (`10s`, `1h`)"));
    }
    Ok(duration)
}

fn maybe_positive_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    positive_duration(d).map(Some)
}

fn default_transfers() -> u64 {
    10
}

fn default_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_max_size() -> u64 {
    4 << 30
}

fn default_algorithm() -> Algorithm {
    Algorithm::HmacSha256
}

/// The tables as written, with their spans, for [`resolve`].
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// `[[key]]`.
    pub keys: Vec<toml::Spanned<KeyConfig>>,
    /// `[[remote]]`.
    pub remotes: Vec<toml::Spanned<RemoteConfig>>,
    /// `[[acl]]`.
    pub acls: Vec<toml::Spanned<AclConfig>>,
    /// `[[template]]`.
    pub templates: Vec<toml::Spanned<TemplateConfig>>,
    /// `[[policy]]`.
    pub policies: Vec<toml::Spanned<super::signing::PolicyConfig>>,
}

/// A reference error: where, and what.
pub type Problem = (std::ops::Range<usize>, String);

/// The resolved keys and zone plans.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// Every key.
    pub keys: Vec<Key>,
    /// One plan per zone, in the order of the zones.
    pub zones: Vec<Arc<ZonePlan>>,
    /// The settings the plans share, for the zones resolved later against the same
    /// tables (added at run time, a catalog's members) to share them too.
    pub shared: Arc<Shared>,
}

/// Checks every reference and builds the plans of `zones` (see [`Resolver`]); every
/// problem found is returned.
pub fn resolve(
    tables: &Tables,
    zones: &[(std::ops::Range<usize>, ZoneConfig)],
    base: &Path,
    (storage, signing): (&Path, &super::signing::Defaults),
    seed: &Arc<Shared>,
) -> Result<Resolved, Vec<Problem>> {
    let (mut resolver, mut problems) = Resolver::new(tables, base, (storage, signing));
    resolver.seed = Arc::clone(seed);
    let mut plans = Vec::with_capacity(zones.len());
    let mut spans = Vec::with_capacity(zones.len());
    for (span, zone) in zones {
        match resolver.plan(zone) {
            Ok(plan) => {
                plans.push(Arc::new(plan));
                spans.push(span.clone());
            }
            Err(why) => problems.push((span.clone(), format!("zone {}: {why}", zone.name))),
        }
    }
    resolver.finish(plans, &spans, problems)
}

/// The tables' references, checked once; each zone's plan is then built against them
/// ([`Resolver::plan`]) as the zone is read, so that a configuration's zones need not
/// all be held as read at once.
#[derive(Debug)]
pub struct Resolver {
    keys: HashMap<Name, Key>,
    remotes: HashMap<String, Remote>,
    acls: HashMap<String, AclRule>,
    templates: HashMap<String, TemplateConfig>,
    policies: HashMap<String, Arc<tern_control::signer::SigningPlan>>,
    /// The settings resolved here and kept to be shared.
    shared: Shared,
    /// Those resolved before against the same tables ([`resolve`]'s `seed`), looked up
    /// after [`Self::shared`], never copied.
    seed: Arc<Shared>,
    storage: PathBuf,
}

impl Resolver {
    /// Resolves the keys, remotes, access rules, templates and policies of `tables`
    /// (relative files taken from `base`); secondaries keep their copies in `storage`.
    /// The problems found are returned beside it.
    pub fn new(
        tables: &Tables,
        base: &Path,
        (storage, signing): (&Path, &super::signing::Defaults),
    ) -> (Resolver, Vec<Problem>) {
        let mut problems = Vec::new();
        let keys = resolve_keys(tables, base, &mut problems);
        let remotes = resolve_remotes(tables, &keys, base, &mut problems);
        let acls = resolve_acls(tables, &keys, &mut problems);
        let templates = unique(&tables.templates, |t| &t.id, "template", &mut problems);
        let templates = templates.into_iter().map(|(id, t)| (id, t.clone())).collect();
        let policies =
            super::signing::resolve_policies(&tables.policies, (signing, &remotes), &mut problems);
        let (shared, seed, storage) = (Shared::default(), Arc::default(), storage.to_owned());
        let resolver = Resolver { keys, remotes, acls, templates, policies, shared, seed, storage };
        (resolver, problems)
    }

    /// The zone's plan: its settings over its template's (or `default`'s), shared with
    /// the other zones of its template when it sets none of its own.
    pub fn plan(&mut self, zone: &ZoneConfig) -> Result<ZonePlan, String> {
        let (settings, source) = self.settings_and_source(zone)?;
        let source = source.or_else(|| zone.source.clone()).ok_or_else(no_source)?;
        Ok(ZonePlan { name: zone.name.clone(), source, settings })
    }

    /// [`Self::plan`], taking the zone's name and source rather than copying them; the
    /// zone's name beside the problem.
    pub fn plan_owned(&mut self, zone: ZoneConfig) -> Result<ZonePlan, (Name, String)> {
        let (settings, source) = match self.settings_and_source(&zone) {
            Ok(found) => found,
            Err(why) => return Err((zone.name, why)),
        };
        match source.or(zone.source) {
            Some(source) => Ok(ZonePlan { name: zone.name, source, settings }),
            None => Err((zone.name, no_source())),
        }
    }

    /// The zone's settings, and its source unless it is the zone's own (`None`).
    fn settings_and_source(
        &mut self,
        zone: &ZoneConfig,
    ) -> Result<(Arc<ZoneSettings>, Option<ZoneSource>), String> {
        let settings = if zone.names_only_template() {
            self.shared_settings(zone)?
        } else if sets_no_catalog(zone) {
            self.alike_settings(zone)?
        } else {
            Arc::new(self.settings(zone)?)
        };
        let source = zone_source(zone, &settings, &self.storage)?;
        Ok((settings, source))
    }

    /// The keys and the plans (`spans` are their zones' tables): produced catalogs
    /// given their members, checked. Every problem, with those of `problems`, is the
    /// error.
    pub fn finish(
        self,
        mut plans: Vec<Arc<ZonePlan>>,
        spans: &[std::ops::Range<usize>],
        mut problems: Vec<Problem>,
    ) -> Result<Resolved, Vec<Problem>> {
        list_catalog_members(&mut plans, spans, &mut problems);
        if !problems.is_empty() {
            return Err(problems);
        }
        let keys = self.keys.into_values().collect();
        Ok(Resolved { keys, zones: plans, shared: Arc::new(self.shared) })
    }
}

/// Gives each produced catalog its members; a member of a catalog that is not produced
/// here is a problem (at its zone's span).
fn list_catalog_members(
    plans: &mut [Arc<ZonePlan>],
    spans: &[std::ops::Range<usize>],
    problems: &mut Vec<Problem>,
) {
    let mut members: HashMap<Name, Vec<CatalogMember>> = plans
        .iter()
        .filter(|p| p.catalog == CatalogRole::Producer)
        .map(|p| (p.name.clone(), Vec::new()))
        .collect();
    for (plan, span) in plans.iter().zip(spans) {
        let CatalogRole::Member { catalog, group } = &plan.catalog else { continue };
        match members.get_mut(catalog) {
            Some(list) => {
                list.push(CatalogMember { zone: plan.name.clone(), group: group.clone() })
            }
            None => problems.push((
                span.clone(),
                format!(
                    "zone {}: catalog `{catalog}` is not a zone with catalog-role = \"producer\"",
                    plan.name
                ),
            )),
        }
    }
    for plan in plans.iter_mut() {
        if members.is_empty() {
            break;
        }
        if let Some(mut list) = members.remove(&plan.name) {
            list.sort();
            Arc::make_mut(plan).source = ZoneSource::Catalog(Arc::from(list));
        }
    }
}

/// Keys by name, each with its secret.
fn resolve_keys(tables: &Tables, base: &Path, problems: &mut Vec<Problem>) -> HashMap<Name, Key> {
    let mut keys = HashMap::new();
    for spanned in &tables.keys {
        let k = spanned.get_ref();
        let secret = match (&k.secret, &k.secret_file) {
            (Some(text), None) => Ok(text.clone()),
            (None, Some(file)) => read_secret(&base.join(file)),
            _ => Err("give the secret with `secret` or `secret-file` (one of them)".to_owned()),
        };
        let key = secret.and_then(|text| {
            Key::from_base64(k.name.clone(), k.algorithm, &text)
                .map_err(|why| format!("the secret is not usable base64: {why}"))
        });
        match key {
            Ok(key) if !keys.contains_key(&k.name) => {
                keys.insert(k.name.clone(), key);
            }
            Ok(_) => problems.push((spanned.span(), format!("key {} is declared twice", k.name))),
            Err(why) => problems.push((spanned.span(), format!("key {}: {why}", k.name))),
        }
    }
    keys
}

fn read_secret(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The key named `name`, or a problem.
fn find_key(keys: &HashMap<Name, Key>, name: &str) -> Result<Key, String> {
    let parsed = values::parse_zone_name(name)?;
    keys.get(&parsed).cloned().ok_or_else(|| format!("key `{name}` is not declared in a [[key]]"))
}

fn resolve_remotes(
    tables: &Tables,
    keys: &HashMap<Name, Key>,
    base: &Path,
    problems: &mut Vec<Problem>,
) -> HashMap<String, Remote> {
    let mut remotes = HashMap::new();
    for r in unique(&tables.remotes, |r| &r.id, "remote", problems).into_values() {
        let key = r.key.as_deref().map(|name| find_key(keys, name)).transpose();
        let checked = key.and_then(|key| one_per_family(&r.via).map(|()| key));
        let resolved = checked
            .and_then(|key| Ok((key, xot::remote_tls(r, base)?.map(xot::RemoteTls::into_tls))));
        match resolved {
            Ok((key, tls)) => {
                let port = if tls.is_some() { super::tls::DOT_PORT } else { values::DNS_PORT };
                let addrs = r.address.iter().map(|a| a.or_port(port)).collect();
                let via = r.via.clone();
                let remote = Remote { id: r.id.clone(), addrs, key, via, tls };
                remotes.insert(r.id.clone(), remote);
            }
            Err(why) => {
                let span = span_of(&tables.remotes, |x| x.id == r.id);
                problems.push((span, format!("remote {}: {why}", r.id)));
            }
        }
    }
    remotes
}

/// A remote's `via`: at most one address of each family, none unspecified.
fn one_per_family(via: &[std::net::IpAddr]) -> Result<(), String> {
    if let Some(any) = via.iter().find(|a| a.is_unspecified() || a.is_multicast()) {
        return Err(format!("via {any}: give an address of this host"));
    }
    let v4 = via.iter().filter(|a| a.is_ipv4()).count();
    if v4 > 1 || via.len() - v4 > 1 {
        return Err("via: at most one IPv4 and one IPv6 address".into());
    }
    Ok(())
}

/// An `[[acl]]` resolved but for its relative owner names, which each zone completes.
#[derive(Debug, Clone)]
struct AclRule {
    rule: Rule,
    /// `update-owner-name` as written.
    owner_names: Vec<String>,
}

impl AclRule {
    /// The rule for `zone`: relative owner names completed with its name.
    fn for_zone(&self, zone: &Name) -> Result<Rule, String> {
        let mut rule = self.rule.clone();
        if !self.owner_names.is_empty() {
            let names = self
                .owner_names
                .iter()
                .map(|n| {
                    Name::parse_text(n.as_bytes(), Some(zone))
                        .map_err(|why| format!("update-owner-name `{n}` in zone {zone}: {why}"))
                })
                .collect::<Result<Vec<Name>, String>>()?;
            rule.update.owners = Owners::Names(names);
        }
        Ok(rule)
    }
}

fn resolve_acls(
    tables: &Tables,
    keys: &HashMap<Name, Key>,
    problems: &mut Vec<Problem>,
) -> HashMap<String, AclRule> {
    let mut rules = HashMap::new();
    for a in unique(&tables.acls, |a| &a.id, "acl", problems).into_values() {
        let names: Result<Vec<Name>, String> =
            a.key.iter().map(|k| find_key(keys, k).map(|key| key.name().to_name())).collect();
        let resolved = names.and_then(|keys| {
            let rule = Rule {
                addresses: a.address.clone(),
                keys,
                actions: a.action.clone(),
                deny: a.deny,
                update: update_limits(a)?,
                tls: a.tls,
                cert_keys: a.cert_key.iter().map(|p| p.0).collect(),
                client_cert: a.client_cert,
            };
            Ok(AclRule { rule, owner_names: a.update_owner_name.clone() })
        });
        match resolved {
            Ok(rule) => {
                rules.insert(a.id.clone(), rule);
            }
            Err(why) => {
                let span = span_of(&tables.acls, |x| x.id == a.id);
                problems.push((span, format!("acl {}: {why}", a.id)));
            }
        }
    }
    rules
}

/// An `[[acl]]`'s update limits (owner names are left to each zone: see [`AclRule`]).
fn update_limits(a: &AclConfig) -> Result<UpdateLimits, String> {
    let limited = a.update_owner.is_some()
        || a.update_owner_match.is_some()
        || !a.update_owner_name.is_empty()
        || !a.update_type.is_empty();
    if limited && !a.action.contains(&Action::Update) {
        return Err("`update-owner`, `update-owner-match`, `update-owner-name` and `update-type` need `action = \"update\"`".into());
    }
    let named = !a.update_owner_name.is_empty();
    let owners = match (a.update_owner, named) {
        (None, false) => Owners::Any,
        (Some(UpdateOwner::Key), false) => Owners::Key,
        (Some(UpdateOwner::Zone), false) => Owners::Zone,
        (None | Some(UpdateOwner::Name), true) => Owners::Names(Vec::new()),
        (Some(UpdateOwner::Name), false) => {
            return Err("`update-owner = \"name\"` needs `update-owner-name`".into())
        }
        (Some(_), true) => {
            return Err("`update-owner-name` goes with `update-owner = \"name\"` (or alone)".into())
        }
    };
    for name in &a.update_owner_name {
        Name::parse_text(name.as_bytes(), Some(&Name::root()))
            .map_err(|why| format!("update-owner-name `{name}` is not a domain name: {why}"))?;
    }
    Ok(UpdateLimits {
        owners,
        owner_match: a.update_owner_match.unwrap_or_default(),
        types: a.update_type.clone(),
    })
}

/// Tables by id, reporting ids used twice.
fn unique<'t, T>(
    list: &'t [toml::Spanned<T>],
    id: impl Fn(&T) -> &String,
    what: &str,
    problems: &mut Vec<Problem>,
) -> HashMap<String, &'t T> {
    let mut map = HashMap::new();
    for spanned in list {
        let item = spanned.get_ref();
        if map.insert(id(item).clone(), item).is_some() {
            problems.push((spanned.span(), format!("{what} `{}` is declared twice", id(item))));
        }
    }
    map
}

fn span_of<T>(list: &[toml::Spanned<T>], pick: impl Fn(&T) -> bool) -> std::ops::Range<usize> {
    list.iter().find(|s| pick(s.get_ref())).map_or(0..0, toml::Spanned::span)
}

/// Settings resolved once and shared by the zones alike. Valid against the tables they
/// were resolved from only: a reload resolves every zone afresh.
#[derive(Debug, Clone, Default)]
pub struct Shared {
    /// Those of the zones that set nothing of their own and name no template (most),
    /// apart: not looked up.
    default: Option<Arc<ZoneSettings>>,
    /// Those of the zones that set nothing of their own, by the template they name.
    templates: HashMap<Option<String>, Arc<ZoneSettings>>,
    /// Those of the zones that set some of their own (a secondary's `primary`, most
    /// often), by template and what they set: a million secondaries of one primary
    /// hold one (2 KiB a zone when each held its own).
    alike: HashMap<AlikeKey, Arc<ZoneSettings>>,
}

/// A zone's template and the settings it sets of its own.
type AlikeKey = (Option<String>, TemplateConfig);

impl Shared {
    /// The settings of the zones that set nothing of their own and name `template`.
    fn of_template(&self, template: &Option<String>) -> Option<&Arc<ZoneSettings>> {
        match template {
            None => self.default.as_ref(),
            named => self.templates.get(named),
        }
    }
}

/// At most this many different sets of a zone's own settings are kept to be shared;
/// the zones past them hold their own.
const MAX_ALIKE: usize = 10_000;

/// True when `zone` sets nothing of a catalog's: its settings then depend only on its
/// template, its own settings and (through access rules with owner names) its name.
fn sets_no_catalog(zone: &ZoneConfig) -> bool {
    zone.catalog_role.is_none()
        && zone.catalog_templates.is_empty()
        && zone.catalog_max_members.is_none()
}

impl Resolver {
    /// The settings of `zone`'s template, shared, or resolved and kept to be shared —
    /// unless they hold something of the zone's own (an access rule's owner names are
    /// completed with the zone's name).
    fn shared_settings(&mut self, zone: &ZoneConfig) -> Result<Arc<ZoneSettings>, String> {
        let template = &zone.template;
        let known = self.shared.of_template(template).or_else(|| self.seed.of_template(template));
        if let Some(settings) = known {
            return Ok(Arc::clone(settings));
        }
        let settings = Arc::new(self.settings(zone)?);
        if !self.names_the_zone(zone) {
            match &zone.template {
                None => self.shared.default = Some(Arc::clone(&settings)),
                named => {
                    self.shared.templates.insert(named.clone(), Arc::clone(&settings));
                }
            }
        }
        Ok(settings)
    }

    /// The settings of `zone`, which sets some of its own, shared with the zones of its
    /// template that set the same — unless they hold something of the zone's own (see
    /// [`Self::names_the_zone`]), or [`MAX_ALIKE`] sets are kept already.
    fn alike_settings(&mut self, zone: &ZoneConfig) -> Result<Arc<ZoneSettings>, String> {
        let key = (zone.template.clone(), zone.settings.clone());
        if let Some(settings) = self.shared.alike.get(&key).or_else(|| self.seed.alike.get(&key)) {
            return Ok(Arc::clone(settings));
        }
        let settings = Arc::new(self.settings(zone)?);
        if self.shared.alike.len() < MAX_ALIKE && !self.names_the_zone(zone) {
            self.shared.alike.insert(key, Arc::clone(&settings));
        }
        Ok(settings)
    }

    /// True when `zone`'s settings hold something of its own name: an access rule whose
    /// owner names are completed with it (`update-owner-name`). Such settings are not
    /// shared. Asked once the settings resolved, so its template is declared.
    fn names_the_zone(&self, zone: &ZoneConfig) -> bool {
        let template = self.template(zone).ok().flatten().and_then(|t| t.acl.as_ref());
        let Some(ids) = zone.settings.acl.as_ref().or(template) else { return false };
        ids.iter().any(|id| self.acls.get(id).is_some_and(|a| !a.owner_names.is_empty()))
    }

    /// The template `zone` names, else `default` if declared.
    fn template(&self, zone: &ZoneConfig) -> Result<Option<&TemplateConfig>, String> {
        match &zone.template {
            Some(id) => match self.templates.get(id) {
                Some(template) => Ok(Some(template)),
                None => Err(format!("template `{id}` is not declared")),
            },
            None => Ok(self.templates.get("default")),
        }
    }

    /// The zone's settings: its own over its template's.
    fn settings(&self, zone: &ZoneConfig) -> Result<ZoneSettings, String> {
        let empty = TemplateConfig::default();
        let t = self.template(zone)?.unwrap_or(&empty);
        let own = &zone.settings;
        let pick = |a: &Option<Vec<String>>, b: &Option<Vec<String>>| {
            a.clone().or_else(|| b.clone()).unwrap_or_default()
        };
        let primaries = self.remotes_named(&pick(&own.primary, &t.primary), "primary")?;
        let notify = self.remotes_named(&pick(&own.notify, &t.notify), "notify")?;
        let mut rules = Vec::new();
        for id in pick(&own.acl, &t.acl) {
            let acl = self.acls.get(&id).ok_or_else(|| format!("acl `{id}` is not declared"))?;
            rules.push(acl.for_zone(&zone.name)?);
        }
        rules.extend(primaries.iter().map(notify_rule));
        let catalog = catalog_role(zone, own, t, &primaries)?;
        let role = if primaries.is_empty() { Role::Primary } else { Role::Secondary(primaries) };
        let zonefile_sync = own.zonefile_sync.or(t.zonefile_sync).unwrap_or(ZONEFILE_SYNC);
        let signing = self.signing(own, t, (&role, &catalog, zonefile_sync))?;
        Ok(ZoneSettings {
            role,
            notify,
            rules: rules.into(),
            history: history(own, t),
            timers: timers(own, t),
            update: UpdatePolicy {
                serial: own.serial_policy.or(t.serial_policy).unwrap_or_default(),
                signed_here: signing.is_some(),
            },
            zonefile_sync,
            notify_ns: own.notify_ns.or(t.notify_ns).unwrap_or(false),
            catalog,
            query_stats: own.query_stats.or(t.query_stats).unwrap_or(false),
            signing,
        })
    }

    /// The zone's signing plan (`dnssec-policy`): a primary zone whose file can take the
    /// signed version, or a secondary (a signing secondary: unsigned in, signed out).
    fn signing(
        &self,
        own: &TemplateConfig,
        t: &TemplateConfig,
        (role, catalog, sync): (&Role, &CatalogRole, ZonefileSync),
    ) -> Result<Option<Arc<tern_control::signer::SigningPlan>>, String> {
        let Some(id) = own.dnssec_policy.as_ref().or(t.dnssec_policy.as_ref()) else {
            return Ok(None);
        };
        let plan = self.policies.get(id).ok_or_else(|| format!("policy `{id}` is not declared"))?;
        if matches!(catalog, CatalogRole::Producer | CatalogRole::Consumer { .. }) {
            return Err("`dnssec-policy`: catalog zones are not signed".into());
        }
        if matches!(role, Role::Primary) && sync == ZonefileSync::Never {
            return Err("`dnssec-policy` needs the zone file written (`zonefile-sync` other than `never`): it holds the signed zone".into());
        }
        Ok(Some(Arc::clone(plan)))
    }

    fn remotes_named(&self, ids: &[String], what: &str) -> Result<Vec<Remote>, String> {
        ids.iter()
            .map(|id| {
                self.remotes
                    .get(id)
                    .cloned()
                    .ok_or_else(|| format!("{what} `{id}` is not a [[remote]] id"))
            })
            .collect()
    }
}

/// Where the zone's data comes from: its `file`, `script` or `database` (`None`: the
/// zone's own source, as it is); a produced catalog's is written here, and a
/// secondary's kept copy is in `storage` by default.
fn zone_source(
    zone: &ZoneConfig,
    settings: &ZoneSettings,
    storage: &Path,
) -> Result<Option<ZoneSource>, String> {
    let secondary = matches!(settings.role, Role::Secondary(_));
    match (&zone.source, secondary) {
        _ if settings.catalog == CatalogRole::Producer => {
            Ok(Some(ZoneSource::Catalog(Arc::from(Vec::new()))))
        }
        (Some(ZoneSource::Script(_)), true) => {
            Err("a secondary's data comes from its primaries: `script` is for primary zones".into())
        }
        (Some(ZoneSource::Database(_)), true) => {
            Err("a secondary's data comes from its primaries: `database` is for primary zones"
                .into())
        }
        (Some(_), _) => Ok(None),
        (None, true) => Ok(Some(ZoneSource::File(ZoneFiles::new(storage, &zone.name).zone_copy()))),
        (None, false) => Err(no_source()),
    }
}

fn no_source() -> String {
    "a primary zone needs `file` (or `primary` to be a secondary)".into()
}

/// The zone's part in catalogs, checked: a consumed catalog is a secondary, a produced
/// one has neither file nor primaries.
fn catalog_role(
    zone: &ZoneConfig,
    own: &TemplateConfig,
    t: &TemplateConfig,
    primaries: &[Remote],
) -> Result<CatalogRole, String> {
    if zone.catalog_max_members.is_some() && zone.catalog_role != Some(CatalogKind::Consumer) {
        return Err(
            "`catalog-max-members` is for consumed catalogs (`catalog-role = \"consumer\"`)".into(),
        );
    }
    match zone.catalog_role {
        Some(CatalogKind::Consumer) if primaries.is_empty() => {
            Err("a consumed catalog is transferred from its primaries: give it `primary`".into())
        }
        Some(CatalogKind::Consumer) => Ok(CatalogRole::Consumer {
            templates: zone.catalog_templates.clone(),
            primaries: primaries.iter().map(|p| p.id.clone()).collect(),
            max_members: zone
                .catalog_max_members
                .map_or(CATALOG_MAX_MEMBERS, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        }),
        Some(CatalogKind::Producer) if zone.source.is_some() || !primaries.is_empty() => {
            Err("a produced catalog is written by this server: it has no `file` and no `primary`"
                .into())
        }
        Some(CatalogKind::Producer) => Ok(CatalogRole::Producer),
        None => Ok(match own.catalog.clone().or_else(|| t.catalog.clone()) {
            Some(catalog) => CatalogRole::Member {
                catalog,
                group: own.catalog_group.clone().or_else(|| t.catalog_group.clone()),
            },
            None => CatalogRole::None,
        }),
    }
}

/// Default `catalog-max-members`. Each member served costs its writer, plan and zone
/// (a 100,000-member catalog took a server from 25 to 910 MB, about 9 KB a member
/// before its data): 10,000 members stay under 100 MB when a primary lists far more
/// than meant, and above what most catalogs hold. Raise it for larger ones.
pub const CATALOG_MAX_MEMBERS: usize = 10_000;

/// Most `catalog-max-members` may be.
const MAX_CATALOG_MEMBERS: u64 = 10_000_000;

/// `catalog-max-members`: from 1 to 10,000,000.
pub fn member_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    values::count_in::<_, 1, MAX_CATALOG_MEMBERS>(d).map(Some)
}

/// `catalog-role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CatalogKind {
    /// `consumer`: the members are served as secondaries.
    Consumer,
    /// `producer`: this server writes the catalog.
    Producer,
}

/// A secondary's primaries may notify it: from their addresses, with their key.
fn notify_rule(primary: &Remote) -> Rule {
    Rule {
        addresses: primary.addrs.iter().map(|a| Prefix::host(a.ip())).collect(),
        keys: primary.key.iter().map(|k| k.name().to_name()).collect(),
        actions: vec![Action::Notify],
        ..Rule::default()
    }
}

fn history(own: &TemplateConfig, t: &TemplateConfig) -> HistoryLimits {
    let defaults = HistoryLimits::default();
    let changes = own.ixfr_history.or(t.ixfr_history);
    let bytes = own.ixfr_history_size.or(t.ixfr_history_size);
    HistoryLimits {
        max_changes: changes
            .map_or(defaults.max_changes, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        max_bytes: bytes.map_or(defaults.max_bytes, |n| usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

fn timers(own: &TemplateConfig, t: &TemplateConfig) -> TimerBounds {
    let pick =
        |a: Option<Duration>, b: Option<Duration>, default: Duration| a.or(b).unwrap_or(default);
    let d = TimerBounds::DEFAULT;
    TimerBounds {
        refresh: (
            pick(own.refresh_min, t.refresh_min, d.refresh.0),
            pick(own.refresh_max, t.refresh_max, d.refresh.1),
        ),
        retry: (
            pick(own.retry_min, t.retry_min, d.retry.0),
            pick(own.retry_max, t.retry_max, d.retry.1),
        ),
    }
}

fn algorithm<'de, D: Deserializer<'de>>(d: D) -> Result<Algorithm, D::Error> {
    let text = String::deserialize(d)?;
    Algorithm::from_text(&text).ok_or_else(|| {
        de::Error::custom(format!(
            "unknown TSIG algorithm `{text}` (expected hmac-sha256, hmac-sha224, hmac-sha384, hmac-sha512, hmac-sha1 or hmac-md5)"
        ))
    })
}

/// A string or a list of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

/// `via`: IP addresses, one or a list.
fn via<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<std::net::IpAddr>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts
        .iter()
        .map(|text| {
            text.parse().map_err(|_| {
                serde::de::Error::custom(format!(
                    "`{text}` is not an IP address (via takes addresses of this host)"
                ))
            })
        })
        .collect()
}

fn one_or_many<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

pub(super) fn maybe_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    one_or_many(d).map(Some)
}

/// A string or a list of strings.
pub fn string_or_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    one_or_many(d)
}

fn pins<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<crate::tls::Pin>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts.iter().map(|t| crate::tls::Pin::parse(t).map_err(serde::de::Error::custom)).collect()
}

fn prefixes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Prefix>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts
        .iter()
        .map(|t| {
            Prefix::parse(t).ok_or_else(|| {
                de::Error::custom(format!("`{t}` is not an address or prefix (expected `192.0.2.0/24`, `2001:db8::/32` or an address)"))
            })
        })
        .collect()
}

fn actions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Action>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts
        .iter()
        .map(|t| match t.as_str() {
            "transfer" => Ok(Action::Transfer),
            "notify" => Ok(Action::Notify),
            "update" => Ok(Action::Update),
            other => Err(de::Error::custom(format!(
                "unknown action `{other}` (expected `transfer`, `notify` or `update`)"
            ))),
        })
        .collect()
}

fn owner_match<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OwnerMatch>, D::Error> {
    let text = String::deserialize(d)?;
    match text.as_str() {
        "sub-or-equal" => Ok(Some(OwnerMatch::SubOrEqual)),
        "equal" => Ok(Some(OwnerMatch::Equal)),
        "sub" => Ok(Some(OwnerMatch::Sub)),
        other => Err(de::Error::custom(format!(
            "unknown update-owner-match `{other}` (expected `sub-or-equal`, `equal` or `sub`)"
        ))),
    }
}

/// Record types by mnemonic (`TXT`, `TYPE65534`); meta-types are not records.
fn types<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Rtype>, D::Error> {
    let texts: Vec<String> = one_or_many(d)?;
    texts
        .iter()
        .map(|t| match Rtype::from_mnemonic(t.as_bytes()) {
            Some(rtype) if !rtype.is_meta() => Ok(rtype),
            _ => Err(de::Error::custom(format!(
                "`{t}` is not a record type (expected a mnemonic such as `TXT`, or `TYPE65534`)"
            ))),
        })
        .collect()
}

fn serial_policy<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SerialPolicy>, D::Error> {
    let text = String::deserialize(d)?;
    SerialPolicy::from_text(&text).map(Some).ok_or_else(|| {
        de::Error::custom(format!(
            "unknown serial-policy `{text}` (expected `increment`, `unixtime` or `dateserial`)"
        ))
    })
}

/// Parses a size: a number of bytes, or with `K`, `M` or `G` (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (expected `64M`, `1G` or bytes)"))?;
    let shift = match unit {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        _ => return Err(format!("`{text}` is not a size (units: K, M, G)")),
    };
    value.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too large"))
}

fn size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Number(u64),
        Text(String),
    }
    match Size::deserialize(d)? {
        Size::Number(n) => Ok(n),
        Size::Text(t) => parse_size(&t).map_err(de::Error::custom),
    }
}

pub(crate) fn maybe_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    size(d).map(Some)
}

fn maybe_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    values::duration(d).map(Some)
}

/// `zonefile-sync`: a duration, or `never`.
fn zonefile_sync<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ZonefileSync>, D::Error> {
    let text = String::deserialize(d)?;
    if text == "never" {
        return Ok(Some(ZonefileSync::Never));
    }
    values::parse_duration(&text).map(|delay| Some(ZonefileSync::After(delay))).map_err(|why| {
        serde::de::Error::custom(format!("{why}; or \"never\" (the zone file is never written)"))
    })
}
