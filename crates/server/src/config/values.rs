//! Value types of the configuration file that check themselves while being read.
//!
//! Each type validates in its `Deserialize` impl, so a bad value is reported by the `toml`
//! crate with the span of that very value (and so with its line and column).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use tern_wire::Name;
use tracing::level_filters::LevelFilter;

/// The port used when a listen address names no port.
pub const DNS_PORT: u16 = 53;

/// A listen address: `IP:PORT`, `[IPv6]:PORT`, or a bare IP (port 53).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenAddr(pub SocketAddr);

impl ListenAddr {
    /// Parses the forms listed on the type.
    pub fn parse(text: &str) -> Result<ListenAddr, String> {
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Ok(ListenAddr(addr));
        }
        match text.parse::<IpAddr>() {
            Ok(ip) => Ok(ListenAddr(SocketAddr::new(ip, DNS_PORT))),
            Err(_) => Err(format!(
                "`{text}` is not a listen address (expected `127.0.0.1:53`, `[::1]:53` or an IP)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for ListenAddr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ListenAddr::parse(&text).map_err(de::Error::custom)
    }
}

/// Parses a zone name in presentation format; a missing final dot is implied.
pub fn parse_zone_name(text: &str) -> Result<Name, String> {
    Name::parse_text(text.as_bytes(), Some(&Name::root()))
        .map_err(|why| format!("`{text}` is not a domain name: {why}"))
}

/// Reads a zone name (see [`parse_zone_name`]).
pub fn zone_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Name, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_zone_name(&text).map_err(de::Error::custom)
}

/// Parses a duration written as a number and a unit: `500ms`, `10s`, `2m`, `1h`, `1d`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let value: u64 = digits.parse().map_err(|_| duration_hint(text))?;
    let millis = match unit.trim() {
        "ms" => Some(value),
        "s" => value.checked_mul(1000),
        "m" => value.checked_mul(60_000),
        "h" => value.checked_mul(3_600_000),
        "d" => value.checked_mul(86_400_000),
        _ => None,
    };
    millis.map(Duration::from_millis).ok_or_else(|| duration_hint(text))
}

fn duration_hint(text: &str) -> String {
    format!(
        "`{text}` is not a duration (expected a number and a unit: `500ms`, `10s`, `2m`, `1h`, `1d`)"
    )
}

/// Reads a duration (see [`parse_duration`]).
pub fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_duration(&text).map_err(de::Error::custom)
}

/// Reads a count that must lie in `MIN..=MAX`.
pub fn count_in<'de, D, const MIN: u64, const MAX: u64>(deserializer: D) -> Result<u64, D::Error>
where
    D: Deserializer<'de>,
{
    let value = u64::deserialize(deserializer)?;
    if (MIN..=MAX).contains(&value) {
        Ok(value)
    } else {
        Err(de::Error::custom(format!("{value} is out of range (allowed: {MIN} to {MAX})")))
    }
}

/// An identity answer that can be off (`false`), automatic (`true`) or a given text.
///
/// Used for NSID (RFC 5001), `version.bind` and `hostname.bind` / `id.server` (RFC 4892).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Toggle {
    /// Not answered.
    Off,
    /// Answered with the automatic value (the server version, or the host name).
    Auto,
    /// Answered with this text (1 to 255 bytes: one TXT character-string).
    Text(String),
}

impl Toggle {
    /// The value to answer with, `auto` supplying the automatic one.
    pub fn resolve(&self, auto: impl FnOnce() -> String) -> Option<String> {
        match self {
            Toggle::Off => None,
            Toggle::Auto => Some(auto()),
            Toggle::Text(text) => Some(text.clone()),
        }
    }
}

impl<'de> Deserialize<'de> for Toggle {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToggleVisitor)
    }
}

struct ToggleVisitor;

impl Visitor<'_> for ToggleVisitor {
    type Value = Toggle;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`true`, `false` or a text of 1 to 255 bytes")
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<Toggle, E> {
        Ok(if on { Toggle::Auto } else { Toggle::Off })
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Toggle, E> {
        if text.is_empty() || text.len() > 255 {
            return Err(E::custom("the text must be 1 to 255 bytes long (use `false` for none)"));
        }
        Ok(Toggle::Text(text.to_owned()))
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Human,
    /// One JSON object per line.
    Json,
    /// For systemd's journal: readable lines without the time (the journal stamps it),
    /// each with its syslog priority first (`<3>` error … `<7>` debug, sd-daemon(3)).
    Journal,
}

impl LogFormat {
    /// The format as `[log] format` writes it.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Human => "human",
            LogFormat::Json => "json",
            LogFormat::Journal => "journal",
        }
    }
}

/// Reads a log level: `error`, `warn`, `info`, `debug` or `trace`.
pub fn log_level<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LevelFilter, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_log_level(&text).map_err(de::Error::custom)
}

/// Parses a log level (see [`log_level`]).
pub fn parse_log_level(text: &str) -> Result<LevelFilter, String> {
    match text {
        "error" | "warn" | "info" | "debug" | "trace" => {
            text.parse().map_err(|_| format!("`{text}` is not a log level"))
        }
        _ => {
            Err(format!("`{text}` is not a log level (expected error, warn, info, debug or trace)"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(ListenAddr::parse("127.0.0.1:5353").unwrap().0.to_string(), "127.0.0.1:5353");
        assert_eq!(ListenAddr::parse("[::1]:53").unwrap().0.to_string(), "[::1]:53");
        assert_eq!(ListenAddr::parse("::").unwrap().0.to_string(), "[::]:53");
        assert_eq!(ListenAddr::parse("10.0.0.1").unwrap().0.port(), 53);
        assert!(ListenAddr::parse("localhost:53").is_err());
        assert!(ListenAddr::parse("127.0.0.1:99999").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        // The unit the documented defaults use (`refresh-max = "1d"`).
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        for bad in ["", "10", "s", "1.5s", "-1s", "10 parsecs", "99999999999999999999h", "1w"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zone_names() {
        assert_eq!(parse_zone_name("example.com").unwrap().to_string(), "example.com.");
        assert_eq!(parse_zone_name("example.com.").unwrap().to_string(), "example.com.");
        assert_eq!(parse_zone_name(".").unwrap().to_string(), ".");
        assert!(parse_zone_name("a..b").is_err());
        assert!(parse_zone_name(&"a".repeat(64)).is_err());
    }

    #[test]
    fn toggles() {
        assert_eq!(Toggle::Off.resolve(|| "x".into()), None);
        assert_eq!(Toggle::Auto.resolve(|| "x".into()), Some("x".into()));
        assert_eq!(Toggle::Text("y".into()).resolve(|| "x".into()), Some("y".into()));
    }

    #[test]
    fn log_levels() {
        assert_eq!(parse_log_level("debug"), Ok(LevelFilter::DEBUG));
        assert!(parse_log_level("loud").is_err());
        assert!(parse_log_level("INFO").is_err());
    }
}
