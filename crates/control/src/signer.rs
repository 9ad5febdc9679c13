//! Online signing (issue #51): a zone whose plan names a signing policy is served
//! signed by this server. The [`Signer`] holds the zone's key store and policy; what
//! signs at a moment — the keys and the options — is a [`SignKit`], handed to the
//! commit function, whose `sign` step ([`sign`]) turns every unsigned change into the
//! signed change before it is journaled and published (so the journal and IXFR out
//! carry signed changes):
//!
//! * changesets (a transaction, a PATCH, an UPDATE batch, a reload's difference) are
//!   signed one by one with [`tern_sign::sign_change_applied`], each against the
//!   version the one before it left — only the RRsets they touch and the denial records
//!   around them; a batch of one is signed onto the version its UPDATE step made;
//! * a whole version replacing a served one (a reload whose serial did not rise) is
//!   turned into its difference from the served version, signed the same way;
//! * a zone's first version is kept as it is when it is already signed with the
//!   policy's keys and denial (the zone file written by this server, the journal
//!   replayed onto it); otherwise it is signed whole ([`tern_sign::sign_zone`]) with its
//!   serial raised, so that secondaries holding the unsigned version take the signed
//!   one, and the journal (which led to unsigned versions) starts afresh.
//!
//! Records the signer makes (RRSIG, NSEC, NSEC3, NSEC3PARAM, DNSKEY, and CDS/CDNSKEY)
//! are taken out of an unsigned change first: a zone file edited by hand may hold the
//! signed zone, and its difference then names them.
//!
//! The policy's steps (keys made, published, retired, RFC 7583) and signature refresh
//! run on the writer's timer (`Writer::sign_due`); each refresh slice is committed
//! as a change the signer made ([`Change::Signed`]), which the sign step leaves alone.

use std::sync::Arc;

use tern_engine::SerialPolicy;
use tern_sign::policy::{key_sets, Cds, Outcome, Policy};
use tern_sign::{CdsRecords, DenialConfig, Nsec3Config, SignOptions, SigningKey, Validity};
use tern_wire::Rtype;
use tern_zone::{Changeset, Denial, History, RecordData, ZoneContents};

use crate::change::{with_serial, Change};
use crate::error::{Error, Result};
use crate::keystore::KeyStore;
pub use crate::plan::SigningPlan;

/// Signatures are made valid from this long before now: a resolver whose clock is
/// behind, or this server's clock stepping back, does not see them "not yet valid".
const INCEPTION_BACK: u64 = 3600;

/// A kit is made again when it is this old at most (its validity window moves with the
/// clock).
const KIT_AGE: u64 = 3600;

/// What signs at a moment: the keys and the options (validity, denial, the DNSKEY RRset
/// and CDS/CDNSKEY as the policy's key sets say).
#[derive(Debug)]
pub struct SignKit {
    keys: Vec<SigningKey>,
    options: SignOptions,
    serial: SerialPolicy,
    now: u64,
}

/// How a commit signs (see [`sign`]).
#[derive(Debug, Clone)]
pub enum Signing {
    /// Not: the zone is not signed by this server.
    Off,
    /// With this kit.
    With(Arc<SignKit>),
    /// Not, though the zone should be (its key store cannot be used, why): a change is
    /// refused, but for a first version that is signed already (the zone file this
    /// server wrote), served as it is.
    Unavailable(String),
}

/// A signed zone's signer (see the module comment).
#[derive(Debug)]
pub struct Signer {
    plan: Arc<SigningPlan>,
    store: KeyStore,
    kit: Option<Arc<SignKit>>,
    /// When the policy's next step falls due.
    pub keys_due: Option<u64>,
    /// When signatures are next looked at.
    pub refresh_due: u64,
    /// The keys whose DS the parent is awaited for (id, present).
    pub awaiting: Vec<(u32, bool)>,
    /// No signature expires before this (seconds since the epoch), as the last refresh
    /// pass over the whole zone left it.
    pub valid_until: Option<u64>,
    /// The latest inception of the kits made since the last whole refresh pass: after
    /// now, the clock was set back and signatures not yet valid are served.
    pub latest_inception: u64,
}

impl Signer {
    /// Opens the zone's key store and takes the policy's steps due at `now` (the first
    /// keys made); on a blocking thread, since it may write key files.
    pub fn open(plan: Arc<SigningPlan>, zone: &tern_wire::Dname, now: u64) -> Result<Signer> {
        let store = KeyStore::open(&plan.key_dir, zone)?;
        let mut signer = Signer {
            plan,
            store,
            kit: None,
            keys_due: None,
            refresh_due: now,
            awaiting: vec![],
            valid_until: None,
            latest_inception: 0,
        };
        signer.advance(now)?;
        Ok(signer)
    }

    /// The plan it signs by.
    pub fn plan(&self) -> &Arc<SigningPlan> {
        &self.plan
    }

    /// The key store.
    pub fn store(&self) -> &KeyStore {
        &self.store
    }

    /// The key store, to change (a DS seen at the parent).
    pub fn store_mut(&mut self) -> &mut KeyStore {
        self.kit = None;
        &mut self.store
    }

    /// Takes the policy's steps due at `now`; what was done.
    pub fn advance(&mut self, now: u64) -> Result<Outcome> {
        let outcome = self.store.advance(&self.plan.policy, now)?;
        if outcome.changed() {
            self.kit = None;
        }
        self.keys_due = outcome.next;
        self.awaiting.clone_from(&outcome.awaiting);
        Ok(outcome)
    }

    /// True when signing is turned off and its last key is gone (the DS left the
    /// parent and every cache, RFC 8078 §4): the zone is served unsigned from then on,
    /// and its changes are not signed.
    pub fn unsigned(&self) -> bool {
        !self.plan.policy.signed && self.store.keys().is_empty()
    }

    /// The kit to sign with at `now` for `zone` (its NSEC3 salt kept), made again when
    /// the keys changed or it is an hour old.
    pub fn kit(
        &mut self,
        zone: Option<&ZoneContents>,
        serial: SerialPolicy,
        now: u64,
    ) -> Result<Arc<SignKit>> {
        // Signatures are valid from the kit's time: it is made again well before that
        // matters (a tenth of the refresh window, an hour at most), and when it was made
        // after now (the clock set back since: its signatures would not be valid yet).
        let max_age = (self.plan.policy.signature_refresh / 10).clamp(1, KIT_AGE);
        if let Some(kit) = &self.kit {
            let age = now.checked_sub(kit.now).filter(|age| *age < max_age);
            let fresh = age.is_some() && kit.serial == serial;
            if fresh && self.same_salt(kit, zone) {
                return Ok(Arc::clone(kit));
            }
        }
        let kit = Arc::new(self.make_kit(zone, serial, now)?);
        self.latest_inception = self.latest_inception.max(inception(now));
        self.kit = Some(Arc::clone(&kit));
        Ok(kit)
    }

    fn make_kit(
        &self,
        zone: Option<&ZoneContents>,
        serial: SerialPolicy,
        now: u64,
    ) -> Result<SignKit> {
        let policy = &self.plan.policy;
        let sets = key_sets(policy, self.store.keys(), now);
        let dnskey_of = |id: &u32| self.store.signing_key(*id).map(|k| k.dnskey().to_vec());
        let mut signing: Vec<u32> = sets.sign_keys.iter().chain(&sets.sign_zone).copied().collect();
        signing.sort_unstable();
        signing.dedup();
        let mut keys = Vec::with_capacity(signing.len());
        for id in &signing {
            let key =
                self.store.signing_key(*id).ok_or(Error::NotTaken("a key the state names"))?;
            keys.push(SigningKey::from_pkcs8(key.algorithm(), key.role(), &key.to_pkcs8()?)?);
        }
        let validity = validity(policy, now, self.store.zone())?;
        let mut options = SignOptions::new(validity);
        options.denial = self.denial(zone);
        options.dnskey_ttl = Some(policy.dnskey_ttl);
        options.threads = self.plan.threads.max(1);
        options.published =
            sets.dnskey.iter().filter(|id| !signing.contains(id)).filter_map(dnskey_of).collect();
        options.withheld =
            signing.iter().filter(|id| !sets.dnskey.contains(id)).filter_map(dnskey_of).collect();
        options.cds = Some(match &sets.cds {
            Cds::Absent => CdsRecords::Absent,
            Cds::Delete => CdsRecords::Delete,
            Cds::Keys(ids) => CdsRecords::Keys(ids.iter().filter_map(dnskey_of).collect()),
        });
        Ok(SignKit { keys, options, serial, now })
    }

    /// False when `zone` has an NSEC3 chain with a salt of the policy's length that is
    /// not the kit's (the kit was made before the zone was loaded).
    fn same_salt(&self, kit: &SignKit, zone: Option<&ZoneContents>) -> bool {
        let (DenialConfig::Nsec3(config), Some(chain)) =
            (&kit.options.denial, zone.and_then(ZoneContents::nsec3))
        else {
            return true;
        };
        let salt = &chain.params.salt;
        salt == &config.salt || salt.len() != usize::from(self.plan.salt_length)
    }

    /// The policy's denial; an NSEC3 salt of the policy's length is the served zone's
    /// when it has one (a new salt would change every NSEC3 record), else drawn anew.
    fn denial(&self, zone: Option<&ZoneContents>) -> DenialConfig {
        let DenialConfig::Nsec3(config) = &self.plan.denial else { return DenialConfig::Nsec };
        let length = usize::from(self.plan.salt_length);
        let served = zone.and_then(|z| z.nsec3()).map(|chain| chain.params.salt.clone());
        let salt = match served {
            Some(salt) if salt.len() == length => salt,
            _ => random_salt(length),
        };
        DenialConfig::Nsec3(Nsec3Config { salt, ..config.clone() })
    }
}

impl SignKit {
    /// The keys that sign.
    pub fn keys(&self) -> &[SigningKey] {
        &self.keys
    }

    /// The signing options.
    pub fn options(&self) -> &SignOptions {
        &self.options
    }

    /// True when `zone` is signed as this kit signs: its denial, and every key of the
    /// kit in its DNSKEY RRset (or withheld).
    pub fn signed(&self, zone: &ZoneContents) -> bool {
        let denial = match &self.options.denial {
            DenialConfig::Nsec => Denial::Nsec,
            DenialConfig::Nsec3(_) => Denial::Nsec3,
        };
        if zone.denial() != denial {
            return false;
        }
        let Some(apex) = zone.apex() else { return false };
        let Some(dnskeys) = apex.rrset(Rtype::DNSKEY) else { return false };
        let held: Vec<&[u8]> = dnskeys.rdatas().collect();
        self.keys.iter().all(|k| {
            held.contains(&k.dnskey()) || self.options.withheld.iter().any(|w| w == k.dnskey())
        })
    }

    /// True when nothing signs and no DNSKEY is published: the zone is served unsigned
    /// (a policy with `signing = false` at its end).
    pub fn unsigned(&self) -> bool {
        self.keys.is_empty() && self.options.published.is_empty()
    }

    /// The serial after `serial`, by the zone's update policy.
    pub fn next_serial(&self, serial: u32) -> u32 {
        self.serial.next(serial, self.now)
    }
}

/// The inception of signatures made at `now` (an hour before).
pub fn inception(now: u64) -> u64 {
    now.saturating_sub(INCEPTION_BACK)
}

/// Signatures valid from an hour ago for the policy's validity, expirations spread over
/// a tenth of the refresh window (seeded by the zone's name: the same at every start).
fn validity(policy: &Policy, now: u64, zone: &tern_wire::Name) -> Result<Validity> {
    let inception = inception(now) as u32;
    let expiration = now.saturating_add(policy.signature_validity) as u32;
    let window = u32::try_from(policy.signature_refresh / 10).unwrap_or(u32::MAX);
    let seed = zone
        .as_wire()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    Ok(Validity::new(inception, expiration)?.with_jitter(window, seed)?)
}

fn random_salt(length: usize) -> Vec<u8> {
    let mut salt = vec![0; length];
    let _ = aws_lc_rs::rand::fill(&mut salt);
    salt
}

/// True for the types the signer makes: an unsigned change does not carry them.
fn made_by_signer(rtype: Rtype) -> bool {
    matches!(
        rtype,
        Rtype::RRSIG
            | Rtype::NSEC
            | Rtype::NSEC3
            | Rtype::NSEC3PARAM
            | Rtype::DNSKEY
            | Rtype::CDS
            | Rtype::CDNSKEY
    )
}

/// `change` without the records the signer makes.
fn unsigned(mut change: Changeset) -> Changeset {
    change.removed.retain(|r| !made_by_signer(r.rtype));
    change.added.retain(|r| !made_by_signer(r.rtype));
    change
}

/// `zone` signed whole by `kit`, its serial raised.
fn signed_whole(zone: &ZoneContents, kit: &SignKit) -> Result<ZoneContents> {
    let soa = zone.soa_record().ok_or(Error::NoSoa("the zone"))?;
    let raised = with_serial(&soa, kit.next_serial(zone.serial()))?;
    let mut zone = ZoneContents::clone(zone);
    zone.apply_in_place(&Changeset::between(soa, raised))
        .map_err(|why| Error::Apply { what: "the raised serial does not apply", why })?;
    Ok(tern_sign::sign_zone(&zone, &kit.keys, &kit.options)?.to_contents()?)
}

/// The change that signs `zone` whole when it is served unsigned — a policy attached
/// to a served zone by a reload — as its difference from the signed version (journaled
/// and sent by IXFR like any change), the serial raised. `None` for a signed zone.
pub fn sign_served(zone: &ZoneContents, kit: &SignKit) -> Result<Option<Changeset>> {
    if zone.denial() != Denial::Unsigned {
        return Ok(None);
    }
    let signed = signed_whole(zone, kit)?;
    Ok(Some(zone.diff(&signed).ok_or(Error::NoSoa("the zone"))?))
}

/// The change that leaves `zone` unsigned once signing is off and its keys are gone
/// ([`Signer::unsigned`]): every record the signer made (DNSKEY, RRSIG, NSEC, NSEC3,
/// NSEC3PARAM, CDS, CDNSKEY) removed, the serial raised to `serial`. `None` when the
/// zone holds none of them.
pub fn unsign(zone: &ZoneContents, serial: u32) -> Result<Option<Changeset>> {
    let mut removed = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rdata| {
        if made_by_signer(rtype) {
            removed.push(RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() });
        }
    });
    if removed.is_empty() {
        return Ok(None);
    }
    let soa = zone.soa_record().ok_or(Error::NoSoa("the zone"))?;
    let raised = with_serial(&soa, serial)?;
    let mut change = Changeset::between(soa, raised);
    change.removed = removed;
    Ok(Some(change))
}

/// The commit function's sign step (see the module comment): `change`, unsigned, made
/// into the signed change of `base` by `kit`.
pub fn sign(base: Option<&Arc<ZoneContents>>, change: Change, signing: &Signing) -> Result<Change> {
    let kit = match signing {
        Signing::Off => return Ok(change),
        Signing::With(kit) => kit,
        Signing::Unavailable(why) => return unavailable(base, change, why),
    };
    if kit.unsigned() {
        return Ok(change); // nothing signs: `unsign` took the signatures out
    }
    match change {
        Change::Signed(_) => Ok(change),
        Change::Apply(changes) => chain(base.ok_or(Error::NothingServed)?, changes, kit),
        Change::Built { zone, changes } => {
            let changes = changes.into_iter().map(Arc::unwrap_or_clone).collect();
            built(base.ok_or(Error::NothingServed)?, zone, changes, kit)
        }
        Change::Whole { zone, history, journal } => match base {
            Some(base) => replace(base, &zone, kit),
            // Signed as the kit signs: this server's own signed zone file, with the
            // journal replayed onto it.
            None if kit.signed(&zone) => Ok(Change::Whole { zone, history, journal }),
            None => first(&zone, kit),
        },
        Change::Rebased { change, journal } => match *change {
            // The signer's own whole version ([`resign_denial`]).
            Change::Whole { zone, history, journal: append } if kit.signed(&zone) => {
                let whole = Change::Whole { zone, history, journal: append };
                Ok(Change::Rebased { change: Box::new(whole), journal })
            }
            _ => Err(Error::NotTaken(
                "a signed zone with `zonefile-sync = \"never\"` (its journal would lead from the unsigned file)",
            )),
        },
    }
}

/// `base`, served signed with another denial than `kit`'s (a reload changed the
/// policy's: NSEC to NSEC3, its parameters, or back), or served unsigned when `kit`
/// signs with NSEC3 (a reload attached the policy), signed whole by `kit`: the
/// signer's records taken out, the rest signed again, the serial raised. A whole
/// version that starts the journal afresh, as a first signing does: no changeset swaps
/// one denial chain for another (the zone applies NSEC3 records only to an NSEC3 zone).
pub fn resign_denial(base: &ZoneContents, kit: &SignKit) -> Result<Change> {
    let serial = kit.next_serial(base.serial());
    let mut zone = ZoneContents::clone(base);
    let strip = match unsign(base, serial)? {
        Some(strip) => strip,
        None => {
            let soa = base.soa_record().ok_or(Error::NoSoa("the served version"))?;
            Changeset::between(soa.clone(), with_serial(&soa, serial)?)
        }
    };
    zone.apply_in_place(&strip)
        .map_err(|why| Error::Apply { what: "the signer's records do not come out", why })?;
    let signed = tern_sign::sign_zone(&zone, &kit.keys, &kit.options)?.to_contents()?;
    let whole = Change::Whole { zone: signed, history: History::default(), journal: vec![] };
    Ok(Change::Rebased { change: Box::new(whole), journal: vec![] })
}

/// Without a kit: only a first version already signed is taken, as it is.
fn unavailable(base: Option<&Arc<ZoneContents>>, change: Change, why: &str) -> Result<Change> {
    match change {
        Change::Whole { zone, history, journal } if base.is_none() && holds_signing(&zone) => {
            Ok(Change::Whole { zone, history, journal })
        }
        _ => Err(Error::Unsignable(why.to_owned())),
    }
}

/// A version built by one change (`zone`: `base` with it applied, as an UPDATE batch
/// of one leaves it) signed from that version, which is not made again; more changes,
/// or one carrying records the signer makes, as [`chain`] signs them.
fn built(
    base: &Arc<ZoneContents>,
    zone: ZoneContents,
    changes: Vec<Changeset>,
    kit: &SignKit,
) -> Result<Change> {
    match <[Changeset; 1]>::try_from(changes) {
        Ok([change])
            if !change.all_removed().chain(change.all_added()).any(|r| made_by_signer(r.rtype)) =>
        {
            let (change, zone) =
                tern_sign::sign_change_applied(base, zone, &change, &kit.keys, &kit.options)?;
            Ok(Change::Built { zone, changes: vec![Arc::new(change)] })
        }
        Ok(one) => chain(base, one.into(), kit),
        Err(changes) => chain(base, changes, kit),
    }
}

/// Each change signed against the version the one before it left.
fn chain(base: &Arc<ZoneContents>, changes: Vec<Changeset>, kit: &SignKit) -> Result<Change> {
    let mut zone = ZoneContents::clone(base);
    let mut signed = Vec::with_capacity(changes.len());
    for change in changes.into_iter().map(unsigned) {
        let applied = zone
            .apply(&change)
            .map_err(|why| Error::Apply { what: "the change does not apply", why })?
            .0;
        let (change, next) =
            tern_sign::sign_change_applied(&zone, applied, &change, &kit.keys, &kit.options)?;
        zone = next;
        signed.push(Arc::new(change));
    }
    Ok(Change::Built { zone, changes: signed })
}

/// A whole version in place of the served one, as its difference (the serial raised
/// when the version did not raise it).
fn replace(base: &Arc<ZoneContents>, zone: &ZoneContents, kit: &SignKit) -> Result<Change> {
    let mut change = unsigned(base.diff(zone).ok_or(Error::NoSoa("the new version"))?);
    if change.removed.is_empty() && change.added.is_empty() {
        return Ok(Change::Built { zone: ZoneContents::clone(base), changes: Vec::new() });
    }
    if !tern_zone::records::serial_gt(zone.serial(), base.serial()) {
        let soa = base.soa_record().ok_or(Error::NoSoa("the served version"))?;
        change.soa_to = Some(with_serial(&soa, kit.next_serial(base.serial()))?);
    }
    chain(base, vec![change], kit)
}

/// True when `zone` holds records the signer makes (an apex DNSKEY, a denial chain).
pub fn holds_signing(zone: &ZoneContents) -> bool {
    let dnskey = zone.apex().and_then(|apex| apex.rrset(Rtype::DNSKEY)).is_some();
    dnskey || zone.denial() != Denial::Unsigned
}

/// A zone's first version, not signed as the kit signs: signed whole with its serial
/// raised and no history (the journal, which led to unsigned versions, starts afresh).
fn first(zone: &ZoneContents, kit: &SignKit) -> Result<Change> {
    let signed = signed_whole(zone, kit)?;
    let whole = Change::Whole { zone: signed, history: History::default(), journal: vec![] };
    Ok(Change::Rebased { change: Box::new(whole), journal: vec![] })
}

#[cfg(test)]
mod tests {
    use tern_sign::{Algorithm, KeyRole};

    use super::*;
    use crate::testing::load;

    const TEXT: &str =
        "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster 7 7200 3600 1209600 300\n\
                        @ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n*.wild TXT \"w\"\n\
                        sub NS ns.sub\nns.sub A 192.0.2.54\n";

    fn types(zone: &ZoneContents) -> Vec<(String, Rtype)> {
        let mut seen = Vec::new();
        zone.for_each_record(|owner, rtype, _, _| seen.push((owner.to_string(), rtype)));
        seen.sort();
        seen
    }

    fn kit(denial: DenialConfig) -> SignKit {
        let keys: Vec<SigningKey> = [KeyRole::Ksk, KeyRole::Zsk]
            .iter()
            .map(|&role| SigningKey::generate(Algorithm::EcdsaP256Sha256, role).unwrap())
            .collect();
        let mut options = SignOptions::new(Validity::new(1_000, 2_000_000_000).unwrap());
        options.denial = denial;
        options.cds = Some(CdsRecords::Delete);
        SignKit { keys, options, serial: SerialPolicy::Increment, now: 1_000 }
    }

    fn signed(denial: DenialConfig) -> ZoneContents {
        let kit = kit(denial);
        let zone = load("example.com.", TEXT);
        tern_sign::sign_zone(&zone, &kit.keys, &kit.options).unwrap().to_contents().unwrap()
    }

    /// A policy attached to a zone served unsigned (by a reload): `sign_served` makes
    /// the change that signs it whole, serial raised; a signed zone needs none.
    #[test]
    fn a_zone_served_unsigned_is_signed_whole_by_one_change() {
        let kit = kit(DenialConfig::Nsec);
        let mut zone = load("example.com.", TEXT);
        let change = sign_served(&zone, &kit).unwrap().expect("an unsigned zone gets signed");
        zone.apply_in_place(&change).unwrap();
        assert_eq!(zone.serial(), 8);
        assert_eq!(zone.denial(), Denial::Nsec);
        assert!(kit.signed(&zone), "signed as the kit signs");
        let rrsigs = types(&zone).iter().filter(|(_, t)| *t == Rtype::RRSIG).count();
        assert!(rrsigs >= 8, "{rrsigs} RRSIGs");
        assert!(sign_served(&zone, &kit).unwrap().is_none(), "a signed zone is left alone");
    }

    /// Signing turned off, its keys gone: the change `unsign` makes leaves exactly the
    /// unsigned zone (every DNSKEY, RRSIG, NSEC/NSEC3, NSEC3PARAM, CDS and CDNSKEY out,
    /// the data kept), with the serial raised; an unsigned zone needs no such change.
    #[test]
    fn unsign_leaves_exactly_the_unsigned_zone() {
        let unsigned = load("example.com.", TEXT);
        let nsec3 = Nsec3Config { iterations: 0, salt: Vec::new(), opt_out: false };
        for denial in [DenialConfig::Nsec, DenialConfig::Nsec3(nsec3)] {
            let mut zone = signed(denial);
            let before = types(&zone);
            for rtype in [Rtype::DNSKEY, Rtype::RRSIG, Rtype::CDS, Rtype::CDNSKEY] {
                assert!(before.iter().any(|(_, t)| *t == rtype), "{rtype} signed: {before:?}");
            }
            let change = unsign(&zone, 8).unwrap().expect("a signed zone is unsigned by a change");
            zone.apply_in_place(&change).unwrap();
            assert_eq!(zone.serial(), 8);
            assert_eq!(types(&zone), types(&unsigned), "only the unsigned data is left");
            assert_eq!(zone.denial(), Denial::Unsigned);
            // (An NSEC3 chain without records may stay behind: denial says unsigned.)
            assert!(zone.nsec3().is_none_or(|chain| chain.nodes().next().is_none()));
            assert!(unsign(&zone, 9).unwrap().is_none(), "nothing left to remove");
        }
    }
}
