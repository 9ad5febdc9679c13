//! The defences against being used as a reflector: `[rrl]` (response rate limiting) and
//! `[cookies]` (DNS cookies, RFC 7873 with RFC 9018 server cookies).
//!
//! Both are read at start; a reload warns that a change waits for the next restart.
//! Cookie secrets are 32 hex digits (16 bytes, the SipHash-2-4 key of RFC 9018 §4.4),
//! given inline or in a file read when the configuration is; [`CookieConfig::schedule`]
//! turns them into the engine's [`Schedule`].

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer};
use serde::Deserialize;
use tern_engine::{Prefix, Schedule};

use super::values;

/// `[rrl]`: response rate limiting, in the spirit of BIND's and Knot DNS's RRL.
///
/// UDP answers are counted per client prefix, response class and name (see
/// `tern_engine::class`); over its rate an answer is dropped, or every `slip`-th one
/// replaced by a short one (TC=1, or BADCOOKIE with `require-cookie`). TCP answers and
/// answers to queries with a valid server cookie are never limited.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RrlConfig {
    /// Positive answers per second for one prefix, name and type; 0 (the default) turns
    /// rate limiting off.
    #[serde(default, deserialize_with = "values::count_in::<_, 0, 1000000>")]
    pub rate: u64,
    /// NXDOMAIN answers per second for one prefix and zone (default: `rate`; 0: not
    /// limited).
    #[serde(default, deserialize_with = "class_rate")]
    pub nxdomain_rate: Option<u64>,
    /// NODATA answers per second for one prefix and zone (default: `rate`).
    #[serde(default, deserialize_with = "class_rate")]
    pub nodata_rate: Option<u64>,
    /// Referrals per second for one prefix and zone cut (default: `rate`).
    #[serde(default, deserialize_with = "class_rate")]
    pub referral_rate: Option<u64>,
    /// Wildcard answers per second for one prefix and wildcard (default: `rate`).
    #[serde(default, deserialize_with = "class_rate")]
    pub wildcard_rate: Option<u64>,
    /// Error answers (REFUSED, SERVFAIL, FORMERR, …) per second for one prefix (default:
    /// `rate`).
    #[serde(default, deserialize_with = "class_rate")]
    pub error_rate: Option<u64>,
    /// The period the rates are measured over: at most `rate × window` answers in any
    /// window, so a prefix that was quiet may take that many at once.
    #[serde(default = "default_window", deserialize_with = "window")]
    pub window: Duration,
    /// Every `slip`-th limited answer is sent short instead of dropped (0: drop all, 1:
    /// none dropped).
    #[serde(default = "default_slip", deserialize_with = "values::count_in::<_, 0, 10>")]
    pub slip: u64,
    /// Bits of an IPv4 client address that make its prefix.
    #[serde(default = "default_ipv4_prefix", deserialize_with = "values::count_in::<_, 8, 32>")]
    pub ipv4_prefix: u64,
    /// Bits of an IPv6 client address that make its prefix.
    #[serde(default = "default_ipv6_prefix", deserialize_with = "values::count_in::<_, 16, 128>")]
    pub ipv6_prefix: u64,
    /// Count and log what would be limited, but send every answer (a dry run).
    #[serde(default)]
    pub log_only: bool,
    /// Client prefixes never limited.
    #[serde(default, deserialize_with = "prefixes")]
    pub whitelist: Vec<Prefix>,
    /// Counters kept (rounded up to a power of two, 8 bytes each); the least recently
    /// active give way when they are all taken.
    #[serde(
        default = "default_table_size",
        deserialize_with = "values::count_in::<_, 1024, 16777216>"
    )]
    pub table_size: u64,
    /// A limited client that sent a cookie without a valid server cookie gets BADCOOKIE
    /// with one, in place of TC=1, when its answer slips: it comes back with the cookie
    /// (and is then not limited) instead of over TCP.
    #[serde(default)]
    pub require_cookie: bool,
    /// How often a prefix still being limited is logged again.
    #[serde(default = "default_log_interval", deserialize_with = "values::duration")]
    pub log_interval: Duration,
}

impl RrlConfig {
    /// True when answers are limited (a `rate` is set).
    pub fn enabled(&self) -> bool {
        self.rate > 0
    }

    /// The rates per second of positive, wildcard, NXDOMAIN, NODATA, referral and error
    /// answers (the order of `tern_engine::ResponseClass::ALL`); 0 is not limited.
    pub fn rates(&self) -> [u64; 6] {
        let or_rate = |r: Option<u64>| r.unwrap_or(self.rate);
        [
            self.rate,
            or_rate(self.wildcard_rate),
            or_rate(self.nxdomain_rate),
            or_rate(self.nodata_rate),
            or_rate(self.referral_rate),
            or_rate(self.error_rate),
        ]
    }
}

impl Default for RrlConfig {
    fn default() -> Self {
        RrlConfig {
            rate: 0,
            nxdomain_rate: None,
            nodata_rate: None,
            referral_rate: None,
            wildcard_rate: None,
            error_rate: None,
            window: default_window(),
            slip: default_slip(),
            ipv4_prefix: default_ipv4_prefix(),
            ipv6_prefix: default_ipv6_prefix(),
            log_only: false,
            whitelist: Vec::new(),
            table_size: default_table_size(),
            require_cookie: false,
            log_interval: default_log_interval(),
        }
    }
}

/// A cookie secret: 16 bytes, written as 32 hex digits. Never printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CookieSecret(pub [u8; 16]);

impl fmt::Debug for CookieSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CookieSecret(..)")
    }
}

impl CookieSecret {
    /// Reads 32 hex digits (an optional `0x` first, as Knot DNS writes them).
    pub fn parse(text: &str) -> Result<CookieSecret, String> {
        let digits = text.trim();
        let digits = digits.strip_prefix("0x").unwrap_or(digits);
        let bad = || format!("a cookie secret is 32 hex digits (16 bytes), not `{text}`");
        if digits.len() != 32 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let mut key = [0u8; 16];
        for (i, byte) in key.iter_mut().enumerate() {
            let pair = digits.get(2 * i..2 * i + 2).ok_or_else(bad)?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(CookieSecret(key))
    }
}

/// `[cookies]`: DNS cookies (RFC 7873) with RFC 9018 server cookies.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CookieConfig {
    /// Answer and check cookies (on by default, as BIND does); off, the option is
    /// ignored.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Server secrets: the first makes cookies, all are accepted (at most four). The
    /// same secrets on every server of a set (of any make speaking RFC 9018) let them
    /// accept each other's cookies. None: a random secret made at start.
    #[serde(default, deserialize_with = "secrets")]
    pub secret: Vec<CookieSecret>,
    /// A file holding the secrets, one per line, read with the configuration (relative
    /// to the configuration file).
    #[serde(default)]
    pub secret_file: Option<PathBuf>,
    /// Make a new secret every period, deriving it from the (first) secret, and accept
    /// the previous period's too: servers given the same secret rotate in step. At least
    /// an hour, the lifetime of a server cookie. Default: every 24 hours when no secret is
    /// given, never when one is (the secret is then used as it is).
    #[serde(default, deserialize_with = "rotation")]
    pub rotate: Option<Duration>,
}

impl Default for CookieConfig {
    fn default() -> Self {
        CookieConfig { enabled: true, secret: Vec::new(), secret_file: None, rotate: None }
    }
}

/// Most cookie secrets accepted at once.
const MAX_SECRETS: usize = tern_engine::cookie::MAX_SECRETS;

/// The rotation period when the secret is a random one made at start.
pub const RANDOM_SECRET_ROTATION: Duration = Duration::from_secs(24 * 3600);

impl CookieConfig {
    /// The engine's secret schedule, `random` supplying a master secret when none is
    /// configured; `None` when cookies are off.
    pub fn schedule(&self, random: impl FnOnce() -> [u8; 16]) -> Option<Schedule> {
        if !self.enabled {
            return None;
        }
        let secs = |d: Duration| d.as_secs().max(1);
        Some(match (self.secret.split_first(), self.rotate) {
            (None, rotate) => Schedule::Rotating {
                master: random(),
                period: secs(rotate.unwrap_or(RANDOM_SECRET_ROTATION)),
            },
            (Some((first, _)), Some(period)) => {
                Schedule::Rotating { master: first.0, period: secs(period) }
            }
            (Some((first, rest)), None) => {
                Schedule::Fixed { current: first.0, previous: rest.iter().map(|s| s.0).collect() }
            }
        })
    }

    /// Reads `secret-file` (made absolute against `base`) into `secret`, and checks the
    /// combination of keys; problems go to `errors`.
    pub(crate) fn resolve(
        &mut self,
        base: &Path,
        errors: &mut Vec<(Option<Range<usize>>, String)>,
    ) {
        if let Some(file) = &mut self.secret_file {
            if file.is_relative() {
                *file = base.join(&*file);
            }
            if !self.secret.is_empty() {
                errors.push((None, "cookies: give `secret` or `secret-file`, not both".into()));
                return;
            }
            match read_secrets(file) {
                Ok(secrets) => self.secret = secrets,
                Err(why) => errors.push((None, format!("cookies: {}: {why}", file.display()))),
            }
        }
        if self.secret.len() > MAX_SECRETS {
            errors.push((None, format!("cookies: at most {MAX_SECRETS} secrets are accepted")));
        }
        if self.rotate.is_some() && self.secret.len() > 1 {
            let why = "cookies: with `rotate`, give one secret (the others are derived from it)";
            errors.push((None, why.into()));
        }
    }
}

/// The secrets of a secret file: one per line; blank lines and `#` comments skipped.
fn read_secrets(path: &Path) -> Result<Vec<CookieSecret>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let secrets: Vec<CookieSecret> = text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(CookieSecret::parse)
        .collect::<Result<_, _>>()?;
    if secrets.is_empty() {
        return Err("no secret in the file".into());
    }
    Ok(secrets)
}

fn default_true() -> bool {
    true
}

fn default_window() -> Duration {
    Duration::from_secs(1)
}

fn default_slip() -> u64 {
    2
}

fn default_ipv4_prefix() -> u64 {
    24
}

fn default_ipv6_prefix() -> u64 {
    56
}

fn default_table_size() -> u64 {
    65536
}

fn default_log_interval() -> Duration {
    Duration::from_secs(10)
}

fn class_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    values::count_in::<D, 0, 1000000>(d).map(Some)
}

/// A window of 1 second to an hour, as BIND allows.
fn window<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let window = values::duration(d)?;
    if window < Duration::from_secs(1) || window > Duration::from_secs(3600) {
        return Err(de::Error::custom("the window is 1s to 1h"));
    }
    Ok(window)
}

/// A rotation period of an hour (the lifetime of a server cookie, RFC 9018 §4.3) to 36
/// days (RFC 7873 §7.1 asks for a change at least that often).
fn rotation<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let period = values::duration(d)?;
    if period < Duration::from_secs(3600) || period > Duration::from_secs(36 * 24 * 3600) {
        return Err(de::Error::custom("`rotate` is 1h to 864h (36 days)"));
    }
    Ok(Some(period))
}

/// One string or a list of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

fn secrets<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<CookieSecret>, D::Error> {
    texts(d)?.iter().map(|t| CookieSecret::parse(t).map_err(de::Error::custom)).collect()
}

fn prefixes<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Prefix>, D::Error> {
    let parse = |t: &String| {
        Prefix::parse(t).ok_or_else(|| {
            de::Error::custom(format!(
                "`{t}` is not an address or prefix (expected `192.0.2.0/24`, `2001:db8::/32` or an address)"
            ))
        })
    };
    texts(d)?.iter().map(parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn read(text: &str) -> Result<Config, String> {
        Config::from_text(text, Path::new("/etc/tern/t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn rrl_defaults_and_class_rates() {
        let off = read("").unwrap();
        assert!(!off.rrl.enabled());
        let on = read("[rrl]\nrate = 20\nnxdomain-rate = 5\nerror-rate = 0\n").unwrap();
        assert!(on.rrl.enabled());
        assert_eq!(on.rrl.rates(), [20, 20, 5, 20, 20, 0]);
        assert_eq!((on.rrl.slip, on.rrl.ipv4_prefix, on.rrl.ipv6_prefix), (2, 24, 56));
        assert_eq!(on.rrl.window, Duration::from_secs(1));
        let full = read(
            "[rrl]\nrate = 5\nwindow = \"15s\"\nslip = 0\nipv4-prefix = 32\nlog-only = true\n\
             whitelist = [\"10.0.0.0/8\", \"2001:db8::1\"]\nrequire-cookie = true\n",
        )
        .unwrap();
        assert_eq!(full.rrl.whitelist.len(), 2);
        assert!(full.rrl.log_only && full.rrl.require_cookie);
    }

    #[test]
    fn rrl_bad_values_are_reported() {
        for (text, needle) in [
            ("[rrl]\nrate = -1\n", "rate"),
            ("[rrl]\nwindow = \"500ms\"\n", "1s to 1h"),
            ("[rrl]\nslip = 11\n", "out of range"),
            ("[rrl]\nipv4-prefix = 33\n", "out of range"),
            ("[rrl]\nwhitelist = \"10.0.0.0/33\"\n", "not an address or prefix"),
            ("[rrl]\nrat = 3\n", "did you mean `rate`"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn cookie_secrets_inline_and_from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cookie.keys");
        std::fs::write(
            &file,
            "# new first\ne5e973e5a6b2a43f48e7dc849e37bfcf\n0x445536bcd2513298075a5d379663c962\n",
        )
        .unwrap();
        let config = read(&format!("[cookies]\nsecret-file = \"{}\"\n", file.display())).unwrap();
        assert_eq!(config.cookies.secret.len(), 2);
        assert_eq!(config.cookies.secret[0].0[..2], [0xe5, 0xe9]);
        let Some(Schedule::Fixed { current, previous }) = config.cookies.schedule(|| [0; 16])
        else {
            panic!("a fixed schedule")
        };
        assert_eq!((current[0], previous.len()), (0xe5, 1));
        let inline =
            read("[cookies]\nsecret = \"445536bcd2513298075a5d379663c962\"\nrotate = \"26h\"\n")
                .unwrap();
        let Some(Schedule::Rotating { master, period }) = inline.cookies.schedule(|| [0; 16])
        else {
            panic!("rotating")
        };
        assert_eq!((master[0], period), (0x44, 26 * 3600));
        let random = read("").unwrap().cookies.schedule(|| [3; 16]);
        assert!(matches!(random, Some(Schedule::Rotating { master: [3, ..], period: 86400 })));
        assert!(read("[cookies]\nenabled = false\n")
            .unwrap()
            .cookies
            .schedule(|| [0; 16])
            .is_none());
        assert!(format!("{:?}", inline.cookies).contains("CookieSecret(..)"), "never printed");
    }

    #[test]
    fn cookie_mistakes_are_reported() {
        for (text, needle) in [
            ("[cookies]\nsecret = \"e5e9\"\n", "32 hex digits"),
            ("[cookies]\nsecret = \"zz\"\n", "32 hex digits"),
            ("[cookies]\nrotate = \"30m\"\n", "1h to 864h"),
            ("[cookies]\nsecret-file = \"/nonexistent/keys\"\n", "/nonexistent/keys"),
            (
                "[cookies]\nrotate = \"2h\"\nsecret = [\"e5e973e5a6b2a43f48e7dc849e37bfcf\", \"445536bcd2513298075a5d379663c962\"]\n",
                "give one secret",
            ),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
