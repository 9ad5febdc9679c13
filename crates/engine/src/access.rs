//! Who may do what: the TSIG keys the server knows and, per zone, the rules that allow or
//! deny zone transfers and NOTIFY by client address prefix and TSIG key.
//!
//! Rules are tried in order; the first whose action, address and key all match decides
//! (allow, or deny when it says so). When none matches, the request is denied: transfers
//! and NOTIFY are refused until the configuration allows them, as Knot DNS and NSD do.
//! A rule without addresses matches every address; a rule without keys matches signed
//! and unsigned requests alike, and a rule with keys only requests signed (and verified)
//! with one of them.
//!
//! The server builds an [`Access`] from its configuration and swaps it in as a whole on
//! reload; the engine reads it only for the requests that need it (TSIG-signed messages,
//! transfers, NOTIFY), never on the common query path.

use std::collections::HashMap;
use std::net::IpAddr;

use tern_wire::tsig::{Key, Keyring};
use tern_wire::{Dname, Name};

/// What a request asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// AXFR or IXFR out (RFC 5936 §6, RFC 1995).
    Transfer,
    /// Accept a NOTIFY (RFC 1996 §3.10).
    Notify,
}

/// An address prefix (`192.0.2.0/24`, `2001:db8::/32`, or one address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    addr: IpAddr,
    len: u8,
}

impl Prefix {
    /// The prefix of `len` bits of `addr`; `None` when `len` is longer than the address.
    pub fn new(addr: IpAddr, len: u8) -> Option<Prefix> {
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (len <= max).then_some(Prefix { addr, len })
    }

    /// One address.
    pub fn host(addr: IpAddr) -> Prefix {
        Prefix { addr, len: if addr.is_ipv4() { 32 } else { 128 } }
    }

    /// Reads `ADDRESS` or `ADDRESS/LENGTH`.
    pub fn parse(text: &str) -> Option<Prefix> {
        match text.split_once('/') {
            None => text.parse().ok().map(Prefix::host),
            Some((addr, len)) => Prefix::new(addr.parse().ok()?, len.parse().ok()?),
        }
    }

    /// True when `addr` is inside the prefix (an IPv4-mapped IPv6 address counts as
    /// its IPv4 address).
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            v4 => v4,
        };
        let (ours, theirs, bits) = match (self.addr, addr) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                (u128::from(a.to_bits()), u128::from(b.to_bits()), 32)
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => (a.to_bits(), b.to_bits(), 128),
            _ => return false,
        };
        let shift = bits - u32::from(self.len);
        shift >= bits || (ours >> shift) == (theirs >> shift)
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// One access rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// Client prefixes the rule covers (empty: every address).
    pub addresses: Vec<Prefix>,
    /// Keys one of which must have signed the request (empty: any key or none).
    pub keys: Vec<Name>,
    /// What the rule is about.
    pub actions: Vec<Action>,
    /// Deny instead of allow.
    pub deny: bool,
}

impl Rule {
    /// True when the rule is about `action` from `client` signed with `key`.
    fn matches(&self, action: Action, client: IpAddr, key: Option<&Dname>) -> bool {
        self.actions.contains(&action)
            && (self.addresses.is_empty() || self.addresses.iter().any(|p| p.contains(client)))
            && (self.keys.is_empty() || key.is_some_and(|k| self.keys.iter().any(|n| **n == *k)))
    }
}

/// The rules of one zone, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneAccess {
    /// The rules; the first that matches decides.
    pub rules: Vec<Rule>,
}

impl ZoneAccess {
    /// Whether `client`, having signed with `key` (verified), may do `action`.
    pub fn allows(&self, action: Action, client: IpAddr, key: Option<&Dname>) -> bool {
        self.rules.iter().find(|r| r.matches(action, client, key)).is_some_and(|r| !r.deny)
    }
}

/// The keys and every zone's rules.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The TSIG keys the server knows (for every signed message).
    pub keys: Vec<Key>,
    /// Rules per zone origin; a zone without an entry allows nothing.
    pub zones: HashMap<Name, ZoneAccess>,
}

impl Access {
    /// Whether `client` may do `action` on `zone` with the verified `key`.
    pub fn allows(
        &self,
        zone: &Dname,
        action: Action,
        client: IpAddr,
        key: Option<&Dname>,
    ) -> bool {
        self.zones.get(zone).is_some_and(|z| z.allows(action, client, key))
    }
}

impl Keyring for Access {
    fn find(&self, name: &Dname) -> Option<&Key> {
        self.keys.find(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn prefixes() {
        let p = Prefix::parse("192.0.2.0/24").unwrap();
        assert!(p.contains(ip("192.0.2.200")) && !p.contains(ip("192.0.3.1")));
        assert!(p.contains(ip("::ffff:192.0.2.9")), "IPv4-mapped");
        assert!(!p.contains(ip("2001:db8::1")));
        let v6 = Prefix::parse("2001:db8::/32").unwrap();
        assert!(v6.contains(ip("2001:db8:1::5")) && !v6.contains(ip("2001:db9::1")));
        assert!(Prefix::parse("0.0.0.0/0").unwrap().contains(ip("203.0.113.1")));
        assert!(Prefix::parse("::/0").unwrap().contains(ip("::1")));
        assert!(Prefix::parse("127.0.0.1").unwrap().contains(ip("127.0.0.1")));
        assert!(!Prefix::parse("127.0.0.1").unwrap().contains(ip("127.0.0.2")));
        assert!(Prefix::parse("10.0.0.0/33").is_none() && Prefix::parse("nope").is_none());
    }

    #[test]
    fn first_matching_rule_decides_and_the_default_is_deny() {
        let key: Name = "xfr.".parse().unwrap();
        let zone = ZoneAccess {
            rules: vec![
                Rule {
                    addresses: vec![Prefix::parse("127.0.0.2").unwrap()],
                    actions: vec![Action::Transfer],
                    deny: true,
                    ..Rule::default()
                },
                Rule {
                    addresses: vec![Prefix::parse("127.0.0.0/8").unwrap()],
                    keys: vec![key.clone()],
                    actions: vec![Action::Transfer],
                    ..Rule::default()
                },
                Rule { actions: vec![Action::Notify], ..Rule::default() },
            ],
        };
        let t = Action::Transfer;
        assert!(zone.allows(t, ip("127.0.0.1"), Some(&key)));
        assert!(!zone.allows(t, ip("127.0.0.1"), None), "key required");
        assert!(!zone.allows(t, ip("127.0.0.2"), Some(&key)), "denied first");
        assert!(!zone.allows(t, ip("10.0.0.1"), Some(&key)), "no rule: deny");
        assert!(zone.allows(Action::Notify, ip("10.0.0.1"), None), "open rule");
        assert!(!ZoneAccess::default().allows(t, ip("127.0.0.1"), None));
    }
}
