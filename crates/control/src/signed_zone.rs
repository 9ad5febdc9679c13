//! A writer's part in online signing ([`crate::signer`]): its signer opened when its
//! plan names a policy (and dropped when it no longer does), the kit each commit signs
//! with, and the signing timer — the policy's steps due (keys made, published, retired)
//! and the signatures refreshed, each slice committed as a change the signer made.

use std::sync::Arc;

use tern_sign::{refresh, RefreshCursor, RefreshOptions};
use tracing::{error, info, warn};

use crate::commit::{Change, Notify};
use crate::counters::control::control;
use crate::error::{Error, Result};
use crate::keystore::bind::BindFiles;
use crate::signer::{SignKit, Signer, Signing};
use crate::writer::Writer;

pub mod upstream;

/// Names a refresh slice visits, and signatures it makes, at most.
const SLICE_NAMES: usize = 20_000;
const SLICE_SIGNATURES: usize = 2_000;

/// Slices of one refresh pass at most (a zone of 20 million names): the pass goes on at
/// the next wake-up.
const MAX_SLICES: usize = 1_000;

impl Writer {
    /// Opens the signer the plan asks for, or drops the one it no longer asks for; the
    /// key store's errors (an unreadable key file, a corrupt state) come back, and the
    /// zone keeps what it serves.
    pub(crate) async fn open_signer(&mut self) -> Result<()> {
        let Some(plan) = self.plan.signing.clone() else {
            self.signer = None;
            return Ok(());
        };
        if self.signer.as_ref().is_some_and(|s| s.plan() == &plan) {
            return Ok(());
        }
        self.signer = None;
        let (zone, now) = (self.plan.name.clone(), self.now());
        let opened = tokio::task::spawn_blocking(move || Signer::open(plan, &zone, now)).await?;
        let signer = opened.inspect_err(|why| {
            error!(zone = %self.plan.name, "the key store cannot be used: the zone stays as it is served, and changes are refused until it can: {why}");
        })?;
        info!(zone = %self.plan.name, policy = %signer.plan().id, keys = signer.store().keys().len(), "signing with policy");
        self.signer = Some(Box::new(signer));
        Ok(())
    }

    /// How a commit signs: not at all (a zone this server does not sign), with a kit, or
    /// not, for a zone whose signer could not be opened (then only a first version the
    /// file has signed is taken).
    pub(crate) fn signing(&mut self) -> Signing {
        let (serial, now) = (self.plan.update.serial, self.now());
        let current = self.current.clone();
        match self.signer.as_mut() {
            Some(signer) if signer.unsigned() => Signing::Off,
            Some(signer) => match signer.kit(current.as_deref(), serial, now) {
                Ok(kit) => Signing::With(kit),
                Err(why) => Signing::Unavailable(why.to_string()),
            },
            None if self.plan.signing.is_some() => {
                Signing::Unavailable("the key store cannot be used (see the log)".into())
            }
            None => Signing::Off,
        }
    }

    /// The kit a refresh signs with; `None` for a zone this server does not sign.
    pub(crate) fn sign_kit(&mut self) -> Result<Option<Arc<SignKit>>> {
        match self.signing() {
            Signing::Off => Ok(None),
            Signing::With(kit) => Ok(Some(kit)),
            Signing::Unavailable(why) => Err(Error::Unsignable(why)),
        }
    }

    /// When the signer next has work: a policy step or a refresh pass — now, when the
    /// clock was set back since signatures were made that are not valid yet
    /// ([`set_back`]).
    pub(crate) fn sign_wake(&self) -> Option<u64> {
        let signer = self.signer.as_ref().filter(|_| self.current.is_some())?;
        let now = self.now();
        if set_back(signer, now) {
            return Some(now);
        }
        Some(signer.keys_due.map_or(signer.refresh_due, |k| k.min(signer.refresh_due)))
    }

    /// The signing timer: the policy's steps due, then a refresh pass over the zone.
    pub(crate) async fn sign_due(&mut self) {
        let now = self.now();
        if let Err(why) = self.advance_keys(now).await {
            error!(zone = %self.plan.name, "key policy step failed (the zone keeps its keys): {why}");
            self.last_error = Some((now, format!("key policy: {why}")));
        }
        match self.check_parent(now).await {
            Ok(0) => {}
            Ok(_) => {
                if let Err(why) = self.advance_keys(now).await {
                    error!(zone = %self.plan.name, "key policy step failed: {why}");
                }
            }
            Err(why) => warn!(zone = %self.plan.name, "the parent's DS not checked: {why}"),
        }
        if let Err(why) = self.unsign_when_done(now).await {
            error!(zone = %self.plan.name, "the zone could not be unsigned (it stays served as it was): {why}");
            self.last_error = Some((now, format!("unsigning: {why}")));
        }
        if let Err(why) = self.sign_when_denial_changed().await {
            error!(zone = %self.plan.name, "the zone could not be signed with the policy's denial (it stays served as it was): {why}");
            self.last_error = Some((now, format!("signing: {why}")));
        }
        if let Err(why) = self.sign_when_unsigned().await {
            error!(zone = %self.plan.name, "the zone could not be signed (it stays served unsigned): {why}");
            self.last_error = Some((now, format!("signing: {why}")));
        }
        let refresh = self.signer.as_ref().map_or(0, |s| s.plan().policy.signature_refresh);
        if let Err(why) = self.refresh_signatures(now.saturating_add(refresh)).await {
            error!(zone = %self.plan.name, "signature refresh failed (the last signed version stays served): {why}");
            self.last_error = Some((now, format!("signature refresh: {why}")));
        }
        if let Some(signer) = self.signer.as_mut() {
            signer.refresh_due =
                now.saturating_add(refresh_interval(signer.plan().policy.signature_refresh));
        }
        self.warn_expiry(now);
    }

    /// Says, in the log and `zone-status`, when signatures are about to expire because
    /// refreshes keep failing: from half the refresh window before the first expires.
    fn warn_expiry(&mut self, now: u64) {
        let Some(signer) = self.signer.as_ref() else { return };
        let (until, refresh) = (signer.valid_until, signer.plan().policy.signature_refresh);
        if until.is_some_and(|until| until.saturating_sub(now) < refresh / 2) {
            let left = until.unwrap_or(now).saturating_sub(now);
            let why = format!("signatures expire in {left} s and are not being refreshed");
            error!(zone = %self.plan.name, "{why}: the zone turns bogus for validating resolvers when they do");
            self.last_error = Some((now, why));
        }
    }

    /// Once signing is off and its last key gone, the records the signer made are
    /// removed in one change (journaled, notified), so that the zone is served unsigned.
    async fn unsign_when_done(&mut self, now: u64) -> Result<()> {
        let (Some(signer), Some(base)) = (self.signer.as_ref(), self.current.clone()) else {
            return Ok(());
        };
        if !signer.unsigned() {
            return Ok(());
        }
        let serial = self.plan.update.serial.next(base.serial(), now);
        let Some(change) = crate::signer::unsign(&base, serial)? else { return Ok(()) };
        let removed = change.removed.len();
        self.commit(Change::Signed(vec![change]), Notify::Yes).await?;
        info!(zone = %self.plan.name, removed, serial, "signing off: the zone is served unsigned");
        Ok(())
    }

    /// A zone served unsigned whose plan now names a policy (a reload attached it) is
    /// signed whole: with NSEC, in one change (journaled, sent by IXFR); with NSEC3, as a
    /// whole version like a denial change (the journal starts afresh; secondaries take
    /// it by AXFR). Notified either way.
    async fn sign_when_unsigned(&mut self) -> Result<()> {
        let Some(base) = self.current.clone() else { return Ok(()) };
        if base.denial() != tern_zone::Denial::Unsigned {
            return Ok(());
        }
        let Some(kit) = self.sign_kit()? else { return Ok(()) };
        if matches!(kit.options().denial, tern_sign::DenialConfig::Nsec3(_)) {
            // The zone takes NSEC3 records only into an NSEC3 zone: no change makes one.
            self.resign_whole(base, kit).await?;
            info!(zone = %self.plan.name, "signed whole with NSEC3: the zone was served unsigned");
            return Ok(());
        }
        let signed = tokio::task::spawn_blocking(move || crate::signer::sign_served(&base, &kit));
        let Some(change) = signed.await?? else { return Ok(()) };
        self.commit(Change::Signed(vec![change]), Notify::Yes).await?;
        info!(zone = %self.plan.name, "signed whole: the zone was served unsigned");
        Ok(())
    }

    /// A zone served signed with another denial than the policy's (a reload changed it
    /// from NSEC to NSEC3, its parameters, or back) is signed again whole
    /// ([`crate::signer::resign_denial`], on a blocking thread), its serial raised,
    /// committed as a whole version (the journal starts afresh; secondaries take it by
    /// AXFR) and notified: a refresh keeps only the denial it finds.
    async fn sign_when_denial_changed(&mut self) -> Result<()> {
        let Some(base) = self.current.clone() else { return Ok(()) };
        if base.denial() == tern_zone::Denial::Unsigned {
            return Ok(());
        }
        let Some(kit) = self.sign_kit()? else { return Ok(()) };
        if kit.unsigned() || tern_sign::same_denial(&base, &kit.options().denial) {
            return Ok(());
        }
        self.resign_whole(base, kit).await?;
        info!(zone = %self.plan.name, "signed again whole: the policy's denial changed");
        Ok(())
    }

    /// `base` signed whole by `kit` ([`crate::signer::resign_denial`], on a blocking
    /// thread), committed as a whole version and notified; the zone file lags it. When
    /// the file held the version replaced, it is taken to hold the new one until it is
    /// written (as after a first signing, see `Writer::install`): the two differ only by
    /// the signer's records, and the replaced version, which shares nothing with the new
    /// one, is not kept for it.
    async fn resign_whole(
        &mut self,
        base: Arc<tern_zone::ZoneContents>,
        kit: Arc<SignKit>,
    ) -> Result<()> {
        let file_held_base = self.file_base.is_none();
        let signed = tokio::task::spawn_blocking(move || crate::signer::resign_denial(&base, &kit));
        self.commit(signed.await??, Notify::Yes).await?;
        let file_base = self.current.clone().filter(|_| file_held_base);
        self.zone_file_lags(file_base);
        Ok(())
    }

    /// Takes the policy's steps due at `now` (on a blocking thread: key files are written).
    async fn advance_keys(&mut self, now: u64) -> Result<()> {
        let Some(mut signer) = self.signer.take() else { return Ok(()) };
        let waited = signer.awaiting.clone();
        let done = tokio::task::spawn_blocking(move || {
            let outcome = signer.advance(now);
            (signer, outcome)
        })
        .await?;
        let (signer, outcome) = done;
        self.signer = Some(signer);
        let outcome = outcome?;
        for action in &outcome.actions {
            info!(zone = %self.plan.name, "key policy: {action:?}");
        }
        // Said once, when the wait starts (not at every wake-up while it lasts).
        for (id, present) in outcome.awaiting.iter().filter(|w| !waited.contains(w)) {
            let want = if *present { "appear" } else { "go" };
            warn!(zone = %self.plan.name, key = id, "waiting for the key's DS to {want} at the parent (`ternctl zone-ksk-submitted` once it has)");
        }
        Ok(())
    }

    /// `zone-keys`: the keys, one line each — id, tag, algorithm, role, then the times
    /// of their steps (UTC) and the DS's state.
    pub(crate) fn list_keys(&self) -> Result<String> {
        let signer = self.signer.as_ref().ok_or(Error::NotSigned)?;
        let mut text = String::new();
        for key in signer.store().keys() {
            let mut line = format!(
                "key {} tag {} {} {:?} created {}",
                key.id,
                key.tag,
                key.algorithm.mnemonic(),
                key.role,
                time(key.created)
            );
            let steps = [
                ("published", key.published),
                ("ready", key.ready),
                ("active", key.active),
                ("retired", key.retired),
                ("removed", key.removed),
            ];
            for (step, at) in steps {
                if let Some(at) = at {
                    line.push_str(&format!(" {step} {}", time(at)));
                }
            }
            line.push_str(&format!(" ds {:?}\n", key.ds));
            text.push_str(&line);
        }
        Ok(text.trim_end().to_owned())
    }

    /// `zone-sign`: the policy's steps due, then every signature made again.
    pub(crate) async fn sign_now(&mut self) -> Result<String> {
        let now = self.now();
        let validity =
            self.signer.as_ref().ok_or(Error::NotSigned)?.plan().policy.signature_validity;
        self.advance_keys(now).await?;
        // Later than every expiration, within RFC 1982's half of the serial space.
        let made = self.refresh_signatures(now + validity + 86_400).await?;
        Ok(format!("{made} signatures made"))
    }

    /// `zone-key-import`: a BIND key added to the zone's key store (on a blocking
    /// thread: its file is written), then the policy's steps due and a refresh pass, so
    /// that the zone is signed as the key's timings and the policy say at once.
    pub(crate) async fn import_key(&mut self, files: &BindFiles) -> Result<String> {
        let now = self.now();
        let mut signer = self.signer.take().ok_or(Error::NotSigned)?;
        let files = files.clone();
        let done = tokio::task::spawn_blocking(move || {
            let imported = signer.store_mut().import_bind_text(&files, now);
            (signer, imported)
        })
        .await?;
        let (signer, imported) = done;
        self.signer = Some(signer);
        let info = imported?;
        info!(zone = %self.plan.name, key = info.id, tag = info.tag, role = ?info.role, "BIND key imported");
        self.sign_due().await;
        let signer = self.signer.as_ref().ok_or(Error::NotSigned)?;
        let now = self.now();
        let state = signer.store().keys().iter().find(|k| k.id == info.id).map(|k| {
            match (k.is_published(now), k.is_active(now)) {
                (_, true) => "it signs",
                (true, false) => "published; the policy activates it in turn",
                (false, false) => "the policy publishes and activates it in turn",
            }
        });
        let state = state.unwrap_or("the policy already retired it");
        Ok(format!(
            "imported as key {} (tag {}, {} {:?}): {state}",
            info.id,
            info.tag,
            info.algorithm.mnemonic(),
            info.role
        ))
    }

    /// `zone-key-export`: the DNSKEY and DS records of key `id`, or of every published
    /// KSK and CSK, for the parent ([`crate::keystore::KeyStore::export`]).
    pub(crate) fn export_keys(&self, id: Option<u32>) -> Result<String> {
        let signer = self.signer.as_ref().ok_or(Error::NotSigned)?;
        signer.store().export(id, signer.plan().policy.dnskey_ttl)
    }

    /// `zone-ksk-submitted`: every DS the policy waits for is recorded as seen (or gone),
    /// and the policy's steps that follow are taken.
    pub(crate) async fn ksk_submitted(&mut self) -> Result<String> {
        let now = self.now();
        let signer = self.signer.as_mut().ok_or(Error::NotSigned)?;
        let awaiting = std::mem::take(&mut signer.awaiting);
        if awaiting.is_empty() {
            return Ok("no key waits for its DS".into());
        }
        for (id, present) in &awaiting {
            signer.store_mut().observe_ds(*id, *present, now)?;
        }
        self.sign_due().await;
        Ok(format!("{} DS change(s) recorded", awaiting.len()))
    }

    /// Asks every server of the parent (the policy's `ksk-submission`) for the zone's DS;
    /// each key the policy waits for whose DS (SHA-256 or SHA-384) is at all of them —
    /// or, when it should go, at none — is recorded so. The number recorded; a server
    /// that does not answer decides nothing (asked again at the next wake-up).
    async fn check_parent(&mut self, now: u64) -> Result<usize> {
        let Some(signer) = self.signer.as_ref() else { return Ok(0) };
        if signer.awaiting.is_empty() || signer.plan().parents.is_empty() {
            return Ok(0);
        }
        let zone = self.plan.name.clone();
        let mut expected = Vec::new();
        for (id, present) in &signer.awaiting {
            let Some(key) = signer.store().signing_key(*id) else { continue };
            let digests = [tern_sign::DigestType::Sha256, tern_sign::DigestType::Sha384];
            let ds: Vec<Vec<u8>> = digests.iter().filter_map(|d| key.ds(&zone, *d).ok()).collect();
            expected.push((*id, *present, ds));
        }
        let parents = signer.plan().parents.clone();
        let network = std::sync::Arc::clone(&self.shared.network);
        let timeout = self.shared.limits.load().timeout;
        let owner = zone.clone();
        let answers = tokio::task::spawn_blocking(move || {
            let peers = parents.iter().flat_map(|r| r.addrs.iter().map(move |a| r.peer(*a)));
            peers
                .map(|peer| network.rrset(peer, &owner, tern_wire::Rtype::DS, timeout))
                .collect::<std::result::Result<Vec<_>, _>>()
        })
        .await?
        .map_err(Error::Remote)?;
        let signer = self.signer.as_mut().ok_or(Error::NotSigned)?;
        let mut recorded = 0;
        for (id, present, ds) in expected {
            let held = |set: &Vec<Vec<u8>>| set.iter().any(|rdata| ds.contains(rdata));
            if answers.iter().all(|set| held(set) == present) {
                signer.store_mut().observe_ds(id, present, now)?;
                let state = if present { "at" } else { "gone from" };
                info!(zone = %zone, key = id, "the key's DS is {state} every server of the parent");
                recorded += 1;
            }
        }
        Ok(recorded)
    }

    /// A refresh pass: slices of [`tern_sign::refresh`] until the zone's end, each one
    /// that changes something committed (its serial raised) and sent to secondaries.
    /// Signatures expiring before `until` (seconds since the epoch) are made again.
    pub(crate) async fn refresh_signatures(&mut self, until: u64) -> Result<usize> {
        let mut start = RefreshCursor::default();
        let mut made = 0;
        for _ in 0..MAX_SLICES {
            let Some(kit) = self.sign_kit()? else { return Ok(made) };
            let Some(base) = self.current.clone() else { return Ok(made) };
            if kit.unsigned() {
                return Ok(made); // no key left: `unsign_when_done` takes the records out
            }
            let slice = RefreshOptions {
                threshold: until as u32,
                now: self.now() as u32,
                serial: kit.next_serial(base.serial()),
                start,
                max_names: SLICE_NAMES,
                max_signatures: SLICE_SIGNATURES,
            };
            let refreshed = tokio::task::spawn_blocking(move || {
                refresh(&base, kit.keys(), kit.options(), &slice)
            })
            .await??;
            if refreshed.signatures > 0 || !refreshed.change.added.is_empty() {
                made += refreshed.signatures;
                let file_base = self.current.clone().filter(|_| self.file_base.is_none());
                self.commit(Change::Signed(vec![refreshed.change]), Notify::Yes).await?;
                self.zone_file_lags(file_base);
            }
            match refreshed.next {
                Some(next) => start = next,
                None => {
                    self.passed(until);
                    break;
                }
            }
        }
        if made > 0 {
            info!(zone = %self.plan.name, signatures = made, "signatures refreshed");
        }
        Ok(made)
    }
}

impl Writer {
    /// A refresh pass reached the zone's end: no signature expires before `until`, nor
    /// before what the signatures it made have at the earliest (a kit a tenth of the
    /// refresh window old, expirations spread over another tenth).
    fn passed(&mut self, until: u64) {
        let now = self.now();
        let Some(signer) = self.signer.as_mut() else { return };
        let policy = &signer.plan().policy;
        let made = now + policy.signature_validity - 2 * (policy.signature_refresh / 10);
        let until = until.min(made);
        signer.valid_until = Some(until);
        // Every signature not yet valid at now was made again by this pass.
        signer.latest_inception = crate::signer::inception(now);
        control().signatures_valid_until(&self.plan.name.to_string(), until);
    }
}

/// True when the clock was set back: a kit made since the last whole refresh pass signs
/// from after `now` (its signatures not valid yet, RFC 4035 §5.3.1), and the next
/// refresh is further away than a refresh interval (by the clock, it was set at most one
/// interval ahead; once a pass has run, it is again, so a failing pass is not retried in
/// a loop).
fn set_back(signer: &Signer, now: u64) -> bool {
    let interval = refresh_interval(signer.plan().policy.signature_refresh);
    signer.latest_inception > now && signer.refresh_due > now.saturating_add(interval)
}

/// `at` (seconds since the epoch) as `YYYYMMDDHHmmSS` UTC, as `keymgr` and BIND's key
/// files show times.
fn time(at: u64) -> String {
    tern_wire::rdata::sig_time_text(u32::try_from(at).unwrap_or(u32::MAX))
}

/// How often signatures are looked at: a tenth of the refresh window, between a second
/// and an hour (a policy of seconds, as tests run, looks every second).
fn refresh_interval(signature_refresh: u64) -> u64 {
    (signature_refresh / 10).clamp(1, 3600)
}

#[cfg(test)]
mod tests;
