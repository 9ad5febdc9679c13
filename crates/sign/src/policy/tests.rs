//! The policy engine driven through years of key life on an injected clock: a
//! simulated parent that applies the CDS content after a lag, every state recorded,
//! and at every recorded moment the zone checked as resolvers holding any mix of cached
//! DS, DNSKEY and signed RRsets would validate it. Each rollover's stage times are
//! checked against RFC 7583's formulas.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::algorithm::Algorithm;
use crate::key::KeyRole;

const DAY: u64 = 86_400;
const START: u64 = 1_800_000_000;

/// One recorded moment: the parent's DS keys and what the zone publishes.
#[derive(Debug, Clone)]
struct Moment {
    at: u64,
    ds: BTreeSet<u32>,
    dnskey: BTreeSet<u32>,
    sign_keys: BTreeSet<u32>,
    sign_zone: BTreeSet<u32>,
}

struct Sim {
    policy: Policy,
    keys: Vec<KeyInfo>,
    meta: BTreeMap<u32, (Algorithm, KeyRole)>,
    next_id: u32,
    now: u64,
    /// The parent's DS RRset, and the one it will have at a time.
    parent: BTreeSet<u32>,
    pending: Option<(u64, BTreeSet<u32>)>,
    /// How long the parent takes to act on a CDS change.
    lag: u64,
    events: Vec<(u64, Action)>,
    moments: Vec<Moment>,
}

impl Sim {
    fn new(policy: Policy) -> Sim {
        policy.check().unwrap();
        Sim {
            policy,
            keys: Vec::new(),
            meta: BTreeMap::new(),
            next_id: 1,
            now: START,
            parent: BTreeSet::new(),
            pending: None,
            lag: DAY + 1234,
            events: Vec::new(),
            moments: Vec::new(),
        }
    }

    /// Everything due at `now`, the parent's reaction included; the next time.
    fn step(&mut self) -> Option<u64> {
        let mut next;
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds < 20, "no quiescence at {}", self.now);
            let (meta, next_id, now) = (&mut self.meta, &mut self.next_id, self.now);
            let outcome = advance(&self.policy, &mut self.keys, now, |role, algorithm| {
                let id = *next_id;
                *next_id += 1;
                meta.insert(id, (algorithm, role));
                Ok::<_, ()>(KeyInfo::new(id, id as u16, algorithm, role, now))
            })
            .unwrap();
            self.check_retirements(&outcome);
            self.events.extend(outcome.actions.iter().map(|a| (now, *a)));
            self.parent_reacts();
            let mut observed = false;
            for (id, present) in outcome.awaiting {
                if self.parent.contains(&id) == present {
                    let key = self.keys.iter_mut().find(|k| k.id == id).unwrap();
                    key.observe_ds(present, now);
                    observed = true;
                }
            }
            next = outcome.next;
            if !observed {
                break;
            }
        }
        self.record();
        [next, self.pending.as_ref().map(|p| p.0)].into_iter().flatten().min()
    }

    /// The parent follows the CDS content after its lag; a CDS delete empties it.
    fn parent_reacts(&mut self) {
        let sets = key_sets(&self.policy, &self.keys, self.now);
        let target = match sets.cds {
            Cds::Absent => None,
            Cds::Keys(ids) => Some(ids.into_iter().collect::<BTreeSet<u32>>()),
            Cds::Delete => Some(BTreeSet::new()),
        };
        if let Some(target) = target {
            let already = self.pending.as_ref().map(|p| &p.1).unwrap_or(&self.parent);
            if *already != target {
                self.pending = Some((self.now + self.lag, target));
            }
        }
        if let Some((at, ds)) = self.pending.take() {
            if at <= self.now {
                self.parent = ds;
            } else {
                self.pending = Some((at, ds));
            }
        }
    }

    /// A KSK or CSK never stops signing before the DS of the key after it is seen.
    fn check_retirements(&self, outcome: &Outcome) {
        if !self.policy.signed {
            return;
        }
        for action in &outcome.actions {
            let Action::Retire(id) = *action else { continue };
            if !self.meta[&id].1.signs_keys() {
                continue;
            }
            let seen = self.keys.iter().any(|k| {
                k.id != id
                    && k.role.signs_keys()
                    && k.is_active(self.now)
                    && matches!(k.ds, DsState::Seen { .. })
            });
            assert!(seen, "key {id} retired at {} before its successor's DS was seen", self.now);
        }
    }

    fn record(&mut self) {
        let sets = key_sets(&self.policy, &self.keys, self.now);
        let moment = Moment {
            at: self.now,
            ds: self.parent.clone(),
            dnskey: sets.dnskey.into_iter().collect(),
            sign_keys: sets.sign_keys.into_iter().collect(),
            sign_zone: sets.sign_zone.into_iter().collect(),
        };
        if let Some(last) = self.moments.last_mut().filter(|m| m.at == moment.at) {
            *last = moment;
        } else {
            self.moments.push(moment);
        }
    }

    /// Runs until `until`, or until nothing is due.
    fn run(&mut self, until: u64) {
        for _ in 0..100_000 {
            match self.step() {
                Some(next) if next <= until => {
                    assert!(next > self.now, "the next event {next} is not after {}", self.now);
                    self.now = next;
                }
                _ => return,
            }
        }
        panic!("more than 100,000 events");
    }

    /// When `action` was taken (the first time).
    fn when(&self, action: Action) -> Option<u64> {
        self.events.iter().find(|(_, a)| *a == action).map(|(t, _)| *t)
    }

    fn ids(&self, role: KeyRole) -> Vec<u32> {
        self.meta.iter().filter(|(_, m)| m.1 == role).map(|(&id, _)| id).collect()
    }

    /// Every moment, against every mix of cached versions (see the module docs).
    fn check_validation(&self) {
        let p = &self.policy;
        let ds_window = p.parent_propagation_delay + u64::from(p.parent_ds_ttl);
        let key_window = p.propagation_delay + u64::from(p.dnskey_ttl);
        let zone_window = p.dsgn() + p.propagation_delay + u64::from(p.zone_max_ttl);
        for (i, now) in self.moments.iter().enumerate() {
            let visible = |window: u64| {
                self.moments[..=i].iter().enumerate().filter(move |(j, _)| {
                    self.moments.get(j + 1).is_none_or(|m| m.at + window > now.at)
                })
            };
            for (_, d) in visible(ds_window) {
                for (_, k) in visible(key_window) {
                    for (_, z) in visible(zone_window) {
                        self.validates(d, k, z, now.at);
                    }
                }
            }
            // RFC 4035 §2.2: every algorithm of the DNSKEY RRset signs the DNSKEY RRset
            // and every RRset not yet re-signed.
            let dnskey_algs = self.algs(&now.dnskey);
            assert!(dnskey_algs.is_subset(&self.algs(&now.sign_keys)), "at {}", now.at);
            for (_, z) in visible(p.dsgn()) {
                assert!(dnskey_algs.is_subset(&self.algs(&z.sign_zone)), "at {}", now.at);
            }
        }
    }

    fn algs(&self, ids: &BTreeSet<u32>) -> BTreeSet<u8> {
        ids.iter().map(|id| self.meta[id].0.number()).collect()
    }

    /// A resolver holding DS version `d`, DNSKEY version `k` and an RRset of version `z`:
    /// for every algorithm of the DS RRset, a DS matches a DNSKEY that signs the DNSKEY
    /// RRset, and a DNSKEY of the RRset signs the RRset.
    fn validates(&self, d: &Moment, k: &Moment, z: &Moment, at: u64) {
        for alg in self.algs(&d.ds) {
            let of = |ids: &BTreeSet<u32>| {
                ids.iter().filter(|id| self.meta[*id].0.number() == alg).copied().collect()
            };
            let ds: BTreeSet<u32> = of(&d.ds);
            let chain = ds.iter().any(|id| k.dnskey.contains(id) && k.sign_keys.contains(id));
            assert!(
                chain,
                "at {at}: DS {:?} (of {}) meets DNSKEY {:?} signed by {:?} (of {})",
                d.ds, d.at, k.dnskey, k.sign_keys, k.at
            );
            let signers: BTreeSet<u32> = of(&z.sign_zone);
            assert!(
                signers.iter().any(|id| k.dnskey.contains(id)),
                "at {at}: RRset signed by {:?} (of {}) with DNSKEY {:?} (of {}), DS {:?}",
                z.sign_zone,
                z.at,
                k.dnskey,
                k.at,
                d.ds
            );
        }
    }
}

fn policy() -> Policy {
    Policy { zsk_lifetime: 30 * DAY, ksk_lifetime: 365 * DAY, ..Policy::default() }
}

#[test]
fn initial_signing_then_years_of_zsk_and_ksk_rollovers() {
    let mut sim = Sim::new(policy());
    sim.run(START + 3 * 365 * DAY);
    sim.check_validation();
    let p = &sim.policy;
    let (ksks, zsks) = (sim.ids(KeyRole::Ksk), sim.ids(KeyRole::Zsk));
    assert!(zsks.len() >= 36, "{} ZSKs", zsks.len());
    assert!(ksks.len() >= 3, "{} KSKs", ksks.len());
    // The first keys publish and sign at once; the DS follows once the unsigned data
    // and the DNSKEY RRset's absence are out of every cache.
    let (k1, z1) = (ksks[0], zsks[0]);
    assert_eq!(sim.when(Action::Publish(k1)), Some(START));
    assert_eq!(sim.when(Action::Activate(z1)), Some(START));
    assert_eq!(sim.when(Action::SubmitDs(k1)), Some(START + p.initial_interval()));
    // ZSK pre-publication (RFC 7583 §3.2.1): Tpub(N+1) = Tact(N) + Lzsk - Ipub,
    // Tact(N+1) = Tpub(N+1) + Ipub = Tret(N), Trem(N) = Tret(N) + Iret.
    for pair in zsks.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        let Some(active) = sim.when(Action::Activate(new)) else { continue };
        let old_active = sim.when(Action::Activate(old)).unwrap();
        let published = sim.when(Action::Publish(new)).unwrap();
        assert_eq!(published, old_active + p.zsk_lifetime - p.publication_interval());
        assert_eq!(active, published + p.publication_interval());
        assert_eq!(sim.when(Action::Retire(old)), Some(active));
        if let Some(removed) = sim.when(Action::Remove(old)) {
            assert_eq!(removed, active + p.retire_interval());
        }
    }
    // KSK double-DS (RFC 7583 §3.3.2): the DS submitted at the end of the lifetime, the
    // DNSKEYs swapped IpubP after it is seen, the old DS withdrawn Dprp + TTLkey after.
    for pair in ksks.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        let Some(swap) = sim.when(Action::Activate(new)) else { continue };
        let submitted = sim.when(Action::SubmitDs(new)).unwrap();
        assert_eq!(submitted, sim.when(Action::Activate(old)).unwrap() + p.ksk_lifetime);
        let seen = submitted + sim.lag;
        assert_eq!(swap, seen + p.parent_interval());
        assert_eq!(sim.when(Action::Publish(new)), Some(swap));
        assert_eq!(sim.when(Action::Retire(old)), Some(swap));
        assert_eq!(sim.when(Action::Remove(old)), Some(swap));
        assert_eq!(sim.when(Action::WithdrawDs(old)), Some(swap + p.dnskey_interval()));
    }
    assert!(sim.keys.len() <= 4, "forgotten keys: {:?}", sim.keys);
}

#[test]
fn csk_rollovers_with_gradual_re_signing() {
    let policy = Policy {
        scheme: Scheme::Csk,
        csk_lifetime: 180 * DAY,
        signing_delay: Some(3 * DAY),
        ..Policy::default()
    };
    let mut sim = Sim::new(policy);
    sim.run(START + 2 * 365 * DAY);
    sim.check_validation();
    let p = &sim.policy;
    let csks = sim.ids(KeyRole::Csk);
    assert!(csks.len() >= 4, "{csks:?}");
    for pair in csks.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        let Some(switch) = sim.when(Action::Activate(new)) else { continue };
        let published = sim.when(Action::Publish(new)).unwrap();
        let old_active = sim.when(Action::Activate(old)).unwrap();
        assert_eq!(published, old_active + p.csk_lifetime - p.publication_interval());
        assert_eq!(sim.when(Action::SubmitDs(new)), Some(published));
        let ds_cached = published + sim.lag + p.parent_interval();
        assert_eq!(switch, (published + p.publication_interval()).max(ds_cached));
        assert_eq!(sim.when(Action::Retire(old)), Some(switch));
        let Some(withdrawn) = sim.when(Action::WithdrawDs(old)) else { continue };
        assert_eq!(withdrawn, switch + p.dnskey_interval());
        let gone = withdrawn + sim.lag;
        let Some(removed) = sim.when(Action::Remove(old)) else { continue };
        assert_eq!(removed, (switch + p.retire_interval()).max(gone + p.parent_interval()));
    }
}

#[test]
fn algorithm_rollover_follows_rfc_6781_conservative_order() {
    for scheme in [Scheme::KskZsk, Scheme::Csk] {
        let mut sim = Sim::new(Policy { scheme, ..policy() });
        sim.run(START + 10 * DAY);
        let old: Vec<u32> = sim.keys.iter().map(|k| k.id).collect();
        let t1 = sim.now;
        sim.policy.algorithm = Algorithm::Ed25519;
        sim.run(t1 + 60 * DAY);
        sim.check_validation();
        let p = &sim.policy;
        let new = sim.meta.iter().filter(|m| m.1 .0 == Algorithm::Ed25519);
        let new: Vec<u32> = new.map(|m| *m.0).take(p.roles().len()).collect();
        let t2 = t1 + p.signature_interval();
        let t3 = t2 + p.publication_interval();
        let t4 = t3 + sim.lag + p.parent_interval();
        let t5 = t4 + p.dnskey_interval();
        for &id in &new {
            assert_eq!(sim.when(Action::Activate(id)), Some(t1), "{scheme:?} new signatures");
            assert_eq!(sim.when(Action::Publish(id)), Some(t2), "{scheme:?} new DNSKEY");
        }
        let ksk =
            |ids: &[u32]| -> u32 { *ids.iter().find(|id| sim.meta[*id].1.signs_keys()).unwrap() };
        assert_eq!(sim.when(Action::SubmitDs(ksk(&new))), Some(t3), "{scheme:?} new DS");
        assert_eq!(sim.when(Action::WithdrawDs(ksk(&old))), Some(t3), "{scheme:?} old DS");
        for &id in &old {
            assert_eq!(sim.when(Action::Remove(id)), Some(t4), "{scheme:?} old DNSKEY out");
            assert_eq!(sim.when(Action::Retire(id)), Some(t5), "{scheme:?} old RRSIGs out");
            assert!(sim.when(Action::Delete(id)).is_some());
        }
        assert!(sim.keys.iter().all(|k| k.algorithm == Algorithm::Ed25519));
    }
}

#[test]
fn turning_signing_off_waits_for_the_ds_to_be_gone() {
    let mut sim = Sim::new(policy());
    sim.run(START + 20 * DAY);
    assert!(!sim.parent.is_empty(), "the DS is at the parent");
    let off = sim.now;
    sim.policy.signed = false;
    assert_eq!(key_sets(&sim.policy, &sim.keys, off).cds, Cds::Delete, "RFC 8078 §4");
    let text = |rtype, rdata: &[u8]| tern_wire::rdata::to_text(rtype, rdata);
    assert_eq!(text(tern_wire::Rtype::CDS, &CDS_DELETE), "0 0 0 00");
    assert_eq!(text(tern_wire::Rtype::CDNSKEY, &CDNSKEY_DELETE), "0 3 0 AA==");
    sim.run(off + 30 * DAY);
    sim.check_validation();
    let gone = off + sim.lag;
    let p = &sim.policy;
    for id in sim.ids(KeyRole::Ksk).into_iter().chain(sim.ids(KeyRole::Zsk)) {
        if let Some(removed) = sim.when(Action::Remove(id)) {
            if removed >= off {
                assert_eq!(removed, gone + p.parent_interval());
            }
        }
    }
    assert!(sim.keys.is_empty() && sim.parent.is_empty());
    let sets = key_sets(&sim.policy, &sim.keys, sim.now);
    assert!(!sets.is_signed() && sets.cds == Cds::Absent && sets.dnskey.is_empty());
}

#[test]
fn a_restart_resumes_from_the_recorded_state() {
    // Planning is a function of the recorded timings only: the same keys, planned
    // again (as after a restart), give the same steps.
    let mut sim = Sim::new(policy());
    sim.run(START + 100 * DAY);
    let saved = sim.keys.clone();
    let again = plan(&sim.policy, &saved, sim.now);
    assert_eq!(again, plan(&sim.policy, &sim.keys, sim.now));
    assert!(again.actions.iter().all(|a| matches!(a, Action::AwaitParent { .. })));
    assert!(again.next.is_some_and(|n| n > sim.now));
}

#[test]
fn key_sets_of_a_zsk_rollover_in_progress() {
    let p = policy();
    let mut keys = vec![
        KeyInfo::new(1, 11, Algorithm::EcdsaP256Sha256, KeyRole::Ksk, 0),
        KeyInfo::new(2, 22, Algorithm::EcdsaP256Sha256, KeyRole::Zsk, 0),
        KeyInfo::new(3, 33, Algorithm::EcdsaP256Sha256, KeyRole::Zsk, 0),
    ];
    for k in &mut keys {
        k.published = Some(10);
        k.active = Some(10);
    }
    keys[0].ds = DsState::Seen { at: 20 };
    keys[2].active = None;
    let sets = key_sets(&p, &keys, 100);
    assert_eq!(sets.dnskey, [1, 2, 3]);
    assert_eq!(sets.sign_keys, [1]);
    assert_eq!(sets.sign_zone, [2]);
    assert_eq!(sets.cds, Cds::Keys(vec![1]));
    // Asked before the recorded times (the clock set back): what was taken stays.
    assert_eq!(key_sets(&p, &keys, 5), sets, "a clock set back undoes no step");
    keys[0].observe_ds(false, 200);
    assert_eq!(keys[0].ds, DsState::Seen { at: 20 }, "a seen DS is not unseen by a query");
}

/// The clock set back after keys were made and rolled (by an hour, a day, a month,
/// years, to before the keys existed): the keys the zone is signed with stay the same,
/// nothing is undone or generated, and nothing panics; the policy waits for its clock.
#[test]
fn a_clock_set_back_changes_nothing() {
    let mut sim = Sim::new(policy());
    sim.run(START + 100 * DAY);
    let ahead = sim.now;
    let sets = key_sets(&sim.policy, &sim.keys, ahead);
    assert!(sets.is_signed());
    for back in [3600, DAY, 30 * DAY, 3 * 365 * DAY, ahead] {
        let now = ahead - back;
        assert_eq!(key_sets(&sim.policy, &sim.keys, now), sets, "{back} s back");
        let mut keys = sim.keys.clone();
        let outcome = advance(&sim.policy, &mut keys, now, |_, _| Err("no key made")).unwrap();
        assert!(outcome.actions.is_empty(), "{back} s back: {:?}", outcome.actions);
        assert_eq!(keys, sim.keys);
        assert!(outcome.next.is_none_or(|next| next > now));
    }
}

/// Adds a key of `role` to `sim`, published and signing from now (a key imported from
/// BIND with its timings in the past); its id.
fn import(sim: &mut Sim, role: KeyRole) -> u32 {
    let (id, now, algorithm) = (sim.next_id, sim.now, sim.policy.algorithm);
    sim.next_id += 1;
    sim.meta.insert(id, (algorithm, role));
    let mut key = KeyInfo::new(id, id as u16, algorithm, role, now);
    (key.published, key.active) = (Some(now), Some(now));
    sim.keys.push(key);
    id
}

/// Two keys of one role signing: an imported KSK (or CSK) beside the zone's own, whose
/// DS the parent holds, and an imported ZSK beside the zone's own. The imported keys
/// sign on; the imported KSK's DS is asked for, and once it is seen and out of every
/// cache's way (IpubP), the own KSK retires and leaves by the double-DS steps (RFC 7583
/// §3.3.2), its CDS withdrawn after; the own ZSK retires once the imported one is in
/// every cache (§3.2.1). The zone validates throughout.
#[test]
fn a_second_signing_key_of_a_role_is_retired() {
    for scheme in [Scheme::KskZsk, Scheme::Csk] {
        let mut sim = Sim::new(Policy { scheme, ..policy() });
        sim.run(START + 20 * DAY);
        let role = if scheme == Scheme::Csk { KeyRole::Csk } else { KeyRole::Ksk };
        let active = |sim: &Sim, role| {
            let ids = sim.keys.iter().filter(|k| k.role == role && k.is_active(sim.now));
            ids.map(|k| k.id).collect::<Vec<u32>>()
        };
        let [own] = active(&sim, role)[..] else { panic!("{:?}", sim.keys) };
        assert!(sim.parent.contains(&own), "{scheme:?}: the own key's DS is at the parent");
        let own_zsk = active(&sim, KeyRole::Zsk).first().copied();
        let t = sim.now;
        let new = import(&mut sim, role);
        let new_zsk = own_zsk.map(|_| import(&mut sim, KeyRole::Zsk));
        sim.run(t + 60 * DAY);
        sim.check_validation();
        let p = &sim.policy;
        let submitted = sim.when(Action::SubmitDs(new)).unwrap();
        assert_eq!(submitted, t + p.initial_interval(), "{scheme:?}");
        let retired = sim.when(Action::Retire(own)).unwrap();
        assert_eq!(retired, submitted + sim.lag + p.parent_interval(), "{scheme:?}");
        let removed = sim.when(Action::Remove(own)).unwrap();
        let withdrawn = sim.when(Action::WithdrawDs(own)).unwrap();
        assert_eq!(withdrawn, retired + p.dnskey_interval(), "{scheme:?}");
        match scheme {
            Scheme::KskZsk => assert_eq!(removed, retired, "the DNSKEYs swapped"),
            Scheme::Csk => assert_eq!(
                removed,
                (retired + p.retire_interval()).max(withdrawn + sim.lag + p.parent_interval())
            ),
        }
        assert!(sim.when(Action::Delete(own)).is_some(), "{scheme:?}: forgotten");
        assert_eq!(sim.parent, BTreeSet::from([new]), "{scheme:?}: the DS is the new key's");
        assert_eq!(active(&sim, role), [new], "{scheme:?}");
        if let (Some(own_zsk), Some(new_zsk)) = (own_zsk, new_zsk) {
            let ready = sim.when(Action::Ready(new_zsk)).unwrap();
            assert_eq!(ready, t + p.publication_interval());
            assert_eq!(sim.when(Action::Retire(own_zsk)), Some(ready));
            assert_eq!(sim.when(Action::Remove(own_zsk)), Some(ready + p.retire_interval()));
        }
    }
}
