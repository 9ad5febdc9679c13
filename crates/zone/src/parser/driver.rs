//! The parse driver: runs the lexer over a file entry by entry (a chunk at a time for
//! files), keeps the state scoped to each file, turns failures into located errors
//! (stopping at the first, or collecting them), and hands finished records to the sink.

use std::io::Read;
use std::path::PathBuf;

use tern_wire::text::{Entry, Lexer, Token};
use tern_wire::{Dname, NameBuf, NameBuilder, Rtype};

use super::chunks::{Chunks, Limits, Stall, CHUNK};
use super::options::Options;
use super::record::{Location, Record};
use super::report::{Report, Warning};
use crate::error::{Error, Position};

/// The consumer of parsed records.
pub(super) type Sink<'s> = dyn FnMut(&Record<'_>) -> Result<(), Error> + 's;

/// Why an entry could not be used.
#[derive(Debug)]
pub(super) enum Failure {
    /// A text error, located by line and column in the current file.
    Text(tern_wire::Error),
    /// An error that already knows its position (from an `$INCLUDE` or the sink).
    Located(Error),
    /// Parsing must stop; the error that caused it has been recorded.
    Stop,
    /// An error after which parsing cannot go on, even when collecting errors (a limit).
    Fatal(Error),
}

impl From<tern_wire::Error> for Failure {
    fn from(error: tern_wire::Error) -> Failure {
        Failure::Text(error)
    }
}

/// Where to go on reading a file after a chunk.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume {
    /// Offset in the chunk where the next one starts.
    offset: usize,
    /// Line number there.
    line: u32,
    /// The entry there failed in the previous chunk inside parentheses opened at this
    /// line: skip the rest of it.
    abandoned: Option<u32>,
}

/// Parsing stops: the first error when not collecting, or too many errors.
#[derive(Debug)]
pub(super) struct Stop;

/// State scoped to one file (RFC 1035 §5.1): an `$INCLUDE`d file starts from a copy of
/// its includer's state and its changes end with it.
#[derive(Debug, Clone)]
pub(super) struct Scope<'t> {
    /// The origin appended to relative names (`$ORIGIN`).
    pub origin: NameBuf,
    /// The owner of the previous record, used by lines that start with a blank.
    pub owner: Option<NameBuf>,
    /// The text `owner` was parsed from, under the current origin: the same text again
    /// (the usual case, as records of a name are written together) is not parsed again.
    pub owner_text: Option<&'t [u8]>,
    /// The `$TTL` in force (RFC 2308 §4).
    pub default_ttl: Option<u32>,
    /// The last TTL stated explicitly (RFC 1035 §5.1), used when there is no `$TTL`.
    pub last_ttl: Option<u32>,
}

impl<'t> Scope<'t> {
    /// The state at the top of a zone file.
    pub fn new(origin: &Dname) -> Scope<'t> {
        Scope {
            origin: NameBuf::from_dname(origin),
            owner: None,
            owner_text: None,
            default_ttl: None,
            last_ttl: None,
        }
    }

    /// The state at the top of a file included with `origin`: no previous owner, the
    /// TTLs of the includer.
    pub fn for_include<'i>(&self, origin: NameBuf) -> Scope<'i> {
        Scope {
            origin,
            default_ttl: self.default_ttl,
            last_ttl: self.last_ttl,
            ..Scope::new(Dname::ROOT)
        }
    }

    /// The same state, forgetting the owner's text (which lives in a buffer about to be
    /// reused).
    pub fn detach<'x>(&self) -> Scope<'x> {
        Scope {
            origin: self.origin.clone(),
            owner: self.owner.clone(),
            owner_text: None,
            default_ttl: self.default_ttl,
            last_ttl: self.last_ttl,
        }
    }

    /// Changes the origin (which changes what relative owner text means).
    pub fn set_origin(&mut self, origin: NameBuf) {
        self.origin = origin;
        self.owner_text = None;
    }
}

/// One file being read.
#[derive(Debug)]
pub(super) struct Frame {
    /// The name used in messages and as the base of relative `$INCLUDE` paths.
    pub path: PathBuf,
    /// Which file it is, to refuse recursive `$INCLUDE`s (`None` for in-memory text).
    pub id: Option<super::file::FileId>,
    /// Line of the `$INCLUDE` this file is executing, if any (for the include chain).
    pub include_line: u32,
    /// The file's number in this parse ([`Location::file_number`]).
    pub number: u32,
}

/// A parse in progress, over the zone file and its `$INCLUDE`s.
pub(super) struct Parser<'p, 's> {
    pub options: &'p Options,
    sink: &'p mut Sink<'s>,
    /// RDATA of the record being read, reused for every record.
    pub rdata: Vec<u8>,
    /// Where owner names are parsed, reused for every one (never cleared).
    pub names: NameBuilder,
    /// The files being read, outermost first.
    pub frames: Vec<Frame>,
    /// Records made by `$GENERATE` so far.
    pub generated: u64,
    /// Files opened by `$INCLUDE` so far (the number of the last one).
    pub files_opened: u32,
    report: Report,
    errors: Vec<Error>,
    /// Line of the entry being read, for errors that carry no position.
    entry_line: u32,
    /// True once the "no TTL anywhere" warning was given.
    warned_ttl_fallback: bool,
    /// Size of the buffer files are first read through.
    chunk: usize,
}

impl<'p, 's> Parser<'p, 's> {
    /// A parser that will read `top` first.
    pub fn new(options: &'p Options, sink: &'p mut Sink<'s>, top: Frame) -> Self {
        Parser {
            options,
            sink,
            rdata: Vec::with_capacity(512),
            names: NameBuilder::new(),
            frames: vec![top],
            generated: 0,
            files_opened: 0,
            report: Report::default(),
            errors: Vec::new(),
            entry_line: 1,
            warned_ttl_fallback: false,
            chunk: CHUNK,
        }
    }

    /// Reads the top file's text and returns the report, or the error(s).
    pub fn run(mut self, text: &[u8], origin: &Dname) -> Result<Report, Error> {
        // Errors are in `self.errors` whether or not parsing stopped early.
        let _ = self.read_text(text, &mut Scope::new(origin));
        self.finish()
    }

    /// Reads the top file from `source` (`size` bytes long, if known), through a buffer
    /// of at most `chunk` bytes to start with, and returns the report, or the error(s).
    pub fn run_file(
        mut self,
        source: impl Read,
        size: Option<u64>,
        origin: &Dname,
        chunk: usize,
    ) -> Result<Report, Error> {
        self.chunk = chunk;
        let _ = self.read_file(source, size, &Scope::new(origin));
        self.finish()
    }

    fn finish(mut self) -> Result<Report, Error> {
        match self.errors.len() {
            0 => Ok(self.report),
            1 => Err(self.errors.remove(0)),
            _ => Err(Error::Many(self.errors)),
        }
    }

    /// Reads every entry of one file's text held in memory.
    pub fn read_text<'t>(&mut self, text: &'t [u8], scope: &mut Scope<'t>) -> Result<(), Stop> {
        self.read_chunk(Lexer::new(text), scope, None).map(|_| ())
    }

    /// Reads a file chunk by chunk, starting from `scope` (which it leaves as it was: what
    /// a file changes ends with it). A read error ends the file, as an error of its own.
    /// A file of known `size` smaller than a chunk gets a buffer of its size (a server
    /// loading 100,000 small zones does not map 256 KiB for each).
    pub fn read_file(
        &mut self,
        source: impl Read,
        size: Option<u64>,
        scope: &Scope<'_>,
    ) -> Result<(), Stop> {
        let fits = size.map_or(usize::MAX, |s| usize::try_from(s).unwrap_or(usize::MAX));
        let limits =
            Limits { max_file: self.options.max_file_size, max_line: self.options.max_line_length };
        let mut chunks = Chunks::new(source, self.chunk.min(fits.saturating_add(1)), limits);
        let mut state = scope.detach();
        let mut resume = Resume { offset: 0, line: 1, abandoned: None };
        loop {
            let (text, at_end) = match chunks.next() {
                Ok(chunk) => chunk,
                Err(stall) => return self.fail(self.stalled(stall, resume.line)),
            };
            if text.is_empty() && !at_end {
                // One line longer than the buffer.
                match chunks.grow() {
                    Ok(()) => continue,
                    Err(stall) => return self.fail(self.stalled(stall, resume.line)),
                }
            }
            let mut inner = state.detach();
            let lx = Lexer::continuing(text, resume.line, !at_end);
            resume = self.read_chunk(lx, &mut inner, resume.abandoned)?;
            if at_end {
                return Ok(());
            }
            state = inner.detach();
            if resume.offset == 0 {
                // One entry longer than the buffer.
                if let Err(stall) = chunks.grow() {
                    return self.fail(self.stalled(stall, resume.line));
                }
            }
            chunks.consume(resume.offset);
        }
    }

    /// The failure for a file that cannot be read on, at `line`: a read error ends the
    /// file; a limit ends the parse.
    fn stalled(&self, stall: Stall, line: u32) -> Failure {
        let limit = |message: String| {
            Failure::Fatal(Error::Syntax { at: Box::new(self.position(line, 1)), message })
        };
        match stall {
            Stall::Io(error) => {
                let path = self.frames.last().map(|f| f.path.clone()).unwrap_or_default();
                Failure::Located(Error::Io { path, message: format!("read failed: {error}") })
            }
            Stall::FileTooBig => limit(format!(
                "the file is longer than the limit of {} bytes (max_file_size): stopped reading",
                self.options.max_file_size
            )),
            Stall::LineTooLong => limit(format!(
                "a line longer than the limit of {} bytes (max_line_length): stopped reading",
                self.options.max_line_length
            )),
        }
    }

    /// Reads the entries of one chunk of text, first skipping the rest of an entry that
    /// failed in the previous chunk inside parentheses opened at line `abandoned`.
    /// Returns where reading stopped: the end of the text, or the start of an entry that
    /// runs past it, to be read again with the next chunk.
    fn read_chunk<'t>(
        &mut self,
        mut lx: Lexer<'t>,
        scope: &mut Scope<'t>,
        abandoned: Option<u32>,
    ) -> Result<Resume, Stop> {
        let resume = |(offset, line): (usize, u32), abandoned| Resume { offset, line, abandoned };
        if let Some(paren_line) = abandoned {
            // Go on skipping exactly where `abandon_entry` stopped at the chunk's end.
            lx.resume_inside_parens(paren_line);
            lx.abandon_entry();
            if let Some(paren_line) = lx.open_paren_at_end() {
                return Ok(resume(lx.entry_start(), Some(paren_line)));
            }
        }
        loop {
            let start = lx.entry_start();
            let said = (self.report.warnings.len(), self.report.warnings_dropped);
            let warned_ttl_fallback = self.warned_ttl_fallback;
            let outcome = match lx.next_entry() {
                Ok(None) => return Ok(resume(lx.entry_start(), None)),
                Ok(Some(entry)) => self.entry(&mut lx, entry, scope),
                Err(error) => Err(Failure::Text(error)),
            };
            if lx.incomplete() {
                // Read again with more text: forget what this attempt said.
                self.report.warnings.truncate(said.0);
                self.report.warnings_dropped = said.1;
                self.warned_ttl_fallback = warned_ttl_fallback;
                return Ok(resume(start, None));
            }
            if let Err(failure) = outcome {
                self.fail(failure)?;
                lx.abandon_entry();
                if let Some(paren_line) = lx.open_paren_at_end() {
                    // The failed entry goes on in the next chunk: skip the rest there.
                    return Ok(resume(lx.entry_start(), Some(paren_line)));
                }
            }
        }
    }

    /// One entry: a directive or a record.
    fn entry<'t>(
        &mut self,
        lx: &mut Lexer<'t>,
        entry: Entry,
        scope: &mut Scope<'t>,
    ) -> Result<(), Failure> {
        self.entry_line = entry.line;
        if entry.blank_owner {
            return self.record(lx, entry, None, scope);
        }
        let first = lx.expect("an owner name")?;
        if first.text.first() == Some(&b'$') && !first.quoted() {
            return self.directive(&first, lx, scope);
        }
        self.record(lx, entry, Some(first), scope)
    }

    /// Records a failure; `Err(Stop)` when parsing must end.
    fn fail(&mut self, failure: Failure) -> Result<(), Stop> {
        let error = match failure {
            Failure::Stop => return Err(Stop),
            Failure::Fatal(error) => {
                self.errors.push(error);
                return Err(Stop);
            }
            Failure::Located(error) => error,
            Failure::Text(error) => self.locate(error),
        };
        let at = error.position().cloned();
        self.errors.push(error);
        if !self.options.collect_errors {
            return Err(Stop);
        }
        if self.errors.len() >= self.options.max_errors.max(1) {
            let at = Box::new(at.unwrap_or_else(|| self.position(self.entry_line, 1)));
            let message = format!("too many errors ({}): stopped reading", self.errors.len());
            self.errors.push(Error::Syntax { at, message });
            return Err(Stop);
        }
        Ok(())
    }

    /// A wire-crate error placed in the current file.
    fn locate(&self, error: tern_wire::Error) -> Error {
        match error {
            tern_wire::Error::Syntax { line, column, message } => {
                Error::Syntax { at: Box::new(self.position(line, column)), message }
            }
            other => Error::Syntax {
                at: Box::new(self.position(self.entry_line, 1)),
                message: other.to_string(),
            },
        }
    }

    /// A position in the current file, with its include chain.
    pub fn position(&self, line: u32, column: u32) -> Position {
        let mut outer = self.frames.iter().rev();
        let file = outer.next().map(|f| f.path.clone()).unwrap_or_default();
        let included_from = outer.map(|f| (f.path.clone(), f.include_line)).collect();
        Position { file, line, column, included_from }
    }

    /// Notes a warning at a token (kept up to `max_errors` of them).
    pub fn warn(&mut self, token: &Token<'_>, message: String) {
        if self.report.warnings.len() >= self.options.max_errors {
            self.report.warnings_dropped += 1;
            return;
        }
        let at = self.position(token.line(), token.column());
        self.report.warnings.push(Warning { at, message });
    }

    /// Picks the TTL of a record without an explicit one: `$TTL`, else the last TTL
    /// stated (RFC 1035 §5.1), else `Options::default_ttl` with a warning.
    pub fn implicit_ttl(&mut self, scope: &Scope<'_>, at: &Token<'_>) -> u32 {
        if let Some(ttl) = scope.default_ttl.or(scope.last_ttl) {
            return ttl;
        }
        if !self.warned_ttl_fallback {
            self.warned_ttl_fallback = true;
            let ttl = self.options.default_ttl;
            self.warn(at, format!("no TTL, no $TTL and no earlier TTL: using {ttl}"));
        }
        self.options.default_ttl
    }

    /// Hands the record whose RDATA is in `self.rdata` to the sink.
    pub fn emit(
        &mut self,
        owner: &Dname,
        rtype: Rtype,
        ttl: u32,
        line: u32,
    ) -> Result<(), Failure> {
        if self.report.records >= self.options.max_records {
            let at = Box::new(self.position(line, 1));
            let limit = self.options.max_records;
            let message =
                format!("more than {limit} records, the limit (max_records): stopped reading");
            return Err(Failure::Fatal(Error::Syntax { at, message }));
        }
        let (file, file_number) = self
            .frames
            .last()
            .map_or((std::path::Path::new(""), 0), |f| (f.path.as_path(), f.number));
        let record = Record {
            owner,
            class: self.options.class,
            rtype,
            ttl,
            rdata: &self.rdata,
            location: Location { file, file_number, line },
        };
        let result = (self.sink)(&record);
        self.report.records += 1;
        result.map_err(|error| {
            let at = Box::new(self.position(line, 1));
            Failure::Located(Error::Rejected { at, error: Box::new(error) })
        })
    }
}
