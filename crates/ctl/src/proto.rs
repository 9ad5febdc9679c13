//! The control protocol: what `ternctl` asks and what `ternd` answers, shared by both.
//!
//! One exchange per connection: the client writes one [`Request`] as a line of JSON, the
//! server writes one [`Reply`] as a line of JSON and closes. Requests are bounded
//! ([`MAX_REQUEST`]); replies are as long as what they carry (a `zone-read` of a big
//! zone is big).

use serde::{Deserialize, Serialize};

/// Where `ternctl` looks when neither `--socket` nor `--config` says (the path the
/// packaged configuration and the systemd unit's `RuntimeDirectory=tern` give).
pub const DEFAULT_SOCKET: &str = "/run/tern/ternd.sock";

/// The longest request line the server reads: room for a `zone-add` of 100,000 zones
/// with a path each.
pub const MAX_REQUEST: usize = 64 * 1024 * 1024;

/// What the client asks (`command` names it, in `ternctl`'s spelling).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// The server's version, uptime and counters.
    Status,
    /// Stop the server (as SIGTERM does).
    Stop,
    /// Re-read the configuration and apply it (as SIGHUP does); answered once the
    /// zones it loads are loaded.
    Reload,
    /// Reopen the log file (as SIGUSR1), after logrotate has moved it.
    LogReopen,
    /// The served zones, one line each.
    ZoneList,
    /// Each zone's state in detail (all zones when none is named).
    ZoneStatus {
        /// Zone names.
        #[serde(default)]
        zones: Vec<String>,
    },
    /// An operation on zones (all zones when none is named).
    Zone {
        /// What to do.
        op: ZoneOp,
        /// Zone names.
        #[serde(default)]
        zones: Vec<String>,
    },
    /// The zone's records in zone-file form, optionally one owner and type.
    ZoneRead {
        /// The zone.
        zone: String,
        /// An owner name (relative to the zone unless it ends in a dot; `@` the apex).
        #[serde(default)]
        owner: Option<String>,
        /// A type mnemonic.
        #[serde(default)]
        rtype: Option<String>,
    },
    /// A step of a zone's transaction.
    Txn {
        /// The zone.
        zone: String,
        /// The step.
        step: TxnStep,
    },
    /// Adds zones at run time (kept across restarts), all or none.
    ZoneAdd {
        /// Each zone's table, as in the configuration file (`name = ...` included).
        tables: Vec<String>,
    },
    /// Removes zones added at run time, all or none.
    ZoneRemove {
        /// The zones.
        zones: Vec<String>,
    },
    /// Removes what storage keeps of zones no longer served (journal, kept copy,
    /// timers), all or none.
    ZonePurge {
        /// The zones.
        zones: Vec<String>,
    },
    /// Copies each zone's served data and journal into a directory (all zones when none
    /// is named); an earlier backup there is never overwritten.
    ZoneBackup {
        /// Zone names.
        #[serde(default)]
        zones: Vec<String>,
        /// The directory, in the server's `backup-dir` (relative names are taken there);
        /// none: a new one named by the time.
        #[serde(default)]
        dir: Option<String>,
    },
    /// Makes each zone's data in a backup directory its served version again (all zones
    /// when none is named), as a change: journaled, then published, then NOTIFY.
    ZoneRestore {
        /// Zone names.
        #[serde(default)]
        zones: Vec<String>,
        /// The directory a `zone-backup` wrote, in the server's `backup-dir`.
        dir: String,
    },
    /// Imports a BIND key (`K<zone>+<alg>+<tag>.private` and its `.key`, their text
    /// sent as read by the client) into a zone's key store; the zone is signed with it
    /// as its timings and the key policy say, at once.
    ZoneKeyImport {
        /// The zone.
        zone: String,
        /// The `.private` file's name, for messages (the server opens no file).
        file: String,
        /// The `.private` file's text.
        private: String,
        /// The `.key` file's text.
        key: String,
        /// A KSK (flags 257) is imported as a CSK, signing the whole zone.
        #[serde(default)]
        csk: bool,
    },
    /// A zone's DNSKEY and DS (SHA-256) records as zone-file text, for the parent: of
    /// one key, or of every KSK and CSK whose DNSKEY is published.
    ZoneKeyExport {
        /// The zone.
        zone: String,
        /// The key's id (as `zone-keys` lists it).
        #[serde(default)]
        key: Option<u32>,
    },
}

/// Operations [`Request::Zone`] applies to each zone named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneOp {
    /// A primary re-reads its zone file (merging an edit with its updates); a secondary
    /// refreshes.
    Reload,
    /// A secondary asks its primaries for a newer serial now.
    Refresh,
    /// A secondary transfers the whole zone now (AXFR), whatever the serials.
    Retransfer,
    /// NOTIFY the zone's secondaries now.
    Notify,
    /// Writes the zone file now (dynamic updates, transfers) and compacts the journal.
    Flush,
    /// Holds updates (refused), refreshes and reloads until thawed, after writing the
    /// zone file, so an operator can edit it.
    Freeze,
    /// Ends a freeze: a primary re-reads its zone file, a secondary refreshes if due.
    Thaw,
    /// A zone signed here: its DNSSEC keys, their state and timings.
    Keys,
    /// A zone signed here: takes the key policy's steps due, and makes every signature
    /// again now.
    Sign,
    /// A zone signed here: the DS the key policy waits for has appeared at (or gone from)
    /// the parent, as the operator checked.
    KskSubmitted,
}

impl ZoneOp {
    /// `ternctl`'s name for it.
    pub fn command(self) -> &'static str {
        match self {
            ZoneOp::Reload => "zone-reload",
            ZoneOp::Refresh => "zone-refresh",
            ZoneOp::Retransfer => "zone-retransfer",
            ZoneOp::Notify => "zone-notify",
            ZoneOp::Flush => "zone-flush",
            ZoneOp::Freeze => "zone-freeze",
            ZoneOp::Thaw => "zone-thaw",
            ZoneOp::Keys => "zone-keys",
            ZoneOp::Sign => "zone-sign",
            ZoneOp::KskSubmitted => "zone-ksk-submitted",
        }
    }
}

/// A transaction's steps: begin, any number of sets and unsets, diff, then commit or
/// abort. Owner names are relative to the zone unless they end in a dot (`@`: the apex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TxnStep {
    /// Opens the zone's transaction (one at a time per zone).
    Begin,
    /// Adds a record.
    Set {
        /// Owner.
        owner: String,
        /// TTL (default: the TTL of the RRset it joins, else the SOA's minimum).
        #[serde(default)]
        ttl: Option<u32>,
        /// Type mnemonic.
        rtype: String,
        /// RDATA in presentation form.
        rdata: String,
    },
    /// Removes a record, an RRset (no RDATA) or every RRset of a name (no type).
    Unset {
        /// Owner.
        owner: String,
        /// Type mnemonic.
        #[serde(default)]
        rtype: Option<String>,
        /// RDATA in presentation form.
        #[serde(default)]
        rdata: Option<String>,
    },
    /// What committing now would change.
    Diff,
    /// Applies the transaction through the zone's journal.
    Commit,
    /// Drops the transaction.
    Abort,
}

/// The server's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Reply {
    /// The request failed as a whole.
    Error {
        /// Why.
        error: String,
    },
    /// Done; what to tell the user.
    Done {
        /// A sentence.
        message: String,
    },
    /// [`Request::Status`].
    Status(ServerStatus),
    /// [`Request::ZoneList`], [`Request::ZoneStatus`].
    Zones {
        /// One per zone.
        zones: Vec<ZoneStatus>,
    },
    /// [`Request::Zone`]: each zone's outcome.
    PerZone {
        /// One per zone.
        results: Vec<ZoneResult>,
    },
    /// Zone-file text ([`Request::ZoneRead`], a transaction's diff,
    /// [`Request::ZoneKeyExport`]).
    Text {
        /// The lines.
        text: String,
    },
}

/// The server's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// `ternd`'s version line.
    pub version: String,
    /// Its process ID.
    pub pid: u32,
    /// Seconds since it started.
    pub uptime: u64,
    /// The configuration file.
    pub config: Option<String>,
    /// Zones configured.
    pub zones: usize,
    /// UDP datagrams received.
    pub udp_queries: u64,
    /// UDP answers sent.
    pub udp_answers: u64,
    /// TCP connections accepted.
    pub tcp_connections: u64,
    /// Queries read over TCP.
    pub tcp_queries: u64,
    /// Whether the AF_XDP data plane is attached (`[xdp]`).
    #[serde(default)]
    pub xdp: bool,
    /// Queries received through AF_XDP.
    #[serde(default)]
    pub xdp_queries: u64,
    /// Answers sent through AF_XDP.
    #[serde(default)]
    pub xdp_answers: u64,
}

/// One zone's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneStatus {
    /// The zone's name.
    pub zone: String,
    /// `primary` or `secondary`.
    pub role: String,
    /// The served serial (`None`: nothing served).
    pub serial: Option<u32>,
    /// Records served.
    pub records: u64,
    /// When the served version was published (seconds since the epoch).
    pub loaded_at: Option<u64>,
    /// A secondary's last successful refresh.
    pub last_refresh: Option<u64>,
    /// A secondary's next refresh.
    pub next_refresh: Option<u64>,
    /// When a secondary expires unless refreshed.
    pub expires_at: Option<u64>,
    /// The zone expired (answered SERVFAIL).
    pub expired: bool,
    /// The journal's length in bytes.
    pub journal_bytes: Option<u64>,
    /// Updates are in the journal but not yet in the zone file.
    pub unflushed: bool,
    /// Frozen by `zone-freeze`.
    pub frozen: bool,
    /// A transaction is open.
    pub transaction: bool,
    /// The last error, and when (seconds since the epoch), until something succeeds.
    pub last_error: Option<(u64, String)>,
}

/// One zone's outcome of a [`Request::Zone`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneResult {
    /// The zone.
    pub zone: String,
    /// `Ok`: what was done; `Err`: why not.
    pub outcome: Result<String, String>,
}

impl Reply {
    /// An error reply.
    pub fn error(why: impl Into<String>) -> Reply {
        Reply::Error { error: why.into() }
    }

    /// A done reply.
    pub fn done(message: impl Into<String>) -> Reply {
        Reply::Done { message: message.into() }
    }

    /// True unless the reply says something failed.
    pub fn succeeded(&self) -> bool {
        match self {
            Reply::Error { .. } => false,
            Reply::PerZone { results } => results.iter().all(|r| r.outcome.is_ok()),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire form is stable JSON that a script can write by hand.
    #[test]
    fn requests_read_as_written_by_hand() {
        let line = r#"{"command":"zone","op":"refresh","zones":["example.com"]}"#;
        let request: Request = serde_json::from_str(line).unwrap();
        assert_eq!(
            request,
            Request::Zone { op: ZoneOp::Refresh, zones: vec!["example.com".into()] }
        );
        let line = r#"{"command":"txn","zone":"a.","step":{"step":"set","owner":"www","rtype":"A","rdata":"192.0.2.1"}}"#;
        let request: Request = serde_json::from_str(line).unwrap();
        assert!(matches!(request, Request::Txn { step: TxnStep::Set { ttl: None, .. }, .. }));
        assert!(
            serde_json::from_str::<Request>(r#"{"command":"zone-read","zone":"a","x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<Request>(r#"{"command":"no-such"}"#).is_err());
        for request in [Request::Status, Request::ZoneList, Request::Reload, Request::LogReopen] {
            let text = serde_json::to_string(&request).unwrap();
            assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), request);
        }
    }

    #[test]
    fn replies_round_trip_and_say_whether_they_succeeded() {
        let reply = Reply::PerZone {
            results: vec![
                ZoneResult { zone: "a.".into(), outcome: Ok("refreshed".into()) },
                ZoneResult { zone: "b.".into(), outcome: Err("not a secondary".into()) },
            ],
        };
        let text = serde_json::to_string(&reply).unwrap();
        let back: Reply = serde_json::from_str(&text).unwrap();
        assert_eq!(back, reply);
        assert!(!back.succeeded());
        assert!(Reply::done("ok").succeeded());
        assert!(!Reply::error("no").succeeded());
    }
}
