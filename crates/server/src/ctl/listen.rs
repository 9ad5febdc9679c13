//! The server's end of the control socket (see [`crate::ctl`]).
//!
//! The socket is bound before privileges are dropped and handed to the server's user
//! (and `group`), so a socket under `/run` works for a server started as root. A socket
//! file left by a server that died is replaced; one a running server answers on is not
//! (the start fails: two servers must not share one socket), nor is anything at the
//! path that is not a socket (the start fails, naming it; the file is kept). Each connection is one
//! request: the peer's credentials are checked first (root, the server's user, members
//! of `group`), the request line is read within [`READ_TIMEOUT`], and the reply written.

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_ctl::proto::{Reply, Request, ServerStatus, TxnStep, ZoneResult, MAX_REQUEST};
use tern_wire::Name;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tracing::{error, info, warn};

use super::MainRequest;
use crate::config::ControlConfig;
use crate::error::{Error, Result};
use crate::privileges::{self, Ids};
use crate::stats::Stats;
use tern_control::commands::ZoneCommand;
use tern_control::keystore::bind::BindFiles;
use tern_control::Zones;

/// How long a client has to send its request.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound control socket, not yet served.
#[derive(Debug)]
pub struct Bound {
    listener: std::os::unix::net::UnixListener,
    path: PathBuf,
    access: Access,
}

/// Who may use the socket besides root.
#[derive(Debug, Clone, Copy)]
struct Access {
    uid: libc::uid_t,
    group: Option<libc::gid_t>,
}

/// What the requests read and whom they ask.
#[derive(Debug)]
pub struct Context {
    /// The zones' writers.
    pub zones: Zones,
    /// The main thread (configuration changes).
    pub main: std::sync::mpsc::Sender<MainRequest>,
    /// The data plane's counters.
    pub stats: Arc<Stats>,
    /// When the server started.
    pub started: Instant,
    /// The configuration file.
    pub config: Option<PathBuf>,
    /// Whether the AF_XDP data plane is attached.
    pub xdp: bool,
    /// Where backups are kept (`[server] backup-dir`).
    pub backup_dir: PathBuf,
}

/// The socket being served; the file is removed when this is dropped.
#[derive(Debug)]
pub struct Serving {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Binds `[control] socket` (see the module comment) for a server that runs as `ids`
/// (`None`: as it is); `None` when no socket is configured.
pub fn bind(config: &ControlConfig, ids: Option<Ids>) -> Result<Option<Bound>> {
    let Some(path) = config.socket.clone() else { return Ok(None) };
    let file_error = |source| Error::File { path: path.clone(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(file_error)?;
    }
    remove_stale(&path)?;
    let listener = std::os::unix::net::UnixListener::bind(&path).map_err(file_error)?;
    listener.set_nonblocking(true).map_err(file_error)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(config.mode))
        .map_err(file_error)?;
    let group = config.group.as_deref().map(privileges::lookup_group).transpose()?;
    // SAFETY: geteuid/getegid cannot fail.
    let me = unsafe { Ids { uid: libc::geteuid(), gid: libc::getegid() } };
    let owner = ids.unwrap_or(me);
    chown(&path, owner.uid, group.unwrap_or(owner.gid))?;
    Ok(Some(Bound { listener, path, access: Access { uid: owner.uid, group } }))
}

/// Removes a socket file no server answers on; fails when one does, and when the path
/// names anything but a socket (a regular file, a directory, a symbolic link…), which
/// is left as it is: a mistyped `[control] socket` must not delete an operator's file.
fn remove_stale(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if let Some(kind) = not_a_socket(&meta.file_type()) {
        return Err(Error::Config(format!(
            "{}: `[control] socket` names a {kind}, not a socket: it is left as it is \
             (remove it, or set another `[control] socket`)",
            path.display()
        )));
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(Error::Config(format!(
            "{}: another server answers on this control socket (stop it, or set another `[control] socket`)",
            path.display()
        )));
    }
    std::fs::remove_file(path).map_err(|source| Error::File { path: path.to_owned(), source })
}

/// What a file of type `kind` is, unless it is a socket.
fn not_a_socket(kind: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    match kind {
        k if k.is_socket() => None,
        k if k.is_file() => Some("regular file"),
        k if k.is_dir() => Some("directory"),
        k if k.is_symlink() => Some("symbolic link"),
        k if k.is_fifo() => Some("named pipe"),
        k if k.is_block_device() || k.is_char_device() => Some("device"),
        _ => Some("file"),
    }
}

fn chown(path: &Path, uid: libc::uid_t, gid: libc::gid_t) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let cpath = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::Config(format!("{}: bad socket path", path.display())))?;
    // SAFETY: a valid NUL-terminated path; plain syscall.
    let rc = unsafe { libc::chown(cpath.as_ptr(), uid, gid) };
    match rc {
        0 => Ok(()),
        _ => Err(Error::File { path: path.to_owned(), source: std::io::Error::last_os_error() }),
    }
}

impl Bound {
    /// Starts serving on `runtime`.
    pub fn serve(self, runtime: &tokio::runtime::Handle, context: Arc<Context>) -> Result<Serving> {
        let Bound { listener, path, access } = self;
        let _entered = runtime.enter();
        let listener = UnixListener::from_std(listener)
            .map_err(|source| Error::File { path: path.clone(), source })?;
        info!(socket = %path.display(), "control socket ready");
        let task = runtime.spawn(accept(listener, access, context));
        Ok(Serving { path, task })
    }
}

async fn accept(listener: UnixListener, access: Access, context: Arc<Context>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(serve_one(stream, access, Arc::clone(&context)));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                error!("control socket: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// One connection: credentials, request, reply.
async fn serve_one(stream: UnixStream, access: Access, context: Arc<Context>) {
    let peer = stream.peer_cred().ok();
    let allowed = peer.is_some_and(|p| access.allows(p.uid(), p.gid()));
    let (read, mut write) = stream.into_split();
    let mut stopping = false;
    let reply = if allowed {
        match tokio::time::timeout(READ_TIMEOUT, read_request(read)).await {
            // Answered before the stop begins: the runtime ends with it.
            Ok(Ok(Request::Stop)) => {
                stopping = true;
                Reply::done("stopping")
            }
            Ok(Ok(request)) => handle(request, &context).await,
            Ok(Err(why)) => Reply::error(why),
            Err(_) => Reply::error("no request within 10 seconds"),
        }
    } else {
        let uid = peer.map_or_else(|| "unknown".to_owned(), |p| p.uid().to_string());
        warn!(uid, "control socket: refused a user that may not control the server");
        Reply::error("this user may not control the server")
    };
    let mut line = serde_json::to_vec(&reply).unwrap_or_default();
    line.push(b'\n');
    let _ = write.write_all(&line).await;
    let _ = write.shutdown().await;
    if stopping {
        let (reply, _) = oneshot::channel();
        let _ = context.main.send(MainRequest::Stop { reply });
        crate::signals::wake();
    }
}

impl Access {
    fn allows(&self, uid: libc::uid_t, gid: libc::gid_t) -> bool {
        uid == 0
            || uid == self.uid
            || self.group.is_some_and(|g| gid == g || privileges::in_group(uid, g))
    }
}

/// Reads one request line, at most [`MAX_REQUEST`] bytes.
async fn read_request(read: tokio::net::unix::OwnedReadHalf) -> Result<Request, String> {
    let mut line = String::new();
    let mut limited = BufReader::new(read.take(MAX_REQUEST as u64 + 1));
    limited.read_line(&mut line).await.map_err(|e| format!("cannot read the request: {e}"))?;
    if line.len() > MAX_REQUEST {
        return Err(format!("the request is longer than {MAX_REQUEST} bytes"));
    }
    serde_json::from_str(&line).map_err(|e| format!("not a request: {e}"))
}

/// Carries out one request.
pub async fn handle(request: Request, context: &Context) -> Reply {
    match request {
        Request::Status => Reply::Status(status(context)),
        Request::Stop => Reply::error("stop is answered before it is carried out"),
        Request::Reload => ask_main(context, |reply| MainRequest::Reload { reply }).await,
        Request::LogReopen => ask_main(context, |reply| MainRequest::LogReopen { reply }).await,
        Request::ZonePurge { zones } => {
            ask_main(context, |reply| MainRequest::ZonePurge { zones, reply }).await
        }
        Request::ZoneAdd { tables } => {
            ask_main(context, |reply| MainRequest::ZoneAdd { tables, reply }).await
        }
        Request::ZoneRemove { zones } => {
            ask_main(context, |reply| MainRequest::ZoneRemove { zones, reply }).await
        }
        Request::ZoneList => zone_statuses(context, &[]),
        Request::ZoneStatus { zones } => zone_statuses(context, &zones),
        Request::Zone { op, zones } => {
            let command = ZoneCommand::Op(op);
            per_zone(context, &zones, command).await
        }
        Request::ZoneBackup { zones, dir } => match backup_dir(context, dir.as_deref()) {
            Ok(dir) => per_zone(context, &zones, ZoneCommand::Backup(dir)).await,
            Err(why) => Reply::error(why.to_string()),
        },
        Request::ZoneRestore { zones, dir } => match backup_dir(context, Some(&dir)) {
            Ok(dir) => per_zone(context, &zones, ZoneCommand::Restore(dir)).await,
            Err(why) => Reply::error(why.to_string()),
        },
        Request::ZoneRead { zone, owner, rtype } => read(context, &zone, owner, rtype).await,
        Request::Txn { zone, step } => txn(context, &zone, step).await,
        Request::ZoneKeyImport { zone, file, private, key, csk } => {
            let files = BindFiles { private_name: file.into(), private, key, csk };
            one_zone(context, &zone, ZoneCommand::KeyImport(Box::new(files)), false).await
        }
        Request::ZoneKeyExport { zone, key } => {
            one_zone(context, &zone, ZoneCommand::KeyExport(key), true).await
        }
    }
}

/// Runs `command` on one zone: its text (`as_text`) or a sentence.
async fn one_zone(context: &Context, zone: &str, command: ZoneCommand, as_text: bool) -> Reply {
    let zone = match parse_zone(zone) {
        Ok(zone) => zone,
        Err(why) => return Reply::error(why),
    };
    match context.zones.command(&zone, command).await {
        Ok(text) if as_text => Reply::Text { text },
        Ok(message) => Reply::done(message),
        Err(why) => Reply::error(why.to_string()),
    }
}

fn status(context: &Context) -> ServerStatus {
    let stats = context.stats.snapshot();
    ServerStatus {
        version: format!("ternd {}", crate::version::VERSION),
        pid: std::process::id(),
        uptime: context.started.elapsed().as_secs(),
        config: context.config.as_ref().map(|p| p.display().to_string()),
        zones: context.zones.names().len(),
        udp_queries: stats.udp_received,
        udp_answers: stats.udp_sent,
        tcp_connections: stats.tcp_accepted,
        tcp_queries: stats.tcp_queries,
        xdp: context.xdp,
        xdp_queries: stats.xdp_received,
        xdp_answers: stats.xdp_sent,
    }
}

/// The backup directory a request names ([`super::backup::resolve`]).
fn backup_dir(context: &Context, given: Option<&str>) -> crate::error::Result<PathBuf> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let now = now.map_or(0, |d| d.as_secs());
    super::backup::resolve(&context.backup_dir, given, now)
}

/// Hands a request to the main thread and waits for its reply.
async fn ask_main(
    context: &Context,
    request: impl FnOnce(oneshot::Sender<Reply>) -> MainRequest,
) -> Reply {
    let (reply, answer) = oneshot::channel();
    let sent = context.main.send(request(reply));
    crate::signals::wake();
    if sent.is_err() {
        return Reply::error("the server is stopping");
    }
    answer.await.unwrap_or_else(|_| Reply::error("the server is stopping"))
}

/// `names` made absolute; all served zones when empty.
fn zone_names(context: &Context, names: &[String]) -> Result<Vec<Name>, String> {
    if names.is_empty() {
        return Ok(context.zones.names());
    }
    names.iter().map(|n| parse_zone(n)).collect()
}

/// A zone name as a user writes it (the final dot optional).
pub fn parse_zone(text: &str) -> Result<Name, String> {
    let absolute = if text.ends_with('.') { text.to_owned() } else { format!("{text}.") };
    absolute.parse().map_err(|e| format!("{text}: not a domain name: {e}"))
}

fn zone_statuses(context: &Context, names: &[String]) -> Reply {
    let names = match zone_names(context, names) {
        Ok(names) => names,
        Err(why) => return Reply::error(why),
    };
    let mut zones = Vec::with_capacity(names.len());
    for name in names {
        match context.zones.status(&name) {
            Some(status) => zones.push(status),
            None => return Reply::error(format!("{name} is not served here")),
        }
    }
    Reply::Zones { zones }
}

/// Runs `command` on each zone named (all at once), each zone's outcome reported.
async fn per_zone(context: &Context, names: &[String], command: ZoneCommand) -> Reply {
    let names = match zone_names(context, names) {
        Ok(names) => names,
        Err(why) => return Reply::error(why),
    };
    let mut tasks = tokio::task::JoinSet::new();
    for (index, name) in names.into_iter().enumerate() {
        let (zones, command) = (context.zones.clone(), command.clone());
        tasks.spawn(async move {
            let outcome = zones.command(&name, command).await.map_err(|e| e.to_string());
            (index, ZoneResult { zone: name.to_string(), outcome })
        });
    }
    let mut results = Vec::new();
    while let Some(Ok(done)) = tasks.join_next().await {
        results.push(done);
    }
    results.sort_by_key(|(index, _)| *index);
    Reply::PerZone { results: results.into_iter().map(|(_, r)| r).collect() }
}

async fn read(
    context: &Context,
    zone: &str,
    owner: Option<String>,
    rtype: Option<String>,
) -> Reply {
    let zone = match parse_zone(zone) {
        Ok(zone) => zone,
        Err(why) => return Reply::error(why),
    };
    let owner = match owner.map(|o| tern_control::commands::owner_name(&o, &zone)).transpose() {
        Ok(owner) => owner,
        Err(why) => return Reply::error(why.to_string()),
    };
    let rtype = match rtype.map(|t| tern_control::commands::parse_type(&t)).transpose() {
        Ok(rtype) => rtype,
        Err(why) => return Reply::error(why.to_string()),
    };
    match context.zones.command(&zone, ZoneCommand::Read { owner, rtype }).await {
        Ok(text) => Reply::Text { text },
        Err(why) => Reply::error(why.to_string()),
    }
}

async fn txn(context: &Context, zone: &str, step: TxnStep) -> Reply {
    let zone = match parse_zone(zone) {
        Ok(zone) => zone,
        Err(why) => return Reply::error(why),
    };
    let diff = matches!(step, TxnStep::Diff);
    match context.zones.command(&zone, ZoneCommand::Txn(step)).await {
        Ok(text) if diff => Reply::Text { text },
        Ok(message) => Reply::done(message),
        Err(why) => Reply::error(why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_socket_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        assert!(remove_stale(&path).is_ok(), "nothing there");
        std::fs::write(&path, "keep\n").unwrap();
        let why = remove_stale(&path).unwrap_err().to_string();
        assert!(why.contains("ctl.sock") && why.contains("regular file"), "{why}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep\n");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).unwrap();
        assert!(remove_stale(&path).unwrap_err().to_string().contains("symbolic link"));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(remove_stale(&path).unwrap_err().to_string().contains("directory"));
        std::fs::remove_dir(&path).unwrap();
        // A socket nobody answers on goes; one answered on stays.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        remove_stale(&path).unwrap();
        assert!(std::fs::symlink_metadata(&path).is_err());
        let _live = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(remove_stale(&path).unwrap_err().to_string().contains("another server"));
    }
}
