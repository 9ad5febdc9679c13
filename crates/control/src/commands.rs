//! An operator's commands to one zone's writer (from the control socket and the API):
//! reload, refresh, retransfer, NOTIFY, flush, freeze and thaw, reading the records, and
//! transactions. They are events like any other, taken in order with loads, transfers
//! and updates; a transaction's commit goes through the journal like an update.
//!
//! A transaction's changeset, and the version it makes, are computed on a blocking
//! thread (`Writer::with_txn`): an edit of 100,000 records (one HTTP API PATCH) must
//! not hold one of the control plane's two threads, and with it the other zones, the
//! control socket and the API, while it is computed (issue 49).
//!
//! A frozen zone (`zone-freeze`, as BIND's `rndc freeze`) has its zone file written
//! first, then holds still while an operator edits it: updates are refused, refreshes,
//! NOTIFYs from primaries and reloads wait; expiry does not. `zone-thaw` re-reads a
//! primary's file (merging the edit) and lets a secondary refresh if due.

use std::sync::Arc;

use tern_ctl::proto::{TxnStep, ZoneOp};
use tern_engine::{Edit, UpdatePolicy};
use tern_wire::{Name, Rtype};
use tern_zone::{Changeset, ZoneContents};
use tracing::info;

use crate::commit::{Change, Notify};
use crate::error::{Error, Result};
use crate::event::LoadOutcome;
pub use crate::event::{Outcome, ZoneCommand};
use crate::plan::{Role, ZonefileSync};
use crate::storage;
use crate::writer::Writer;

/// Why `zone-flush` writes nothing with `zonefile-sync = "never"`.
const NEVER_WRITTEN: &str =
    "zonefile-sync is \"never\": the zone file is not written; the journal keeps the changes";

impl Writer {
    /// Carries out `command` (see the module comment).
    pub async fn command(&mut self, command: ZoneCommand) -> Outcome {
        match command {
            ZoneCommand::Op(op) => self.op(op).await,
            ZoneCommand::Read { owner, rtype } => self.read(owner.as_ref(), rtype),
            ZoneCommand::Txn(step) => self.txn(step).await,
            ZoneCommand::Apply(steps) => self.apply_steps(steps).await,
            ZoneCommand::Backup(dir) => self.backup(dir).await,
            ZoneCommand::Restore(dir) => self.restore(dir).await,
            ZoneCommand::KeyImport(files) => self.import_key(&files).await,
            ZoneCommand::KeyExport(id) => self.export_keys(id),
        }
    }

    /// Opens a transaction of its own for `steps` (only sets and unsets), commits it,
    /// and puts back the transaction that was open, if any. The steps are read on a
    /// blocking thread, as the change is computed (see the module comment).
    async fn apply_steps(&mut self, steps: Vec<TxnStep>) -> Outcome {
        let open = self.txn.take();
        let outcome = match self.begin() {
            Ok(_) => self.stage_all(steps).await,
            Err(why) => Err(why),
        };
        let outcome = match outcome {
            Ok(()) => self.commit_txn().await,
            Err(why) => Err(why),
        };
        self.txn = open;
        outcome
    }

    async fn stage_all(&mut self, steps: Vec<TxnStep>) -> Result<()> {
        let origin = self.plan.name.clone();
        let staged = self.with_txn(move |zone, edit| {
            steps.into_iter().try_for_each(|step| match step {
                TxnStep::Set { owner, ttl, rtype, rdata } => {
                    stage_set(edit, zone, &origin, (&owner, ttl, &rtype, &rdata))
                }
                TxnStep::Unset { owner, rtype, rdata } => {
                    stage_unset(edit, &origin, &owner, rtype.as_deref(), rdata.as_deref())
                }
                _ => Err(Error::NotAnEdit),
            })
        });
        staged.await?
    }

    async fn op(&mut self, op: ZoneOp) -> Outcome {
        if self.frozen && matches!(op, ZoneOp::Reload | ZoneOp::Refresh | ZoneOp::Retransfer) {
            return Err(Error::Frozen);
        }
        match (op, &self.plan.role) {
            (ZoneOp::Reload, Role::Primary) => self.reload_file().await,
            (ZoneOp::Reload | ZoneOp::Refresh, Role::Secondary(_)) => self.refresh_now(false).await,
            (ZoneOp::Retransfer, Role::Secondary(_)) => self.refresh_now(true).await,
            (ZoneOp::Refresh | ZoneOp::Retransfer, Role::Primary) => Err(Error::NotSecondary),
            (ZoneOp::Notify, _) => self.notify_now(),
            (ZoneOp::Flush, _) => self.flush_now().await,
            (ZoneOp::Freeze, _) => self.freeze().await,
            (ZoneOp::Thaw, _) => self.thaw().await,
            (ZoneOp::Keys, _) => self.list_keys(),
            (ZoneOp::Sign, _) => self.sign_now().await,
            (ZoneOp::KskSubmitted, _) => self.ksk_submitted().await,
        }
    }

    async fn reload_file(&mut self) -> Outcome {
        // A key store that could not be used is tried again (its files fixed).
        Box::pin(self.open_signer()).await?;
        match self.load_primary().await {
            LoadOutcome::Loaded { serial, records } => {
                Ok(format!("loaded serial {serial}, {records} records"))
            }
            LoadOutcome::Unchanged { .. } if self.is_scripted() => {
                Ok("the script did not change".into())
            }
            LoadOutcome::Unchanged { .. } => Ok("the zone file did not change".into()),
            LoadOutcome::Waiting => Ok("waiting for a transfer".into()),
            LoadOutcome::Failed(why) => Err(Error::LoadFailed(why)),
        }
    }

    /// Starts a refresh (a whole transfer when `full`) without waiting for it. The
    /// writer answers an operator's refresh once it is over instead
    /// ([`refresh_asked`](Self::refresh_asked)): this is for other callers.
    async fn refresh_now(&mut self, full: bool) -> Outcome {
        self.refresh_with(full, None);
        Ok("refresh started".into())
    }

    fn notify_now(&mut self) -> Outcome {
        if self.current.is_none() {
            return Err(Error::NothingServed);
        }
        self.notify_secondaries();
        match self.notifying.len() {
            0 => Err(Error::NoNotifyTargets),
            n => Ok(format!("NOTIFY sent to {n} targets")),
        }
    }

    /// Writes the zone file with what is served, and compacts the journal when due.
    async fn flush_now(&mut self) -> Outcome {
        match &self.plan.role {
            Role::Primary if self.file_base.is_none() => {
                Ok("the zone file already holds the served version".into())
            }
            Role::Primary if self.plan.zonefile_sync == ZonefileSync::Never => {
                Err(Error::NotWritten(NEVER_WRITTEN.into()))
            }
            Role::Primary => match self.sync_zone_file().await {
                true => {
                    self.flush_and_compact().await;
                    Ok("zone file written".into())
                }
                false => Err(Error::NotWritten(
                    self.last_error.clone().map_or_else(|| "see the log".into(), |(_, why)| why),
                )),
            },
            Role::Secondary(_) => self.store_now().await,
        }
    }

    async fn freeze(&mut self) -> Outcome {
        if self.frozen {
            return Ok("already frozen".into());
        }
        let written = self.plan.zonefile_sync != ZonefileSync::Never;
        if matches!(self.plan.role, Role::Primary) && self.file_base.is_some() && written {
            self.flush_now().await?;
        }
        self.frozen = true;
        info!(zone = %self.plan.name, "zone frozen: updates refused, refreshes and reloads held");
        Ok("frozen".into())
    }

    async fn thaw(&mut self) -> Outcome {
        if !self.frozen {
            return Ok("not frozen".into());
        }
        self.frozen = false;
        info!(zone = %self.plan.name, "zone thawed");
        match &self.plan.role {
            Role::Primary => self.reload_file().await.map(|m| format!("thawed; {m}")),
            Role::Secondary(_) => {
                if self.schedule.refresh_at.is_some_and(|at| at <= self.now()) {
                    self.refresh();
                }
                Ok("thawed".into())
            }
        }
    }

    /// The served records (of `owner` and `rtype` when given), one per line.
    fn read(&self, owner: Option<&Name>, rtype: Option<Rtype>) -> Outcome {
        let zone = self.current.as_ref().ok_or(Error::NothingServed)?;
        let mut text = String::new();
        zone.for_each_record(|name, t, ttl, data| {
            let owner_matches = owner.is_none_or(|o| o.eq_ignore_case(name));
            if owner_matches && rtype.is_none_or(|r| r == t) {
                storage::record_line(name, t, ttl, data, &mut text);
            }
        });
        Ok(text)
    }

    async fn txn(&mut self, step: TxnStep) -> Outcome {
        match step {
            TxnStep::Begin => self.begin(),
            TxnStep::Set { owner, ttl, rtype, rdata } => {
                let (zone, origin) = self.txn_zone()?;
                let edit = self.txn.as_mut().ok_or(Error::NoTransaction)?;
                stage_set(edit, &zone, &origin, (&owner, ttl, &rtype, &rdata))?;
                Ok(format!("staged ({} changes)", edit.len()))
            }
            TxnStep::Unset { owner, rtype, rdata } => {
                let (_, origin) = self.txn_zone()?;
                let edit = self.txn.as_mut().ok_or(Error::NoTransaction)?;
                stage_unset(edit, &origin, &owner, rtype.as_deref(), rdata.as_deref())?;
                Ok(format!("staged ({} changes)", edit.len()))
            }
            TxnStep::Diff => {
                let (policy, now) = (self.plan.update, self.now());
                let diff = self.with_txn(move |zone, edit| {
                    staged_change(zone, edit, &policy, now).map(|change| render_diff(&change))
                });
                diff.await?
            }
            TxnStep::Commit => self.commit_txn().await,
            TxnStep::Abort => match self.txn.take() {
                Some(_) => Ok("transaction aborted".into()),
                None => Err(Error::NoTransaction),
            },
        }
    }

    fn begin(&mut self) -> Outcome {
        if self.txn.is_some() {
            return Err(Error::TransactionOpen);
        }
        if matches!(self.plan.role, Role::Secondary(_)) {
            return Err(Error::Secondary);
        }
        if self.is_scripted() {
            return Err(Error::Scripted);
        }
        if matches!(self.plan.source, crate::plan::ZoneSource::Database(_)) {
            return Err(Error::FromDatabase);
        }
        if self.current.is_none() {
            return Err(Error::NothingServed);
        }
        self.txn = Some(Edit::default());
        Ok("transaction open".into())
    }

    /// The served version and the zone's name, while a transaction is open.
    fn txn_zone(&self) -> Result<(Arc<ZoneContents>, Name)> {
        if self.txn.is_none() {
            return Err(Error::NoTransaction);
        }
        let zone = self.current.clone().ok_or(Error::NothingServed)?;
        Ok((zone, self.plan.name.clone()))
    }

    /// `work` done with the served version and the open transaction on a blocking
    /// thread (see the module comment); the transaction stays open.
    async fn with_txn<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&ZoneContents, &mut Edit) -> T + Send + 'static,
    ) -> Result<T> {
        let (zone, _) = self.txn_zone()?;
        let mut edit = self.txn.take().ok_or(Error::NoTransaction)?;
        let done = tokio::task::spawn_blocking(move || {
            let out = work(&zone, &mut edit);
            (edit, out)
        });
        match done.await {
            Ok((edit, out)) => {
                self.txn = Some(edit);
                Ok(out)
            }
            Err(e) => Err(Error::TransactionLost(e.to_string())),
        }
    }

    /// Applies the transaction through the commit function ([`crate::commit`]):
    /// journaled, published, notified, as an update is. A change that fails leaves the
    /// transaction open.
    async fn commit_txn(&mut self) -> Outcome {
        if self.frozen {
            return Err(Error::Frozen);
        }
        let (zone, _) = self.txn_zone()?;
        let edit = self.txn.take().ok_or(Error::NoTransaction)?;
        let (policy, now, from) = (self.plan.update, self.now(), zone.serial());
        drop(zone); // the served version: not held past its replacement
        let file_base = self.current.clone().filter(|_| self.file_base.is_none());
        let build = move |base: Option<&Arc<ZoneContents>>| {
            let staged = base
                .ok_or(Error::NothingServed)
                .and_then(|base| staged_change(base, &edit, &policy, now));
            match staged {
                Ok(change) if change.is_empty() => (None, (edit, Ok(0))),
                Ok(change) => {
                    let count = change.len();
                    (Some(Change::Apply(vec![change])), (edit, Ok(count)))
                }
                Err(why) => (None, (edit, Err(why))),
            }
        };
        let (committed, (edit, staged)) = self.commit_with(build, Notify::Yes).await;
        let (count, zone) = match (staged, committed) {
            (Ok(0), Ok(None)) => {
                return Ok("nothing to change; transaction closed".into());
            }
            (Ok(count), Ok(Some(zone))) => (count, zone),
            (Err(why), _) | (Ok(_), Err(why)) => {
                self.txn = Some(edit);
                return Err(why);
            }
            (Ok(_), Ok(None)) => return Err(Error::NothingServed),
        };
        info!(zone = %self.plan.name, from, serial = zone.serial(), records = count, "transaction committed");
        self.zone_file_lags(file_base);
        self.after_change().await;
        Ok(format!("committed: serial {from} → {}, {count} records changed", zone.serial()))
    }
}

/// The changeset `edit` makes of `zone`.
fn staged_change(
    zone: &ZoneContents,
    edit: &Edit,
    policy: &UpdatePolicy,
    now: u64,
) -> Result<Changeset> {
    edit.changeset(zone, policy, now).map_err(|refusal| Error::Refused {
        rcode: refusal.rcode,
        reason: refusal.reason.to_string(),
    })
}

/// Stages adding a record (`owner`, TTL, type and RDATA as text) to `edit` of `zone`.
fn stage_set(
    edit: &mut Edit,
    zone: &ZoneContents,
    origin: &Name,
    (owner, ttl, rtype, rdata): (&str, Option<u32>, &str, &str),
) -> Result<()> {
    let owner = owner_name(owner, origin)?;
    let rtype = parse_type(rtype)?;
    let data = parse_record(rtype, rdata, origin)?;
    let ttl = ttl.unwrap_or_else(|| default_ttl(zone, &owner, rtype));
    edit.add(owner, rtype, ttl, data);
    Ok(())
}

/// Stages deleting a record, an RRset or every RRset of a name to `edit`.
fn stage_unset(
    edit: &mut Edit,
    origin: &Name,
    owner: &str,
    rtype: Option<&str>,
    rdata: Option<&str>,
) -> Result<()> {
    let owner = owner_name(owner, origin)?;
    let rtype = rtype.map(parse_type).transpose()?;
    let data = match (rtype, rdata) {
        (Some(t), Some(text)) => Some(parse_record(t, text, origin)?),
        _ => None,
    };
    match (rtype, data) {
        (Some(t), Some(data)) => edit.delete_record(owner, t, data),
        (Some(t), None) => edit.delete_rrset(owner, t),
        (None, _) => edit.delete_name(owner),
    }
    Ok(())
}

/// Record data given as text, read as one record of `rtype` in the zone `origin`.
fn parse_record(rtype: Rtype, text: &str, origin: &Name) -> Result<Vec<u8>> {
    tern_wire::rdata::parse_str(rtype, text, Some(origin)).map_err(|why| Error::Record {
        rtype,
        text: text.to_owned(),
        why,
    })
}

/// An owner relative to `origin` unless it ends in a dot; `@` is the apex. It must be
/// in the zone.
pub fn owner_name(text: &str, origin: &Name) -> Result<Name> {
    let absolute = match text {
        "@" => origin.to_string(),
        t if t.ends_with('.') => t.to_owned(),
        t if origin.to_string() == "." => format!("{t}."),
        t => format!("{t}.{origin}"),
    };
    let owner = |why: String| Error::Owner { text: text.to_owned(), why };
    let name: Name =
        absolute.parse().map_err(|e: tern_wire::Error| owner(format!("not a domain name: {e}")))?;
    if !name.ends_with(origin) {
        return Err(owner(format!("{name} is outside the zone {origin}")));
    }
    Ok(name)
}

/// A record type by its mnemonic (case does not matter).
pub fn parse_type(text: &str) -> Result<Rtype> {
    Rtype::from_mnemonic(text.as_bytes()).ok_or_else(|| Error::Type(text.to_owned()))
}

/// A new record's TTL when none is given: its RRset's, else the SOA's.
fn default_ttl(zone: &ZoneContents, owner: &Name, rtype: Rtype) -> u32 {
    let rrset_ttl = zone.find(owner).and_then(|id| zone.node(id)?.rrset(rtype).map(|r| r.ttl));
    rrset_ttl.or_else(|| zone.soa_record().map(|soa| soa.ttl)).unwrap_or(3600)
}

/// A changeset as `-` and `+` lines (the SOAs first).
fn render_diff(change: &Changeset) -> String {
    let mut text = String::new();
    let mut line = String::new();
    let mut emit = |sign: char, record: &tern_zone::RecordData| {
        line.clear();
        storage::record_line(&record.owner, record.rtype, record.ttl, &record.rdata, &mut line);
        text.push(sign);
        text.push_str(&line);
    };
    change.all_removed().for_each(|r| emit('-', r));
    change.all_added().for_each(|r| emit('+', r));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_relative_to_the_zone_unless_absolute() {
        let origin: Name = "example.com.".parse().unwrap();
        let www = owner_name("www", &origin).unwrap();
        assert_eq!(www.to_string(), "www.example.com.");
        assert_eq!(owner_name("@", &origin).unwrap(), origin);
        assert_eq!(owner_name("a.example.com.", &origin).unwrap().to_string(), "a.example.com.");
        assert!(owner_name("www.example.net.", &origin)
            .unwrap_err()
            .to_string()
            .contains("outside"));
        assert!(parse_type("NOPE").is_err());
        assert_eq!(parse_type("aaaa").unwrap(), Rtype::AAAA);
    }
}
