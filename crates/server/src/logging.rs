//! Log output through `tracing`: human-readable lines, JSON objects or journal lines, to
//! standard error or a file — or, for a daemon without a log file, to syslog (which
//! journald reads), so its lines are never lost — with a level that a reload can change;
//! and [`LoadProgress`], the zone load progress lines (records, elapsed time, rate).
//!
//! Journal lines are for systemd's journal reading standard error (sd-daemon(3)): no time,
//! which the journal adds, and each line led by its syslog priority (`<3>` for an error
//! … `<7>` for debug) instead of the level's name: the journal keeps it as the entry's
//! priority. Human lines become
//! journal lines by themselves when standard error is the journal (`JOURNAL_STREAM`
//! names its device and inode), as under the packaged systemd unit.
//!
//! Nothing on the data plane logs; these lines come from the control plane.

use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::level_filters::LevelFilter;
use tracing::{debug, error, info};
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, Layer, Registry};

use crate::config::{LogConfig, LogFormat};
use crate::error::{Error, Result};

/// Changes the level of the installed logger.
#[derive(Debug, Clone)]
pub struct LogHandle(reload::Handle<LevelFilter, Registry>);

impl LogHandle {
    /// Sets the level (on reload).
    pub fn set_level(&self, level: LevelFilter) {
        let _ = self.0.modify(|current| *current = level);
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
    let (writer, ansi) = match &config.file {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| Error::File { path: path.clone(), source })?;
            (BoxMakeWriter::new(Arc::new(file)), false)
        }
        None if syslog => (BoxMakeWriter::new(Syslog::open()), false),
        None => (BoxMakeWriter::new(std::io::stderr), std::io::stderr().is_terminal()),
    };
    let (filter, handle) = reload::Layer::new(config.level);
    tracing_subscriber::registry()
        .with(filter)
        .with(lines(format, syslog, writer, ansi))
        .try_init()
        .map_err(|e| Error::Config(format!("cannot install the logger: {e}")))?;
    Ok(LogHandle(handle))
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
    fn open() -> Syslog {
        // SAFETY: the identity is a static C string; openlog keeps the pointer.
        unsafe {
            libc::openlog(c"ternd".as_ptr(), libc::LOG_PID | libc::LOG_NDELAY, libc::LOG_DAEMON)
        };
        Syslog
    }
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

/// Progress lines for loading one zone: a line at the start, one every
/// [`LoadProgress::EVERY`] while loading (checked every [`LoadProgress::CHECK_RECORDS`]
/// records, so calling [`update`](LoadProgress::update) per record is cheap), and a final
/// line with records, elapsed time and rate.
#[derive(Debug)]
pub struct LoadProgress {
    zone: String,
    started: Instant,
    next_line: Instant,
    next_check: u64,
}

impl LoadProgress {
    /// Time between progress lines.
    pub const EVERY: Duration = Duration::from_secs(5);
    /// Records between looks at the clock.
    pub const CHECK_RECORDS: u64 = 65536;

    /// Starts timing the load of `zone` and logs that it began.
    pub fn start(zone: &dyn Display) -> LoadProgress {
        let zone = zone.to_string();
        debug!(zone = %zone, "loading zone");
        let started = Instant::now();
        LoadProgress {
            zone,
            started,
            next_line: started + Self::EVERY,
            next_check: Self::CHECK_RECORDS,
        }
    }

    /// Reports that `records` records are read so far.
    pub fn update(&mut self, records: u64) {
        if records < self.next_check {
            return;
        }
        self.next_check = records + Self::CHECK_RECORDS;
        let now = Instant::now();
        if now >= self.next_line {
            self.next_line = now + Self::EVERY;
            let elapsed = now - self.started;
            info!(zone = %self.zone, records, elapsed_ms = millis(elapsed), rate = rate(records, elapsed), "loading zone");
        }
    }

    /// Logs the end of a successful load, with the zone's serial; returns the time it
    /// took.
    pub fn finish(self, records: u64, serial: u32) -> Duration {
        let elapsed = self.started.elapsed();
        info!(zone = %self.zone, serial, records, elapsed_ms = millis(elapsed), rate = rate(records, elapsed), "zone loaded");
        elapsed
    }

    /// Logs a failed load.
    pub fn fail(self, why: &dyn Display) {
        let elapsed = self.started.elapsed();
        error!(zone = %self.zone, elapsed_ms = millis(elapsed), error = %why, "zone not loaded");
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// Records per second (0 for no elapsed time).
fn rate(records: u64, elapsed: Duration) -> u64 {
    let micros = elapsed.as_micros();
    if micros == 0 {
        return 0;
    }
    u64::try_from(u128::from(records) * 1_000_000 / micros).unwrap_or(u64::MAX)
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

    #[test]
    fn rates() {
        assert_eq!(rate(1000, Duration::from_millis(500)), 2000);
        assert_eq!(rate(5, Duration::ZERO), 0);
        assert_eq!(rate(u64::MAX, Duration::from_micros(1)), u64::MAX);
    }

    #[test]
    fn progress_checks_the_clock_rarely() {
        let mut progress = LoadProgress::start(&"example.com.");
        progress.update(10);
        assert_eq!(progress.next_check, LoadProgress::CHECK_RECORDS);
        progress.update(LoadProgress::CHECK_RECORDS);
        assert_eq!(progress.next_check, 2 * LoadProgress::CHECK_RECORDS);
        assert!(progress.finish(70_000, 1) < Duration::from_secs(5));
    }
}
