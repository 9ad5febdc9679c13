//! Log output through `tracing`: human-readable lines, JSON objects or journal lines, to
//! standard error or a file — or, for a daemon without a log file, to syslog (which
//! journald reads), so its lines are never lost — with a level that a reload can change.
//!
//! Journal lines are for systemd's journal reading standard error (sd-daemon(3)): no time,
//! which the journal adds, and each line led by its syslog priority (`<3>` for an error
//! … `<7>` for debug) instead of the level's name: the journal keeps it as the entry's
//! priority. Human lines become
//! journal lines by themselves when standard error is the journal (`JOURNAL_STREAM`
//! names its device and inode), as under the packaged systemd unit.
//!
//! A reload applies `[log]` whole ([`LogHandle::apply`]): the level, and the format and
//! destination (a file, syslog or standard error), swapped in one step behind the level
//! filter — the lines layer is held by a `tracing_subscriber::reload` layer, as the
//! level is.
//!
//! A log file is reopened on SIGUSR1 or `ternctl log-reopen` (after logrotate has moved
//! it away): lines go on to the file then at the configured path. A daemon without a log
//! file whose syslog socket (`/dev/log`) cannot be reached does not start: its lines
//! would be lost without a word.
//!
//! Nothing on the data plane logs; these lines come from the control plane.

use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use tracing::info;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Layered, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, Layer, Registry};

use crate::config::{LogConfig, LogFormat};
use crate::error::{Error, Result};

/// The layer that writes the lines, as the logger holds it (behind the level filter).
type Lines = Box<dyn Layer<Filtered> + Send + Sync>;
/// The registry behind the level filter: what [`Lines`] is a layer of.
type Filtered = Layered<reload::Layer<LevelFilter, Registry>, Registry>;
/// The whole logger: the lines behind the level filter.
type Logger = Layered<reload::Layer<Lines, Filtered>, Filtered>;

/// Changes the level, the format and the destination of the installed logger, and
/// reopens its file.
#[derive(Clone)]
pub struct LogHandle {
    level: reload::Handle<LevelFilter, Registry>,
    lines: reload::Handle<Lines, Filtered>,
    output: Arc<Mutex<Output>>,
    /// `--daemon`: without a file, lines go to syslog.
    daemon: bool,
}

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHandle").field("output", &self.output).finish_non_exhaustive()
    }
}

/// The format and the file lines are written with now, as configured.
#[derive(Debug)]
struct Output {
    format: LogFormat,
    file: Option<Arc<LogFile>>,
}

impl Output {
    /// Whether `config` asks for this format and this file.
    fn is(&self, config: &LogConfig) -> bool {
        self.format == config.format && self.file.as_ref().map(|f| &f.path) == config.file.as_ref()
    }
}

impl LogHandle {
    /// Sets the level (on reload). Unchanged, nothing is done: a change rebuilds every
    /// call site's interest, which each zone-add would otherwise pay for.
    pub fn set_level(&self, level: LevelFilter) {
        if self.level.with_current(|current| *current == level).unwrap_or(false) {
            return;
        }
        let _ = self.level.modify(|current| *current = level);
    }

    /// Reopens the log file at its path (SIGUSR1, `ternctl log-reopen`): the path it now
    /// writes to, or `None` when it logs to no file. On an error it keeps the file it had.
    pub fn reopen(&self) -> Result<Option<PathBuf>> {
        let Some(file) = self.output().file.clone() else { return Ok(None) };
        file.reopen()?;
        Ok(Some(file.path.clone()))
    }

    /// Applies a reloaded `[log]` format and file: the line after this call is written
    /// in the new format to the new destination (a line at the old one says where they
    /// went). The same file is kept open, not reopened. On an error (the new file
    /// cannot be opened, syslog cannot be reached) lines go on as before, in the format
    /// they had. The level is [`Self::set_level`]'s.
    pub fn apply(&self, config: &LogConfig) -> Result<()> {
        let mut output = self.output();
        if output.is(config) {
            return Ok(());
        }
        let file = match (&output.file, &config.file) {
            (Some(open), Some(path)) if open.path == *path => Some(Arc::clone(open)),
            (_, path) => path.as_deref().map(LogFile::open).transpose()?.map(Arc::new),
        };
        let lines = layer(config.format, file.as_ref(), self.daemon)?;
        let to = destination(file.as_deref(), self.daemon);
        let format = config.format.name();
        info!("[log] changed: the lines after this one go to {to}, as {format}");
        let from = destination(output.file.as_deref(), self.daemon);
        self.lines
            .reload(lines)
            .map_err(|e| Error::Config(format!("the logger cannot be changed: {e}")))?;
        *output = Output { format: config.format, file };
        info!("[log] changed by a reload: lines come here, as {format} (before: {from})");
        Ok(())
    }

    fn output(&self) -> std::sync::MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where lines go, in words: the file, syslog or standard error.
fn destination(file: Option<&LogFile>, daemon: bool) -> String {
    match file {
        Some(file) => file.path.display().to_string(),
        None if daemon => "syslog".into(),
        None => "standard error".into(),
    }
}

/// Installs the process-wide logger described by `config`; `daemon` without a log file
/// logs to syslog.
pub fn init(config: &LogConfig, daemon: bool) -> Result<LogHandle> {
    let (subscriber, handle) = logger(config, daemon)?;
    subscriber.try_init().map_err(|e| Error::Config(format!("cannot install the logger: {e}")))?;
    Ok(handle)
}

/// The logger `config` describes, not installed, and its handle.
fn logger(config: &LogConfig, daemon: bool) -> Result<(Logger, LogHandle)> {
    let file = config.file.as_deref().map(LogFile::open).transpose()?.map(Arc::new);
    let (lines, lines_handle) = reload::Layer::new(layer(config.format, file.as_ref(), daemon)?);
    let (filter, level) = reload::Layer::new(config.level);
    let output = Arc::new(Mutex::new(Output { format: config.format, file }));
    let handle = LogHandle { level, lines: lines_handle, output, daemon };
    Ok((tracing_subscriber::registry().with(filter).with(lines), handle))
}

/// The layer writing lines in `format` to `file`, else to syslog for a `daemon`, else
/// to standard error (as journal lines when it is the journal and `format` is human).
fn layer(format: LogFormat, file: Option<&Arc<LogFile>>, daemon: bool) -> Result<Lines> {
    let syslog = daemon && file.is_none();
    let format = match format {
        LogFormat::Human if file.is_none() && !syslog && stderr_is_journal() => LogFormat::Journal,
        format => format,
    };
    let (writer, ansi) = match file {
        Some(file) => (BoxMakeWriter::new(ToFile(Arc::clone(file))), false),
        None if syslog => (BoxMakeWriter::new(Syslog::open()?), false),
        None => (BoxMakeWriter::new(std::io::stderr), std::io::stderr().is_terminal()),
    };
    Ok(lines(format, syslog, writer, ansi))
}

/// The log file: reopened at its path on request, each line written whole to the file
/// open at the time.
#[derive(Debug)]
struct LogFile {
    path: PathBuf,
    current: ArcSwap<File>,
}

impl LogFile {
    fn open(path: &Path) -> Result<LogFile> {
        Ok(LogFile { path: path.to_path_buf(), current: ArcSwap::from_pointee(append(path)?) })
    }

    fn reopen(&self) -> Result<()> {
        self.current.store(Arc::new(append(&self.path)?));
        Ok(())
    }
}

/// `path` opened for appending, created when missing.
fn append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| Error::File { path: path.to_path_buf(), source })
}

/// The writer of the log file's lines.
struct ToFile(Arc<LogFile>);

impl<'a> MakeWriter<'a> for ToFile {
    type Writer = FileLine;

    fn make_writer(&'a self) -> FileLine {
        FileLine(self.0.current.load_full())
    }
}

/// One event's writes, to the file open when it began.
struct FileLine(Arc<File>);

impl Write for FileLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        (&*self.0).write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&*self.0).flush()
    }
}

/// The layer that writes events in `format` to `writer` (syslog when `syslog`).
fn lines<S>(
    format: LogFormat,
    syslog: bool,
    writer: BoxMakeWriter,
    ansi: bool,
) -> Box<dyn Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let lines = tracing_subscriber::fmt::layer().with_ansi(ansi).with_target(false);
    match (format, syslog) {
        // Syslog stamps the time and takes the priority itself.
        (LogFormat::Human | LogFormat::Journal, true) => {
            lines.with_writer(writer).without_time().boxed()
        }
        (LogFormat::Journal, false) => {
            let lines = lines.with_writer(Journal(writer)).with_ansi(false).with_level(false);
            lines.without_time().boxed()
        }
        (LogFormat::Human, false) => lines.with_writer(writer).boxed(),
        // No span fields: a span opened before a reload changed the format would lack
        // the JSON ones (the server opens no spans).
        (LogFormat::Json, _) => {
            let json = lines.with_writer(writer).json().flatten_event(true);
            json.with_current_span(false).with_span_list(false).boxed()
        }
    }
}

/// Whether standard error is the stream systemd connected to its journal: the device and
/// inode `JOURNAL_STREAM` names (systemd.exec(5)).
fn stderr_is_journal() -> bool {
    let Some(stream) = std::env::var_os("JOURNAL_STREAM") else { return false };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else { return false };
    let Ok(meta) = std::fs::File::from(fd).metadata() else { return false };
    stream.to_str().is_some_and(|stream| names_stream(stream, meta.dev(), meta.ino()))
}

/// Whether `value` (`DEVICE:INODE`, decimal) is `dev` and `ino`.
fn names_stream(value: &str, dev: u64, ino: u64) -> bool {
    value.split_once(':').is_some_and(|(d, i)| d.parse() == Ok(dev) && i.parse() == Ok(ino))
}

/// The syslog priority of a level.
fn priority(level: tracing::Level) -> libc::c_int {
    match level {
        tracing::Level::ERROR => libc::LOG_ERR,
        tracing::Level::WARN => libc::LOG_WARNING,
        tracing::Level::INFO => libc::LOG_INFO,
        _ => libc::LOG_DEBUG,
    }
}

/// Journal lines to another writer: each event buffered, then written at once with its
/// priority before each of its lines.
struct Journal(BoxMakeWriter);

impl<'a> MakeWriter<'a> for Journal {
    type Writer = JournalEvent<'a>;

    fn make_writer(&'a self) -> JournalEvent<'a> {
        JournalEvent { priority: libc::LOG_INFO, text: Vec::new(), out: self.0.make_writer() }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> JournalEvent<'a> {
        let out = self.0.make_writer_for(meta);
        JournalEvent { priority: priority(*meta.level()), text: Vec::new(), out }
    }
}

/// One event's text, written as journal lines when complete.
struct JournalEvent<'a> {
    priority: libc::c_int,
    text: Vec<u8>,
    out: Box<dyn Write + 'a>,
}

impl Write for JournalEvent<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for JournalEvent<'_> {
    fn drop(&mut self) {
        let _ = self.out.write_all(&journal_lines(self.priority, &self.text));
    }
}

/// `text` with `<priority>` before each line, every line ended by a newline.
fn journal_lines(priority: libc::c_int, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 4);
    for line in text.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
        out.extend_from_slice(format!("<{priority}>").as_bytes());
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// Log lines to syslog, facility daemon, priority from the event's level.
struct Syslog;

impl Syslog {
    /// Opens the connection to syslog; an error when its socket cannot be reached, as
    /// syslog(3) would drop every line without a word.
    fn open() -> Result<Syslog> {
        reachable(Path::new(SYSLOG_SOCKET))?;
        // SAFETY: the identity is a static C string; openlog keeps the pointer.
        unsafe {
            libc::openlog(c"ternd".as_ptr(), libc::LOG_PID | libc::LOG_NDELAY, libc::LOG_DAEMON)
        };
        Ok(Syslog)
    }
}

/// The socket syslog(3) sends to (glibc's `_PATH_LOG`).
const SYSLOG_SOCKET: &str = "/dev/log";

/// Whether a datagram can be sent to the syslog socket at `path`.
fn reachable(path: &Path) -> Result<()> {
    let socket = std::os::unix::net::UnixDatagram::unbound()
        .and_then(|socket| socket.connect(path).map(|()| socket));
    socket.map(drop).map_err(|e| {
        Error::Config(format!(
            "--daemon logs to syslog when no log file is set, but {} cannot be reached \
             ({e}): no syslog daemon runs here; set [log] file (or --log-file FILE), or \
             run without --daemon (lines go to standard error)",
            path.display()
        ))
    })
}

impl<'a> MakeWriter<'a> for Syslog {
    type Writer = SyslogLine;

    fn make_writer(&'a self) -> SyslogLine {
        SyslogLine { priority: libc::LOG_INFO, line: Vec::new() }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> SyslogLine {
        SyslogLine { priority: priority(*meta.level()), line: Vec::new() }
    }
}

/// One event's line, sent to syslog when complete.
struct SyslogLine {
    priority: libc::c_int,
    line: Vec<u8>,
}

impl Write for SyslogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for SyslogLine {
    fn drop(&mut self) {
        let text: Vec<u8> = self.line.iter().copied().filter(|&b| b != 0 && b != b'\n').collect();
        if let Ok(text) = std::ffi::CString::new(text) {
            // SAFETY: a constant "%s" format with one valid C string argument.
            unsafe {
                libc::syslog(libc::LOG_DAEMON | self.priority, c"%s".as_ptr(), text.as_ptr())
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lines_carry_the_priority_and_no_time() {
        assert_eq!(journal_lines(3, b"a\nb\n"), b"<3>a\n<3>b\n");
        assert_eq!(journal_lines(6, b"one"), b"<6>one\n");
        assert!(names_stream("8:12345", 8, 12345));
        assert!(!names_stream("8:12345", 8, 1) && !names_stream("x", 8, 12345));

        let out = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        let writer = BoxMakeWriter::new(move || Sink(Arc::clone(&sink)));
        let subscriber = Registry::default().with(lines(LogFormat::Journal, false, writer, true));
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(zone = "example.com.", "zone not loaded");
            tracing::info!("two\nlines");
        });
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "<4>zone not loaded zone=\"example.com.\"\n<6>two\n<6>lines\n");
    }

    /// `[log]` with `format`, to `file`.
    fn log_config(format: LogFormat, file: &Path) -> LogConfig {
        LogConfig { level: LevelFilter::INFO, format, file: Some(file.to_path_buf()) }
    }

    #[test]
    fn a_reopened_log_file_takes_the_lines_after_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ternd.log");
        let (subscriber, handle) = logger(&log_config(LogFormat::Human, &path), false).unwrap();
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("before");
            std::fs::rename(&path, dir.path().join("ternd.log.1")).unwrap();
            tracing::info!("moved away");
            assert_eq!(handle.reopen().unwrap(), Some(path.clone()));
            tracing::info!("after");
        });
        let old = std::fs::read_to_string(dir.path().join("ternd.log.1")).unwrap();
        let new = std::fs::read_to_string(&path).unwrap();
        assert!(old.contains("before") && old.contains("moved away") && !old.contains("after"));
        assert!(new.contains("after") && !new.contains("before"), "{new}");
    }

    #[test]
    fn a_reload_changes_the_format_and_the_file_or_keeps_both() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("old.log"), dir.path().join("new.log"));
        let (subscriber, handle) = logger(&log_config(LogFormat::Human, &old), false).unwrap();
        let unopenable = dir.path().join("missing/new.log");
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("one");
            let why = handle.apply(&log_config(LogFormat::Json, &unopenable)).unwrap_err();
            assert!(why.to_string().contains("missing/new.log"), "{why}");
            tracing::info!("two");
            handle.apply(&log_config(LogFormat::Json, &new)).unwrap();
            tracing::info!(zone = "example.com.", "three");
            handle.apply(&log_config(LogFormat::Json, &new)).unwrap();
            assert_eq!(handle.reopen().unwrap(), Some(new.clone()), "reopens the new file");
        });
        let old = std::fs::read_to_string(&old).unwrap();
        assert!(old.contains(" INFO one\n") && old.contains(" INFO two\n"), "{old}");
        assert!(old.lines().last().unwrap().contains(&format!("go to {}, as json", new.display())));
        let new = std::fs::read_to_string(&new).unwrap();
        let lines: Vec<serde_json::Value> =
            new.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(lines.len(), 2, "one line says where they came from, then the next: {new}");
        assert!(lines[0]["message"].as_str().unwrap().contains("before: "), "{new}");
        assert_eq!(
            (&lines[1]["message"], &lines[1]["zone"]),
            (&"three".into(), &"example.com.".into())
        );
    }

    #[test]
    fn syslog_without_its_socket_is_an_error_that_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let why = reachable(&dir.path().join("log")).unwrap_err().to_string();
        assert!(why.contains("set [log] file") && why.contains("no syslog daemon"), "{why}");
        let listening = std::os::unix::net::UnixDatagram::bind(dir.path().join("log")).unwrap();
        reachable(&dir.path().join("log")).unwrap();
        drop(listening);
    }

    /// A writer into a shared buffer.
    struct Sink(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
