//! A zone's DNSSEC key store: a directory per zone under the configured key directory,
//! named from the zone by [`tern_journal::files::stem`] (so a hostile zone name never
//! makes a path outside it), holding one PKCS#8 file per private key
//! ([`key_file`], mode 0600) and the keys' state ([`state_file`], replaced
//! atomically). Keys are generated here as the policy engine asks
//! ([`KeyStore::advance`]), imported from BIND ([`bind`], [`KeyStore::import_bind`])
//! and exported as DNSKEY and DS text ([`KeyStore::dnskey_record`],
//! [`KeyStore::ds_record`]).
//!
//! Crash safety: a new key's file is written and synced before the state names it; the
//! state is replaced atomically; a deleted key's file is removed only after the state
//! without it is saved. A restart at any moment therefore finds a state whose every key
//! has its file (at worst a key file the state does not name, which is left alone and
//! whose number is not reused) and resumes the rollover where the state says.
//!
//! Loading refuses, naming the file and why, a state file that is unreadable, foreign
//! or corrupt, and a key file that is missing, unreadable, not a regular file, open to
//! group or others, not a key of its algorithm, or another key than the state says.

pub mod bind;
pub mod key_file;
pub mod state_file;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use tern_sign::policy::{advance, DsState, KeyInfo, Outcome, Policy};
use tern_sign::{Algorithm, DigestType, KeyRole, SigningKey};
use tern_wire::{Dname, Name, Rtype};

use crate::error::{Error, Result};
use state_file::State;

/// The state file's name in a zone's key directory.
pub const STATE_FILE: &str = "keys.state";

/// Numbers tried past a key file the state does not name (a key made just before a
/// crash) when making a new key.
const ID_TRIES: u32 = 1000;

/// One zone's keys: their state and their private halves, loaded.
#[derive(Debug)]
pub struct KeyStore {
    zone: Name,
    dir: PathBuf,
    state: State,
    keys: BTreeMap<u32, SigningKey>,
}

impl KeyStore {
    /// Opens the key store of `zone` under `key_dir` (created, mode 0700, when
    /// missing) and loads every key (see the module docs for what is refused).
    pub fn open(key_dir: &Path, zone: &Dname) -> Result<KeyStore> {
        let dir = key_dir.join(tern_journal::files::stem(zone));
        key_file::create_dir(&dir)?;
        let state_path = dir.join(STATE_FILE);
        let state = match fs::symlink_metadata(&state_path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                State { keys: vec![], next_id: 1 }
            }
            _ => read_state(&state_path)?,
        };
        let mut keys = BTreeMap::new();
        for info in &state.keys {
            keys.insert(info.id, load_key(&dir, info)?);
        }
        Ok(KeyStore { zone: zone.to_name(), dir, state, keys })
    }

    /// The zone.
    pub fn zone(&self) -> &Name {
        &self.zone
    }

    /// The zone's key directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The keys' state (as `ternctl zone-keys` lists it).
    pub fn keys(&self) -> &[KeyInfo] {
        &self.state.keys
    }

    /// The key with id `id`, ready to sign.
    pub fn signing_key(&self, id: u32) -> Option<&SigningKey> {
        self.keys.get(&id)
    }

    /// Takes every step of `policy` due at `now` ([`tern_sign::policy::advance`]):
    /// makes the keys it asks for, saves the state, and removes the files of the keys
    /// it forgot. Returns what was done, the keys whose DS the parent is awaited for,
    /// and when to call again.
    pub fn advance(&mut self, policy: &Policy, now: u64) -> Result<Outcome> {
        let mut keys = self.state.keys.clone();
        let outcome =
            advance(policy, &mut keys, now, |role, algorithm| self.make_key(role, algorithm, now))?;
        if outcome.changed() {
            self.replace_keys(keys)?;
        }
        Ok(outcome)
    }

    /// Makes a key and writes its file (the state does not name it yet).
    fn make_key(&mut self, role: KeyRole, algorithm: Algorithm, now: u64) -> Result<KeyInfo> {
        let key = SigningKey::generate(algorithm, role)?;
        let id = self.write_key_file(&key)?;
        let info = KeyInfo::new(id, key.key_tag(), algorithm, role, now);
        self.keys.insert(id, key);
        Ok(info)
    }

    /// Writes `key`'s file under the next free number; returns the number.
    fn write_key_file(&mut self, key: &SigningKey) -> Result<u32> {
        let der = key.to_pkcs8()?;
        for _ in 0..ID_TRIES {
            let id = self.state.next_id;
            self.state.next_id =
                id.checked_add(1).ok_or_else(|| self.error("key numbers exhausted"))?;
            let path = key_file::path(&self.dir, id);
            if path.exists() || fs::symlink_metadata(&path).is_ok() {
                continue;
            }
            key_file::write_new(&path, &der)?;
            return Ok(id);
        }
        Err(self.error("no free key file name"))
    }

    fn error(&self, why: &str) -> Error {
        Error::KeyStore { file: self.dir.clone(), line: None, why: why.to_owned() }
    }

    /// Saves `keys` as the state, then removes the files of the keys no longer in it.
    fn replace_keys(&mut self, keys: Vec<KeyInfo>) -> Result<()> {
        let state = State { keys, next_id: self.state.next_id };
        let path = self.dir.join(STATE_FILE);
        let text = state_file::render(&state);
        crate::storage::replace(&path, |out| std::io::Write::write_all(out, text.as_bytes()))
            .map_err(|e| Error::KeyStore {
                file: path.clone(),
                line: None,
                why: format!("not saved: {e}"),
            })?;
        let gone: Vec<u32> = self
            .keys
            .keys()
            .filter(|id| !state.keys.iter().any(|k| k.id == **id))
            .copied()
            .collect();
        self.state = state;
        for id in gone {
            self.keys.remove(&id);
            let file = key_file::path(&self.dir, id);
            if fs::remove_file(&file).is_ok() {
                key_file::sync_dir(&file)?;
            }
        }
        Ok(())
    }

    /// Records what the parent's DS RRset showed for key `id` at `now`
    /// ([`KeyInfo::observe_ds`]; `ternctl zone-ksk-submitted` says `present`) and
    /// saves the state when it changed. False when no such key.
    pub fn observe_ds(&mut self, id: u32, present: bool, now: u64) -> Result<bool> {
        let mut keys = self.state.keys.clone();
        let Some(key) = keys.iter_mut().find(|k| k.id == id) else { return Ok(false) };
        let before = key.ds;
        key.observe_ds(present, now);
        if key.ds != before {
            self.replace_keys(keys)?;
        }
        Ok(true)
    }

    /// Imports BIND's key `private` (`K<zone>+<alg>+<tag>.private`, its `.key` beside
    /// it), as [`KeyStore::import_bind_text`] says.
    pub fn import_bind(&mut self, private: &Path, csk: bool, now: u64) -> Result<KeyInfo> {
        let public = private.with_extension("key");
        let text = |file: &Path| {
            let bytes = read_bounded(file, bind::MAX_SIZE)?;
            String::from_utf8(bytes).map_err(|_| Error::KeyStore {
                file: file.to_owned(),
                line: None,
                why: "not text (UTF-8)".into(),
            })
        };
        let files = bind::BindFiles {
            private_name: private.to_owned(),
            private: text(private)?,
            key: text(&public)?,
            csk,
        };
        self.import_bind_text(&files, now)
    }

    /// Imports a BIND key from its files' text, as a CSK when `files.csk` and its flags
    /// say KSK (257). Its timings in the past are kept (later ones are the policy's to
    /// decide: a key without them is one the policy has yet to publish and activate);
    /// its DS state is unknown (the policy lists it in CDS and asks the parent). Errors
    /// name the file and line. Saves the state.
    pub fn import_bind_text(&mut self, files: &bind::BindFiles, now: u64) -> Result<KeyInfo> {
        let (private, public) = (files.private_name.as_path(), files.key_name());
        let parsed = bind::parse_private(private, files.private.as_bytes())?;
        let (owner, dnskey) = bind::parse_key(&public, files.key.as_bytes())?;
        bind::check_owner(&public, &owner, &self.zone)?;
        let flags = dnskey.first_chunk::<2>().map(|f| u16::from_be_bytes(*f));
        let role = match flags {
            Some(256) => KeyRole::Zsk,
            Some(257) if files.csk => KeyRole::Csk,
            Some(257) => KeyRole::Ksk,
            _ => {
                return Err(Error::KeyStore {
                    file: public,
                    line: None,
                    why: "DNSKEY flags other than 256 or 257 (a revoked key?)".into(),
                })
            }
        };
        if dnskey.get(3) != Some(&parsed.algorithm.number()) {
            return Err(Error::KeyStore {
                file: public,
                line: None,
                why: "the .key's algorithm is not the .private's".into(),
            });
        }
        let der = bind::to_pkcs8(private, &parsed, dnskey.get(4..).unwrap_or_default())?;
        let key = SigningKey::from_pkcs8(parsed.algorithm, role, &der)?;
        self.add_imported(private, key, &dnskey, parsed.times, now)
    }

    /// Adds an imported `key` (refused when it is not `dnskey`'s or is in the store
    /// already): its file written, then the state naming it saved.
    fn add_imported(
        &mut self,
        private: &Path,
        key: SigningKey,
        dnskey: &[u8],
        times: bind::BindTimes,
        now: u64,
    ) -> Result<KeyInfo> {
        let refuse = |why: &str| Error::KeyStore {
            file: private.to_owned(),
            line: None,
            why: why.to_owned(),
        };
        if key.dnskey() != dnskey {
            return Err(refuse("the private key does not give the .key's DNSKEY"));
        }
        if self.keys.values().any(|k| k.dnskey() == key.dnskey()) {
            return Err(refuse("the key is in the store already"));
        }
        let id = self.write_key_file(&key)?;
        let info = imported_info(id, &key, times, now);
        self.keys.insert(id, key);
        let mut keys = self.state.keys.clone();
        if info.active.is_some() && info.retired.is_none() {
            take_over(&mut keys, &info, now);
        }
        keys.push(info.clone());
        self.replace_keys(keys)?;
        Ok(info)
    }

    /// `zone-key-export`: the DNSKEY and DS (SHA-256, RFC 4509) records, with `ttl`, of
    /// key `id`, or of every KSK and CSK whose DNSKEY is published and that is not
    /// retired — what the parent needs. An error when there is no such key.
    pub fn export(&self, id: Option<u32>, ttl: u32) -> Result<String> {
        let chosen: Vec<u32> = match id {
            Some(id) if self.keys.contains_key(&id) => vec![id],
            Some(id) => return Err(self.error(&format!("no key {id} (see `ternctl zone-keys`)"))),
            None => self
                .state
                .keys
                .iter()
                .filter(|k| k.role.signs_keys() && k.published.is_some())
                .filter(|k| k.retired.is_none() && k.removed.is_none())
                .map(|k| k.id)
                .collect(),
        };
        if chosen.is_empty() {
            return Err(self.error("no KSK or CSK is published yet"));
        }
        let mut text = String::new();
        for id in chosen {
            text.push_str(&self.dnskey_record(id, ttl).unwrap_or_default());
            text.push_str(&self.ds_record(id, ttl, DigestType::Sha256)?.unwrap_or_default());
        }
        Ok(text)
    }

    /// Key `id`'s DNSKEY record in zone-file text (`<zone> <ttl> IN DNSKEY …`).
    pub fn dnskey_record(&self, id: u32, ttl: u32) -> Option<String> {
        let key = self.keys.get(&id)?;
        let mut line = String::new();
        crate::storage::record_line(&self.zone, Rtype::DNSKEY, ttl, key.dnskey(), &mut line);
        Some(line)
    }

    /// Key `id`'s DS record in zone-file text, for the parent.
    pub fn ds_record(&self, id: u32, ttl: u32, digest: DigestType) -> Result<Option<String>> {
        let Some(key) = self.keys.get(&id) else { return Ok(None) };
        let ds = key.ds(&self.zone, digest)?;
        let mut line = String::new();
        crate::storage::record_line(&self.zone, Rtype::DS, ttl, &ds, &mut line);
        Ok(Some(line))
    }
}

/// An imported key `new` that signs takes its role over from the store's keys of the
/// same role and algorithm that sign (a zone moving from BIND, whose own keys were made
/// when its policy was attached): they retire at `now` and leave by the policy's steps
/// (RFC 7583: a ZSK's DNSKEY stays until its signatures left the caches; a KSK's DS is
/// withdrawn first). A KSK or CSK whose DS the parent was seen to have is kept signing
/// beside it — retiring it now could break the chain of trust — until the policy
/// retires it, once the imported key's DS is seen at the parent (or `ternctl
/// zone-ksk-submitted` says so) and in every cache (`tern_sign::policy::plan`).
fn take_over(keys: &mut [KeyInfo], new: &KeyInfo, now: u64) {
    for key in keys.iter_mut() {
        let same = key.role == new.role && key.algorithm == new.algorithm;
        let trusted = key.role.signs_keys() && matches!(key.ds, DsState::Seen { .. });
        if same && !trusted && key.active.is_some() && key.retired.is_none() {
            key.retired = Some(now);
        }
    }
}

/// The state of a key imported at `now` with BIND's `times`.
fn imported_info(id: u32, key: &SigningKey, times: bind::BindTimes, now: u64) -> KeyInfo {
    let past = |t: Option<u64>| t.filter(|&t| t <= now);
    let mut info = KeyInfo::new(
        id,
        key.key_tag(),
        key.algorithm(),
        key.role(),
        past(times.created).unwrap_or(now),
    );
    info.published = past(times.publish);
    info.active = past(times.activate);
    info.retired = past(times.inactive).filter(|_| info.active.is_some());
    info.removed = past(times.delete).filter(|_| info.published.is_some());
    info
}

/// Reads the state file (refused: unreadable, not a regular file, too large, foreign
/// or corrupt).
fn read_state(path: &Path) -> Result<State> {
    let bytes = read_bounded(path, state_file::MAX_SIZE as usize)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| Error::KeyStore {
        file: path.to_owned(),
        line: None,
        why: "not text: not a Tern key state file".into(),
    })?;
    state_file::parse(path, text)
}

/// Reads a regular file of at most `max` bytes.
fn read_bounded(path: &Path, max: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let error = |why: String| Error::KeyStore { file: path.to_owned(), line: None, why };
    let meta = fs::symlink_metadata(path).map_err(|e| error(format!("missing: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(error("not a regular file".into()));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| error(format!("unreadable: {e}")))?;
    if bytes.len() > max {
        return Err(error(format!("larger than {max} bytes")));
    }
    Ok(bytes)
}

/// Loads key `info`'s file and checks it is the key the state names.
fn load_key(dir: &Path, info: &KeyInfo) -> Result<SigningKey> {
    let path = key_file::path(dir, info.id);
    let der = key_file::read(&path)?;
    let key = SigningKey::from_pkcs8(info.algorithm, info.role, &der).map_err(|e| {
        Error::KeyStore { file: path.clone(), line: None, why: format!("corrupt: {e}") }
    })?;
    if key.key_tag() != info.tag {
        return Err(Error::KeyStore {
            file: path,
            line: None,
            why: format!(
                "foreign: it holds key tag {}, the state says {}",
                key.key_tag(),
                info.tag
            ),
        });
    }
    Ok(key)
}

#[cfg(test)]
mod tests;
