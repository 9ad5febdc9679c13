//! `[[policy]]`: a key and signing policy (issue #51), as Knot DNS's `policy` and BIND's
//! `dnssec-policy`: which keys sign a zone, how long they live, the TTLs and delays
//! that decide when a rollover step is safe (RFC 7583 §2), signature validity, and the
//! denial of existence (NSEC, or NSEC3 with RFC 9276's defaults). Read into
//! [`tern_sign::policy::Policy`] and [`tern_sign::DenialConfig`]; the defaults are
//! the policy engine's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tern_control::plan::Remote;
use tern_control::signer::SigningPlan;
use tern_sign::policy::{Policy, Scheme};
use tern_sign::{Algorithm, DenialConfig, Nsec3Config};

use super::values;

/// A `[[policy]]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PolicyConfig {
    /// The name zones and templates use for it (`dnssec-policy`).
    pub id: String,
    /// False: the zone is being unsigned (RFC 8078 §4: CDS delete form, then the keys
    /// go once the parent's DS has).
    #[serde(default)]
    pub signing: Option<bool>,
    /// `csk` or `ksk-zsk`.
    #[serde(default)]
    pub scheme: Option<String>,
    /// A DNSSEC algorithm mnemonic or number (`ecdsap256sha256`).
    #[serde(default)]
    pub algorithm: Option<String>,
    /// Key lifetimes (`"0s"`: never rolled).
    #[serde(default, deserialize_with = "maybe_duration")]
    pub zsk_lifetime: Option<Duration>,
    /// See `zsk-lifetime`.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub ksk_lifetime: Option<Duration>,
    /// See `zsk-lifetime`.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub csk_lifetime: Option<Duration>,
    /// The DNSKEY RRset's TTL.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub dnskey_ttl: Option<Duration>,
    /// The largest TTL in the zone (negative answers and signatures included).
    #[serde(default, deserialize_with = "maybe_duration")]
    pub zone_max_ttl: Option<Duration>,
    /// How long a change takes to reach every server of the zone.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub propagation_delay: Option<Duration>,
    /// How long a signature is valid.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub signature_validity: Option<Duration>,
    /// How long before its expiration a signature is replaced.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub signature_refresh: Option<Duration>,
    /// Added to every wait before a key is used.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub publish_safety: Option<Duration>,
    /// Added to every wait before a key is removed.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub retire_safety: Option<Duration>,
    /// The parent's DS TTL.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub parent_ds_ttl: Option<Duration>,
    /// How long a DS change takes to reach every server of the parent.
    #[serde(default, deserialize_with = "maybe_duration")]
    pub parent_propagation_delay: Option<Duration>,
    /// `nsec` or `nsec3`.
    #[serde(default)]
    pub denial: Option<String>,
    /// NSEC3 extra iterations (RFC 9276 §3.1: 0).
    #[serde(default)]
    pub nsec3_iterations: Option<u16>,
    /// NSEC3 salt length in bytes (RFC 9276 §3.1: 0); a new random salt of it.
    #[serde(default)]
    pub nsec3_salt_length: Option<u8>,
    /// NSEC3 opt-out (RFC 5155 §6).
    #[serde(default)]
    pub nsec3_opt_out: Option<bool>,
    /// `[[remote]]` ids of the parent's servers, asked for the zone's DS before a KSK
    /// or CSK rollover goes on.
    #[serde(default, deserialize_with = "super::xfr::maybe_list")]
    pub ksk_submission: Option<Vec<String>>,
}

fn maybe_duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    values::duration(d).map(Some)
}

/// What a `[[policy]]` makes: the key policy and the denial of existence (with the
/// NSEC3 salt's length; the salt itself is the signer's to draw).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningPolicy {
    /// Keys and their timings.
    pub keys: Policy,
    /// NSEC or NSEC3.
    pub denial: DenialConfig,
    /// The length of the NSEC3 salt to draw.
    pub salt_length: u8,
}

impl PolicyConfig {
    /// The policy, over the engine's defaults; why not, when it cannot work.
    pub fn resolve(&self) -> Result<SigningPolicy, String> {
        let mut keys = Policy::default();
        keys.signed = self.signing.unwrap_or(true);
        keys.scheme = match self.scheme.as_deref() {
            None => keys.scheme,
            Some("csk") => Scheme::Csk,
            Some("ksk-zsk") => Scheme::KskZsk,
            Some(other) => {
                return Err(format!("`scheme`: `{other}` (expected `csk` or `ksk-zsk`)"))
            }
        };
        if let Some(text) = &self.algorithm {
            keys.algorithm = Algorithm::from_mnemonic(text).map_err(|_| {
                format!("`algorithm`: `{text}` (expected ecdsap256sha256, ecdsap384sha384, ed25519, rsasha256 or rsasha512)")
            })?;
        }
        self.timings(&mut keys)?;
        keys.check().map_err(|e| e.to_string())?;
        let (denial, salt_length) = self.denial()?;
        Ok(SigningPolicy { keys, denial, salt_length })
    }

    /// The durations given, over `keys`' defaults.
    fn timings(&self, keys: &mut Policy) -> Result<(), String> {
        let secs = |d: Option<Duration>, default: u64| d.map_or(default, |d| d.as_secs());
        let ttl = |d: Option<Duration>, default: u32, key: &str| match d {
            None => Ok(default),
            Some(d) => {
                u32::try_from(d.as_secs()).map_err(|_| format!("`{key}`: too long for a TTL"))
            }
        };
        keys.zsk_lifetime = secs(self.zsk_lifetime, keys.zsk_lifetime);
        keys.ksk_lifetime = secs(self.ksk_lifetime, keys.ksk_lifetime);
        keys.csk_lifetime = secs(self.csk_lifetime, keys.csk_lifetime);
        keys.dnskey_ttl = ttl(self.dnskey_ttl, keys.dnskey_ttl, "dnskey-ttl")?;
        keys.zone_max_ttl = ttl(self.zone_max_ttl, keys.zone_max_ttl, "zone-max-ttl")?;
        keys.propagation_delay = secs(self.propagation_delay, keys.propagation_delay);
        keys.signature_validity = secs(self.signature_validity, keys.signature_validity);
        keys.signature_refresh = secs(self.signature_refresh, keys.signature_refresh);
        keys.publish_safety = secs(self.publish_safety, keys.publish_safety);
        keys.retire_safety = secs(self.retire_safety, keys.retire_safety);
        keys.parent_ds_ttl = ttl(self.parent_ds_ttl, keys.parent_ds_ttl, "parent-ds-ttl")?;
        keys.parent_propagation_delay =
            secs(self.parent_propagation_delay, keys.parent_propagation_delay);
        Ok(())
    }

    /// NSEC, or NSEC3 with its parameters (RFC 9276 §3.1: no extra iteration, no salt).
    fn denial(&self) -> Result<(DenialConfig, u8), String> {
        let nsec3_keys = self.nsec3_iterations.is_some()
            || self.nsec3_salt_length.is_some()
            || self.nsec3_opt_out.is_some();
        match self.denial.as_deref() {
            None | Some("nsec") if nsec3_keys => {
                Err("`nsec3-iterations`, `nsec3-salt-length` and `nsec3-opt-out` need `denial = \"nsec3\"`".into())
            }
            None | Some("nsec") => Ok((DenialConfig::Nsec, 0)),
            Some("nsec3") => {
                let config = Nsec3Config {
                    iterations: self.nsec3_iterations.unwrap_or(0),
                    salt: Vec::new(),
                    opt_out: self.nsec3_opt_out.unwrap_or(false),
                };
                Ok((DenialConfig::Nsec3(config), self.nsec3_salt_length.unwrap_or(0)))
            }
            Some(other) => Err(format!("`denial`: `{other}` (expected `nsec` or `nsec3`)")),
        }
    }
}

/// What every policy's plan shares: where keys are kept, and the threads that sign a
/// whole zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaults {
    /// The key directory.
    pub key_dir: PathBuf,
    /// Threads that sign a whole zone.
    pub threads: usize,
}

impl Defaults {
    /// Keys in `key_dir`; a whole zone signed on every core.
    pub fn new(key_dir: PathBuf) -> Defaults {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Defaults { key_dir, threads }
    }
}

/// Every `[[policy]]` resolved, by id; each one that cannot work, or is declared twice,
/// is a problem at its table.
pub fn resolve_policies(
    list: &[toml::Spanned<PolicyConfig>],
    (defaults, remotes): (&Defaults, &HashMap<String, Remote>),
    problems: &mut Vec<super::xfr::Problem>,
) -> HashMap<String, Arc<SigningPlan>> {
    let mut map = HashMap::new();
    for spanned in list {
        let config = spanned.get_ref();
        let parents = config.ksk_submission.iter().flatten().map(|id| {
            remotes
                .get(id)
                .cloned()
                .ok_or_else(|| format!("`ksk-submission`: `{id}` is not a [[remote]] id"))
        });
        let resolved = parents
            .collect::<Result<Vec<_>, _>>()
            .and_then(|parents| config.resolve().map(|resolved| (resolved, parents)));
        let (resolved, parents) = match resolved {
            Ok(resolved) => resolved,
            Err(why) => {
                problems.push((spanned.span(), format!("policy `{}`: {why}", config.id)));
                continue;
            }
        };
        let plan = SigningPlan {
            id: config.id.clone(),
            policy: resolved.keys,
            denial: resolved.denial,
            salt_length: resolved.salt_length,
            key_dir: defaults.key_dir.clone(),
            threads: defaults.threads,
            parents,
        };
        if map.insert(config.id.clone(), Arc::new(plan)).is_some() {
            problems.push((spanned.span(), format!("policy `{}` is declared twice", config.id)));
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<SigningPolicy, String> {
        let config: PolicyConfig =
            toml::from_str(&format!("id = \"p\"\n{text}")).map_err(|e| e.message().to_owned())?;
        config.resolve()
    }

    #[test]
    fn the_defaults_are_the_engines() {
        let made = policy("").unwrap();
        assert_eq!(made.keys, Policy::default());
        assert_eq!(made.denial, DenialConfig::Nsec);
    }

    #[test]
    fn settings_are_read_over_the_defaults() {
        let made = policy(
            "scheme = \"csk\"\nalgorithm = \"ED25519\"\ncsk-lifetime = \"90d\"\n\
             dnskey-ttl = \"1h\"\nsignature-validity = \"14d\"\nsignature-refresh = \"7d\"\n\
             denial = \"nsec3\"\nnsec3-opt-out = true\n",
        )
        .unwrap();
        assert_eq!(made.keys.scheme, Scheme::Csk);
        assert_eq!(made.keys.algorithm, Algorithm::Ed25519);
        assert_eq!(made.keys.csk_lifetime, 90 * 86_400);
        assert_eq!(made.keys.dnskey_ttl, 3600);
        assert_eq!(made.keys.signature_validity, 14 * 86_400);
        let DenialConfig::Nsec3(nsec3) = made.denial else { panic!("NSEC3") };
        assert_eq!((nsec3.iterations, nsec3.salt.len(), nsec3.opt_out), (0, 0, true));
    }

    #[test]
    fn unworkable_policies_say_why() {
        assert!(policy("scheme = \"two\"").unwrap_err().contains("`scheme`"));
        assert!(policy("algorithm = \"dsa\"").unwrap_err().contains("`algorithm`"));
        assert!(policy("denial = \"nsec5\"").unwrap_err().contains("`denial`"));
        assert!(policy("nsec3-opt-out = true").unwrap_err().contains("need `denial"));
        let refresh = policy("signature-validity = \"1d\"\nsignature-refresh = \"2d\"");
        assert!(refresh.is_err(), "a refresh longer than the validity");
        assert!(policy("colour = \"blue\"").is_err());
    }
}
