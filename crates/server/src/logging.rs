//! Log output through `tracing`: human-readable lines or JSON objects, to standard error
//! or a file — or, for a daemon without a log file, to syslog (which journald reads), so
//! its lines are never lost — with a level that a reload can change; and
//! [`LoadProgress`], the zone load progress lines (records, elapsed time, rate).
//!
//! Nothing on the data plane logs; these lines come from the control plane.

use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::level_filters::LevelFilter;
use tracing::{error, info};
use tracing_subscriber::fmt::writer::BoxMakeWriter;
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
    let lines =
        tracing_subscriber::fmt::layer().with_writer(writer).with_ansi(ansi).with_target(false);
    let lines = match (config.format, syslog) {
        // Syslog stamps the time itself.
        (LogFormat::Human, true) => lines.without_time().boxed(),
        (LogFormat::Human, false) => lines.boxed(),
        (LogFormat::Json, _) => lines.json().flatten_event(true).boxed(),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(lines)
        .try_init()
        .map_err(|e| Error::Config(format!("cannot install the logger: {e}")))?;
    Ok(LogHandle(handle))
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

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Syslog {
    type Writer = SyslogLine;

    fn make_writer(&'a self) -> SyslogLine {
        SyslogLine { priority: libc::LOG_INFO, line: Vec::new() }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> SyslogLine {
        let priority = match *meta.level() {
            tracing::Level::ERROR => libc::LOG_ERR,
            tracing::Level::WARN => libc::LOG_WARNING,
            tracing::Level::INFO => libc::LOG_INFO,
            _ => libc::LOG_DEBUG,
        };
        SyslogLine { priority, line: Vec::new() }
    }
}

/// One event's line, sent to syslog when complete.
struct SyslogLine {
    priority: libc::c_int,
    line: Vec<u8>,
}

impl std::io::Write for SyslogLine {
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
        info!(zone = %zone, "loading zone");
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
