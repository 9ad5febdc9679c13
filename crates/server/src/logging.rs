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
use std::sync::Arc;

use arc_swap::ArcSwap;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, Layer, Registry};

use crate::config::{LogConfig, LogFormat};
use crate::error::{Error, Result};

/// Changes the level of the installed logger, and reopens its file.
#[derive(Debug, Clone)]
pub struct LogHandle {
    level: reload::Handle<LevelFilter, Registry>,
    file: Option<Arc<LogFile>>,
}

impl LogHandle {
    /// Sets the level (on reload).
    pub fn set_level(&self, level: LevelFilter) {
        let _ = self.level.modify(|current| *current = level);
    }

    /// Reopens the log file at its path (SIGUSR1, `ternctl log-reopen`): the path it now
    /// writes to, or `None` when it logs to no file. On an error it keeps the file it had.
    pub fn reopen(&self) -> Result<Option<&Path>> {
        let Some(file) = &self.file else { return Ok(None) };
        file.reopen()?;
        Ok(Some(&file.path))
    }
}

/// Installs the process-wide logger described by `config`; `daemon` without a log file
/// logs to syslog.
pub fn init(config: &LogConfig, daemon: bool) -> Result<LogHandle> {
    let syslog = daemon && config.file.is_none();
    let format = match config.format {
        LogFormat::Human if config.file.is_none() && !syslog && stderr_is_journal() => {
            LogFormat::Journal
        }
        format => format,
    };
    let file = config.file.as_deref().map(LogFile::open).transpose()?.map(Arc::new);
    let (writer, ansi) = match &file {
        Some(file) => (BoxMakeWriter::new(ToFile(Arc::clone(file))), false),
        None if syslog => (BoxMakeWriter::new(Syslog::open()?), false),
        None => (BoxMakeWriter::new(std::io::stderr), std::io::stderr().is_terminal()),
    };
    let (filter, level) = reload::Layer::new(config.level);
    tracing_subscriber::registry()
        .with(filter)
        .with(lines(format, syslog, writer, ansi))
        .try_init()
        .map_err(|e| Error::Config(format!("cannot install the logger: {e}")))?;
    Ok(LogHandle { level, file })
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
        (LogFormat::Json, _) => lines.with_writer(writer).json().flatten_event(true).boxed(),
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

    #[test]
    fn a_reopened_log_file_takes_the_lines_after_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ternd.log");
        let file = Arc::new(LogFile::open(&path).unwrap());
        let handle = LogHandle {
            level: reload::Layer::new(LevelFilter::INFO).1,
            file: Some(Arc::clone(&file)),
        };
        let subscriber = Registry::default().with(lines(
            LogFormat::Human,
            false,
            BoxMakeWriter::new(ToFile(Arc::clone(&file))),
            false,
        ));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("before");
            std::fs::rename(&path, dir.path().join("ternd.log.1")).unwrap();
            tracing::info!("moved away");
            assert_eq!(handle.reopen().unwrap(), Some(path.as_path()));
            tracing::info!("after");
        });
        let old = std::fs::read_to_string(dir.path().join("ternd.log.1")).unwrap();
        let new = std::fs::read_to_string(&path).unwrap();
        assert!(old.contains("before") && old.contains("moved away") && !old.contains("after"));
        assert!(new.contains("after") && !new.contains("before"), "{new}");
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
