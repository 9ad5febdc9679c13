//! Who may do what: the TSIG keys the server knows and, per zone, the rules that allow or
//! deny zone transfers, NOTIFY and dynamic updates by client address prefix and TSIG key.
//!
//! Rules are tried in order; the first whose action, address and key all match decides
//! (allow, or deny when it says so). When none matches, the request is denied: transfers,
//! NOTIFY and updates are refused until the configuration allows them, as Knot DNS and
//! NSD do. A rule without addresses matches every address; a rule without keys matches
//! signed and unsigned requests alike, and a rule with keys only requests signed (and
//! verified) with one of them.
//!
//! An update rule may also limit what it covers ([`UpdateLimits`]: owner names and
//! types, the shape of Knot DNS's `update-owner`, `update-owner-match` and
//! `update-type`). Updates are decided record by record (RFC 2136 §3.3): for each record
//! of the update section the first update rule matching the client, the key *and* the
//! record decides, as BIND's `update-policy` statements do; every record must be
//! allowed. (Knot DNS asks instead that one rule allow every record of the message;
//! deciding per record lets two narrow rules together allow an update touching both.)
//!
//! A rule may also ask for an encrypted transport and name the client by its TLS
//! certificate (RFC 9103 §9.3.3, zone transfers over TLS): `tls` (the request came over
//! TLS or QUIC), `cert_keys` (the client presented a certificate whose key has one of
//! these pins) and `client_cert` (its certificate chained to the server's client CA:
//! mutual TLS). Plain TCP and UDP requests never match such rules.
//!
//! The server builds an [`Access`] from its configuration and swaps it in as a whole on
//! reload; the engine reads it only for the requests that need it (TSIG-signed messages,
//! transfers, NOTIFY), never on the common query path. The zones' rules are a
//! copy-on-write [`NameMap`]: a copy that takes one zone more or less (`ternctl
//! zone-add`) shares the rest with the rules in force, so it costs the same beside ten
//! zones or a million.

use std::net::IpAddr;
use std::sync::Arc;

use tern_wire::tsig::{Key, Keyring};
use tern_wire::{Dname, Name, Rtype};
use tern_zone::NameMap;

/// What a request asks to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// AXFR or IXFR out (RFC 5936 §6, RFC 1995).
    Transfer,
    /// Accept a NOTIFY (RFC 1996 §3.10).
    Notify,
    /// Accept a dynamic update (RFC 2136 §3.3), within the rule's [`UpdateLimits`].
    Update,
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

/// What the TLS layer knows of the client of an encrypted connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TlsClient {
    /// The SHA-256 digest of the SubjectPublicKeyInfo of the certificate the client
    /// presented (its key pin), if it presented one.
    pub pin: Option<[u8; 32]>,
    /// The certificate chained to the server's client CA (mutual TLS).
    pub verified: bool,
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
    /// What an update may touch ([`Action::Update`] only; other actions ignore it).
    pub update: UpdateLimits,
    /// Only requests over TLS or QUIC.
    pub tls: bool,
    /// Only clients whose certificate's key has one of these pins (empty: any).
    pub cert_keys: Vec<[u8; 32]>,
    /// Only clients whose certificate chained to the server's client CA.
    pub client_cert: bool,
}

impl Rule {
    /// True when the rule is about `action` from `who`.
    fn matches(&self, action: Action, who: &Who<'_>) -> bool {
        self.actions.contains(&action)
            && (self.addresses.is_empty() || self.addresses.iter().any(|p| p.contains(who.client)))
            && (self.keys.is_empty()
                || who.key.is_some_and(|k| self.keys.iter().any(|n| **n == *k)))
            && self.tls_matches(who.tls)
    }

    /// The rule's TLS conditions, for a client with `tls` (`None`: not encrypted).
    fn tls_matches(&self, tls: Option<&TlsClient>) -> bool {
        if !self.tls && self.cert_keys.is_empty() && !self.client_cert {
            return true;
        }
        let Some(tls) = tls else { return false };
        (self.cert_keys.is_empty() || tls.pin.is_some_and(|p| self.cert_keys.contains(&p)))
            && (!self.client_cert || tls.verified)
    }
}

/// Who asks: the client's address, the TSIG key that signed the request (verified),
/// and what TLS knows of it on an encrypted transport.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The client's address.
    pub client: IpAddr,
    /// The verified TSIG key's name.
    pub key: Option<&'a Dname>,
    /// The TLS client, on TLS and QUIC.
    pub tls: Option<&'a TlsClient>,
}

impl<'a> Who<'a> {
    /// A client at `client` over a plain transport, signed with `key`.
    pub fn plain(client: IpAddr, key: Option<&'a Dname>) -> Who<'a> {
        Who { client, key, tls: None }
    }
}

/// Which owner names an update rule covers (Knot DNS's `update-owner`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Owners {
    /// Every name of the zone.
    #[default]
    Any,
    /// The name of the TSIG key that signed the update (BIND's `self` and `selfsub`):
    /// a host updating its own records. An unsigned update matches no name.
    Key,
    /// The zone's apex.
    Zone,
    /// These names (absolute).
    Names(Vec<Name>),
}

/// How an owner is compared with the names of [`Owners`] (Knot DNS's
/// `update-owner-match`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OwnerMatch {
    /// The name itself or any name below it.
    #[default]
    SubOrEqual,
    /// The name itself.
    Equal,
    /// Names strictly below it (BIND's `wildcard *.name`).
    Sub,
}

/// What an update rule covers: owner names and types. The default covers everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateLimits {
    /// The owner names.
    pub owners: Owners,
    /// How owners are compared with them.
    pub owner_match: OwnerMatch,
    /// The types (empty: every type).
    pub types: Vec<Rtype>,
}

impl UpdateLimits {
    /// True when a change to `rtype` at `owner` in `zone`, signed with `key`, is within
    /// the limits. `rtype` is `None` for a change that names no type (deleting every
    /// RRset of a name that holds none): only the owner is then compared.
    pub fn covers(
        &self,
        zone: &Dname,
        key: Option<&Dname>,
        owner: &Dname,
        rtype: Option<Rtype>,
    ) -> bool {
        let type_ok = rtype.is_none_or(|t| self.types.is_empty() || self.types.contains(&t));
        let matches = |name: &Dname| match self.owner_match {
            OwnerMatch::SubOrEqual => owner.ends_with(name),
            OwnerMatch::Equal => owner.eq_ignore_case(name),
            OwnerMatch::Sub => owner.is_below(name),
        };
        let owner_ok = match &self.owners {
            Owners::Any => true,
            Owners::Key => key.is_some_and(matches),
            Owners::Zone => matches(zone),
            Owners::Names(names) => names.iter().any(|n| matches(n)),
        };
        type_ok && owner_ok
    }
}

/// The rules of one zone, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneAccess {
    /// The rules; the first that matches decides. Shared with the zone's settings and
    /// with the zones whose settings are the same (a million secondaries of one
    /// primary hold one list).
    pub rules: Arc<[Rule]>,
}

impl ZoneAccess {
    /// Whether `who` may do `action`.
    pub fn allows(&self, action: Action, who: &Who<'_>) -> bool {
        self.rules.iter().find(|r| r.matches(action, who)).is_some_and(|r| !r.deny)
    }

    /// Whether some rule lets `who` update the zone at all: the test made before an
    /// update is read further. Each record is then checked with
    /// [`allows_update`](Self::allows_update).
    pub fn may_update(&self, who: &Who<'_>) -> bool {
        self.rules.iter().any(|r| !r.deny && r.matches(Action::Update, who))
    }

    /// Whether `who` may change `rtype` at `owner` in `zone` (`None`: a change naming
    /// no type, see [`UpdateLimits::covers`]). The first update rule matching the
    /// client, the key and the record decides; none: denied.
    pub fn allows_update(
        &self,
        zone: &Dname,
        who: &Who<'_>,
        owner: &Dname,
        rtype: Option<Rtype>,
    ) -> bool {
        self.rules
            .iter()
            .find(|r| {
                r.matches(Action::Update, who) && r.update.covers(zone, who.key, owner, rtype)
            })
            .is_some_and(|r| !r.deny)
    }
}

/// The keys and every zone's rules.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The TSIG keys the server knows (for every signed message).
    pub keys: Vec<Key>,
    /// Rules per zone origin (each entry the origin and its rules); a zone without an
    /// entry allows nothing.
    pub zones: NameMap<(Name, ZoneAccess)>,
}

impl Access {
    /// The rules of `zone`, if it has an entry.
    pub fn zone(&self, zone: &Dname) -> Option<&ZoneAccess> {
        self.zones.get(zone).map(|(_, rules)| rules)
    }

    /// Whether `who` may do `action` on `zone`.
    pub fn allows(&self, zone: &Dname, action: Action, who: &Who<'_>) -> bool {
        self.zone(zone).is_some_and(|z| z.allows(action, who))
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
            ]
            .into(),
        };
        let t = Action::Transfer;
        assert!(zone.allows(t, &Who::plain(ip("127.0.0.1"), Some(&key))));
        assert!(!zone.allows(t, &Who::plain(ip("127.0.0.1"), None)), "key required");
        assert!(!zone.allows(t, &Who::plain(ip("127.0.0.2"), Some(&key))), "denied first");
        assert!(!zone.allows(t, &Who::plain(ip("10.0.0.1"), Some(&key))), "no rule: deny");
        assert!(zone.allows(Action::Notify, &Who::plain(ip("10.0.0.1"), None)), "open rule");
        assert!(!ZoneAccess::default().allows(t, &Who::plain(ip("127.0.0.1"), None)));
    }

    #[test]
    fn update_limits_cover_owners_and_types() {
        let n = |s: &str| s.parse::<Name>().unwrap();
        let zone = n("example.");
        let key = n("host.example.");
        let covers = |limits: &UpdateLimits, owner: &str, rtype: Option<Rtype>| {
            limits.covers(&zone, Some(&key), &n(owner), rtype)
        };
        let all = UpdateLimits::default();
        assert!(covers(&all, "anything.example.", Some(Rtype::NS)));
        let names = |m: OwnerMatch| UpdateLimits {
            owners: Owners::Names(vec![n("dyn.example.")]),
            owner_match: m,
            types: vec![Rtype::A, Rtype::AAAA],
        };
        let (equal, sub, both) =
            (names(OwnerMatch::Equal), names(OwnerMatch::Sub), names(OwnerMatch::SubOrEqual));
        assert!(covers(&equal, "DYN.example.", Some(Rtype::A)), "names compare in any case");
        assert!(!covers(&equal, "a.dyn.example.", Some(Rtype::A)));
        assert!(covers(&sub, "a.dyn.example.", Some(Rtype::AAAA)));
        assert!(!covers(&sub, "dyn.example.", Some(Rtype::A)));
        assert!(covers(&both, "dyn.example.", Some(Rtype::A)));
        assert!(covers(&both, "b.a.dyn.example.", Some(Rtype::A)));
        assert!(!covers(&both, "xdyn.example.", Some(Rtype::A)), "label-wise");
        assert!(!covers(&both, "dyn.example.", Some(Rtype::TXT)), "type");
        assert!(covers(&both, "dyn.example.", None), "no type: the owner decides");
        let own = UpdateLimits { owners: Owners::Key, ..UpdateLimits::default() };
        assert!(covers(&own, "host.example.", Some(Rtype::TXT)));
        assert!(!own.covers(&zone, None, &key, Some(Rtype::TXT)), "unsigned");
        let apex = UpdateLimits {
            owners: Owners::Zone,
            owner_match: OwnerMatch::Equal,
            ..UpdateLimits::default()
        };
        assert!(covers(&apex, "example.", Some(Rtype::MX)) && !covers(&apex, "www.example.", None));
    }

    #[test]
    fn updates_are_decided_per_record_and_other_actions_ignore_the_limits() {
        let n = |s: &str| s.parse::<Name>().unwrap();
        let zone = n("example.");
        let txt_only = UpdateLimits { types: vec![Rtype::TXT], ..UpdateLimits::default() };
        let access = ZoneAccess {
            rules: vec![
                Rule {
                    actions: vec![Action::Update],
                    deny: true,
                    update: UpdateLimits {
                        owners: Owners::Names(vec![n("locked.example.")]),
                        ..UpdateLimits::default()
                    },
                    ..Rule::default()
                },
                Rule {
                    actions: vec![Action::Update, Action::Transfer],
                    update: txt_only,
                    ..Rule::default()
                },
            ]
            .into(),
        };
        let client = ip("192.0.2.1");
        let allows = |owner: &str, rtype: Rtype| {
            access.allows_update(&zone, &Who::plain(client, None), &n(owner), Some(rtype))
        };
        assert!(allows("www.example.", Rtype::TXT));
        assert!(!allows("www.example.", Rtype::A), "no rule covers A: denied");
        assert!(!allows("locked.example.", Rtype::TXT), "the deny rule comes first");
        assert!(access.may_update(&Who::plain(client, None)));
        assert!(
            access.allows(Action::Transfer, &Who::plain(client, None)),
            "limits are for updates only"
        );
        assert!(!access.allows(Action::Notify, &Who::plain(client, None)));
        assert!(!ZoneAccess::default().may_update(&Who::plain(client, None)));
    }
}

#[cfg(test)]
mod tls_tests {
    use super::*;

    #[test]
    fn tls_conditions_need_an_encrypted_client_that_fits() {
        let pin = [7u8; 32];
        let rule = |tls, cert_keys: Vec<[u8; 32]>, client_cert| ZoneAccess {
            rules: vec![Rule {
                actions: vec![Action::Transfer],
                tls,
                cert_keys,
                client_cert,
                ..Rule::default()
            }]
            .into(),
        };
        let client = "192.0.2.1".parse().unwrap();
        let plain = Who::plain(client, None);
        let anonymous = TlsClient::default();
        let pinned = TlsClient { pin: Some(pin), verified: false };
        let verified = TlsClient { pin: Some([9; 32]), verified: true };
        fn over(client: IpAddr, tls: &TlsClient) -> Who<'_> {
            Who { client, key: None, tls: Some(tls) }
        }
        let t = Action::Transfer;
        assert!(rule(false, vec![], false).allows(t, &plain), "no TLS condition");
        assert!(!rule(true, vec![], false).allows(t, &plain), "TLS required");
        assert!(rule(true, vec![], false).allows(t, &over(client, &anonymous)));
        let by_pin = rule(false, vec![pin], false);
        assert!(!by_pin.allows(t, &plain) && !by_pin.allows(t, &over(client, &anonymous)));
        assert!(!by_pin.allows(t, &over(client, &verified)), "another key");
        assert!(by_pin.allows(t, &over(client, &pinned)));
        let mutual = rule(false, vec![], true);
        assert!(!mutual.allows(t, &over(client, &pinned)), "not chained to the client CA");
        assert!(mutual.allows(t, &over(client, &verified)));
    }
}
