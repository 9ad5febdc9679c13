//! `ternd demo`: a built-in configuration serving an embedded example zone on
//! 127.0.0.1:8053, for a first run without writing any file.

use crate::config::{Config, ListenAddr, ZoneConfig, ZoneSource};
use crate::error::{Error, Result};

/// Where the demo listens: not 5353, which is multicast DNS (RFC 6762) and taken by
/// avahi on many desktops; 8053 is a customary unprivileged port for a test DNS server.
pub const LISTEN: &str = "127.0.0.1:8053";
/// The demo zone's name.
pub const ZONE: &str = "example.com.";
/// The demo zone's master file.
pub const ZONE_TEXT: &str = include_str!("example.com.zone");

/// The demo configuration, listening on `listen` (default [`LISTEN`]).
pub fn config(listen: Option<ListenAddr>) -> Result<Config> {
    let listen = match listen {
        Some(addr) => addr,
        None => ListenAddr::parse(LISTEN).map_err(Error::Config)?,
    };
    let name = crate::config::values::parse_zone_name(ZONE).map_err(Error::Config)?;
    let zone = ZoneConfig::primary(name, ZoneSource::Embedded(ZONE_TEXT));
    let mut config = Config::built_in(vec![listen], vec![zone])?;
    config.server.udp_workers = std::num::NonZeroUsize::new(1);
    config.server.tcp_workers = std::num::NonZeroUsize::new(1);
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_serves_example_com_on_8053() {
        let config = config(None).unwrap();
        assert_eq!(config.server.listen[0].0.to_string(), "127.0.0.1:8053");
        assert_eq!(config.resolved.zones[0].name.to_string(), "example.com.");
        assert!(ZONE_TEXT.contains("$ORIGIN example.com."));
        assert!(ZONE_TEXT.contains(" SOA "));
    }
}
