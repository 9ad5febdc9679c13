//! A key and signing policy: which keys a zone has, how long they live, and the TTLs
//! and delays that decide when each step of a rollover is safe (RFC 7583 §2's
//! parameters), with the intervals derived from them.

use crate::algorithm::Algorithm;
use crate::error::{Error, Result};

/// Seconds in a day, for the defaults.
const DAY: u64 = 86_400;

/// Which keys sign the zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scheme {
    /// A key signing key for the DNSKEY RRset and a zone signing key for the rest.
    #[default]
    KskZsk,
    /// One combined signing key for everything (RFC 7583 §3.4's single-type signing).
    Csk,
}

/// A key and signing policy (see the module docs). Durations are in seconds; a key
/// lifetime of 0 means the key is never rolled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// False turns signing off: the DS is removed through CDS/CDNSKEY's delete form
    /// (RFC 8078 §4) and the keys only after the parent's DS is gone.
    pub signed: bool,
    /// KSK and ZSK, or CSK.
    pub scheme: Scheme,
    /// The algorithm of new keys; keys of another algorithm are replaced by an
    /// algorithm rollover (RFC 6781 §4.1.4).
    pub algorithm: Algorithm,
    /// How long a ZSK signs (Lzsk).
    pub zsk_lifetime: u64,
    /// How long a KSK signs (Lksk).
    pub ksk_lifetime: u64,
    /// How long a CSK signs.
    pub csk_lifetime: u64,
    /// The DNSKEY RRset's TTL (TTLkey).
    pub dnskey_ttl: u32,
    /// The largest TTL in the zone, signatures and negative answers (SOA MINIMUM)
    /// included (TTLsig).
    pub zone_max_ttl: u32,
    /// How long a change takes to reach every server of the zone (Dprp).
    pub propagation_delay: u64,
    /// How long a signature is valid.
    pub signature_validity: u64,
    /// How long before its expiration a signature is replaced.
    pub signature_refresh: u64,
    /// How long the signer takes, once a key signs, to have replaced every signature
    /// of the key it follows (Dsgn). `None`: signature validity less refresh, the
    /// longest a signature stays in the zone when signatures are replaced only as they
    /// come due; 0 when a change of keys re-signs the whole zone at once.
    pub signing_delay: Option<u64>,
    /// Added to every wait before a key is used (RFC 7583 §3.2.1's publish safety).
    pub publish_safety: u64,
    /// Added to every wait before a key is removed (RFC 7583's retire safety).
    pub retire_safety: u64,
    /// The DS RRset's TTL at the parent (TTLds).
    pub parent_ds_ttl: u32,
    /// How long a change of the DS takes to reach every server of the parent (DprpP).
    pub parent_propagation_delay: u64,
}

impl Default for Policy {
    /// KSK and ZSK with ECDSA P-256, the ZSK rolled every 30 days, the KSK never;
    /// one-hour TTLs and delays, a day for the zone's largest TTL and the parent's DS
    /// TTL; signatures valid 14 days, refreshed 7 days before they expire.
    fn default() -> Policy {
        Policy {
            signed: true,
            scheme: Scheme::KskZsk,
            algorithm: Algorithm::default(),
            zsk_lifetime: 30 * DAY,
            ksk_lifetime: 0,
            csk_lifetime: 0,
            dnskey_ttl: 3600,
            zone_max_ttl: 86_400,
            propagation_delay: 3600,
            signature_validity: 14 * DAY,
            signature_refresh: 7 * DAY,
            signing_delay: None,
            publish_safety: 3600,
            retire_safety: 3600,
            parent_ds_ttl: 86_400,
            parent_propagation_delay: 3600,
        }
    }
}

impl Policy {
    /// Checks that the policy can work: signatures refreshed before they expire, and
    /// every key living longer than the wait before it may sign.
    pub fn check(&self) -> Result<()> {
        if self.signature_refresh >= self.signature_validity {
            return Err(Error::Policy("the signature refresh must be shorter than the validity"));
        }
        let too_short = |lifetime: u64| lifetime != 0 && lifetime <= self.publication_interval();
        if too_short(self.zsk_lifetime) || too_short(self.csk_lifetime) {
            return Err(Error::Policy(
                "a ZSK's or CSK's lifetime must exceed the DNSKEY TTL, propagation delay and publish safety",
            ));
        }
        Ok(())
    }

    /// Dsgn (see [`Policy::signing_delay`]).
    pub fn dsgn(&self) -> u64 {
        self.signing_delay.unwrap_or(self.signature_validity.saturating_sub(self.signature_refresh))
    }

    /// Ipub = Dprp + TTLkey (+ publish safety): from a DNSKEY's publication until every
    /// cache that holds the DNSKEY RRset holds it (RFC 7583 §3.2.1).
    pub fn publication_interval(&self) -> u64 {
        self.propagation_delay + u64::from(self.dnskey_ttl) + self.publish_safety
    }

    /// Iret = Dsgn + Dprp + TTLsig (+ retire safety): from a key's retirement until no
    /// cache holds a signature it made (RFC 7583 §3.2.1).
    pub fn retire_interval(&self) -> u64 {
        self.signature_interval() + self.retire_safety
    }

    /// Dsgn + Dprp + TTLsig: from a change of the signing keys until every cached
    /// RRset carries the new keys' signatures (RFC 6781 §4.1.4's first wait).
    pub fn signature_interval(&self) -> u64 {
        self.dsgn() + self.propagation_delay + u64::from(self.zone_max_ttl)
    }

    /// Dprp + TTLkey (+ retire safety): from a change of the DNSKEY RRset's keys or
    /// signers until no cache holds the previous RRset (RFC 7583 §3.3.2's Iret).
    pub fn dnskey_interval(&self) -> u64 {
        self.propagation_delay + u64::from(self.dnskey_ttl) + self.retire_safety
    }

    /// IpubP = DprpP + TTLds (+ publish safety): from the DS change seen at the parent
    /// until no cache holds the DS RRset before it (RFC 7583 §3.3.2).
    pub fn parent_interval(&self) -> u64 {
        self.parent_propagation_delay + u64::from(self.parent_ds_ttl) + self.publish_safety
    }

    /// From the first signing of an unsigned zone until its DS may be submitted: Dprp
    /// plus the larger of TTLkey and TTLsig (+ publish safety), so that no cache holds
    /// the unsigned data, or the absence of a DNSKEY RRset, once the DS appears.
    pub fn initial_interval(&self) -> u64 {
        let ttl = u64::from(self.dnskey_ttl.max(self.zone_max_ttl));
        self.propagation_delay + ttl + self.publish_safety
    }

    /// The lifetime of keys of `role` under this policy (0: never rolled).
    pub fn lifetime(&self, role: crate::key::KeyRole) -> u64 {
        match role {
            crate::key::KeyRole::Zsk => self.zsk_lifetime,
            crate::key::KeyRole::Ksk => self.ksk_lifetime,
            crate::key::KeyRole::Csk => self.csk_lifetime,
        }
    }

    /// The roles of this policy's keys.
    pub fn roles(&self) -> &'static [crate::key::KeyRole] {
        match self.scheme {
            Scheme::KskZsk => &[crate::key::KeyRole::Ksk, crate::key::KeyRole::Zsk],
            Scheme::Csk => &[crate::key::KeyRole::Csk],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_follow_rfc_7583() {
        let p = Policy { signing_delay: Some(600), ..Policy::default() };
        assert_eq!(p.publication_interval(), 3600 + 3600 + 3600);
        assert_eq!(p.retire_interval(), 600 + 3600 + 86_400 + 3600);
        assert_eq!(p.parent_interval(), 3600 + 86_400 + 3600);
        assert_eq!(p.dnskey_interval(), 3600 + 3600 + 3600);
        assert_eq!(Policy::default().dsgn(), 7 * DAY);
        p.check().unwrap();
        let bad = Policy { signature_refresh: 14 * DAY, ..Policy::default() };
        assert!(bad.check().is_err());
        let bad = Policy { zsk_lifetime: 100, ..Policy::default() };
        assert!(bad.check().is_err());
    }
}
