//! Telling a zone's origin from its file, for a caller that was not given it
//! (`ternd check-zone FILE`): the owner of the SOA when the file's first record is one,
//! its name read with the `$ORIGIN`s before it; failing that, the first `$ORIGIN`.
//!
//! The SOA is looked at first because it is at the top of the zone by definition
//! (RFC 1035 §5.2), while a file's first `$ORIGIN` need not be the zone's: BIND's dumps
//! begin `$ORIGIN .` and then name the zone on the SOA (`example.com IN SOA …`). Only the
//! directives before the first record are read (`$ORIGIN`, `$TTL`); an `$INCLUDE` or
//! `$GENERATE` there ends the search as a record would.

use std::io::Read;
use std::path::Path;

use tern_wire::text::{Entry, Lexer};
use tern_wire::{Class, Name, Rtype};

use super::chunks::{Chunks, Limits, Stall, CHUNK};
use super::file::{open_regular, Regular};
use super::options::Options;
use crate::error::{Error, Position};

/// The origin of the zone in the file at `path`: its SOA's owner if the SOA is the first
/// record, else its first `$ORIGIN`; an error saying why when neither tells.
pub fn find_origin(path: &Path, options: &Options) -> Result<Name, Error> {
    let Regular { file, size, .. } = open_regular(path, options.max_file_size)
        .map_err(|refused| Error::Io { path: path.to_path_buf(), message: refused.to_string() })?;
    let fits = usize::try_from(size).unwrap_or(usize::MAX).saturating_add(1);
    find_origin_in(file, path, options, CHUNK.min(fits))
}

/// [`find_origin`] over any reader (`source` names it in messages), read through a
/// buffer of `chunk` bytes to start with.
pub fn find_origin_in(
    reader: impl Read,
    source: &Path,
    options: &Options,
    chunk: usize,
) -> Result<Name, Error> {
    let limits = Limits { max_file: options.max_file_size, max_line: options.max_line_length };
    let mut chunks = Chunks::new(reader, chunk, limits);
    let mut scan = Scan { source, origin: None, first: None };
    let mut line = 1;
    loop {
        let (text, at_end) = chunks.next().map_err(|stall| scan.stalled(stall, line))?;
        if text.is_empty() && !at_end {
            chunks.grow().map_err(|stall| scan.stalled(stall, line))?;
            continue;
        }
        let mut lx = Lexer::continuing(text, line, !at_end);
        let (offset, next_line) = match scan.entries(&mut lx)? {
            Progress::Found(origin) => return Ok(origin),
            Progress::Resume(_, _) if at_end => return scan.fallback(0, "the file has no record"),
            Progress::Resume(offset, next_line) => (offset, next_line),
        };
        if offset == 0 {
            chunks.grow().map_err(|stall| scan.stalled(stall, line))?;
        }
        chunks.consume(offset);
        line = next_line;
    }
}

/// What the search knows so far.
struct Scan<'p> {
    source: &'p Path,
    /// The `$ORIGIN` in force.
    origin: Option<Name>,
    /// The first `$ORIGIN`.
    first: Option<Name>,
}

/// Where one chunk of text left the search.
enum Progress {
    Found(Name),
    /// The text ran out: go on at this offset and line with the next chunk.
    Resume(usize, u32),
}

impl Scan<'_> {
    /// Reads entries up to the first record.
    fn entries(&mut self, lx: &mut Lexer<'_>) -> Result<Progress, Error> {
        loop {
            let (offset, line) = lx.entry_start();
            let entry = match lx.next_entry() {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    let (offset, line) = lx.entry_start();
                    return Ok(Progress::Resume(offset, line));
                }
                Err(error) => return Err(self.locate(error)),
            };
            let outcome = self.entry(lx, entry);
            if lx.incomplete() {
                return Ok(Progress::Resume(offset, line)); // read it again with more text
            }
            if let Some(origin) = outcome? {
                return Ok(Progress::Found(origin));
            }
            lx.abandon_entry();
        }
    }

    /// One entry: a directive (`None`: go on), or the first record, which decides.
    fn entry(&mut self, lx: &mut Lexer<'_>, entry: Entry) -> Result<Option<Name>, Error> {
        if entry.blank_owner {
            return self.fallback(entry.line, "the first record has no owner of its own").map(Some);
        }
        let first = lx.expect("an owner name").map_err(|e| self.locate(e))?;
        if first.text.first() == Some(&b'$') && !first.quoted() {
            if first.text.eq_ignore_ascii_case(b"$ORIGIN") {
                let token = lx.expect("a domain name after $ORIGIN").map_err(|e| self.locate(e))?;
                let name = Name::parse_text(token.text, self.origin.as_deref()).map_err(|m| {
                    self.locate(token.error(format!("bad $ORIGIN '{}': {m}", token.display())))
                })?;
                self.first.get_or_insert_with(|| name.clone());
                self.origin = Some(name);
                return Ok(None);
            }
            if first.text.eq_ignore_ascii_case(b"$TTL") {
                return Ok(None);
            }
            let why = format!("{} comes before the first record", first.display());
            return self.fallback(entry.line, &why).map(Some);
        }
        let rtype = loop {
            let token = lx.expect("a record type").map_err(|e| self.locate(e))?;
            let text = token.text;
            if text.first().is_some_and(u8::is_ascii_digit) || Class::from_mnemonic(text).is_some()
            {
                continue; // TTL or class
            }
            match Rtype::from_mnemonic(text) {
                Some(rtype) => break rtype,
                None => {
                    let why = format!("the first record's type '{}' is unknown", token.display());
                    return self.fallback(entry.line, &why).map(Some);
                }
            }
        };
        if rtype != Rtype::SOA {
            let why = format!("the first record is {rtype}, not the SOA");
            return self.fallback(entry.line, &why).map(Some);
        }
        match Name::parse_text(first.text, self.origin.as_deref()) {
            Ok(owner) => Ok(Some(owner)),
            Err(_) => {
                let why = format!("the SOA's owner '{}' is relative", first.display());
                self.fallback(entry.line, &why).map(Some)
            }
        }
    }

    /// The first `$ORIGIN`, when the first record does not tell (`why`, at `line`; 0:
    /// the file as a whole); an error if there was none.
    fn fallback(&self, line: u32, why: &str) -> Result<Name, Error> {
        if let Some(first) = &self.first {
            return Ok(first.clone());
        }
        let at = Box::new(Position::of_line(self.source, line));
        let message = format!(
            "cannot tell the zone's origin: {why}, and no $ORIGIN comes before it (give the \
             origin)"
        );
        Err(Error::Syntax { at, message })
    }

    fn locate(&self, error: tern_wire::Error) -> Error {
        let (line, column, message) = match error {
            tern_wire::Error::Syntax { line, column, message } => (line, column, message),
            other => (0, 0, other.to_string()),
        };
        let at = Position { column, ..Position::of_line(self.source, line) };
        Error::Syntax { at: Box::new(at), message }
    }

    fn stalled(&self, stall: Stall, line: u32) -> Error {
        let message = match stall {
            Stall::Io(error) => format!("read failed: {error}"),
            Stall::FileTooBig => "the file is longer than the limit (max_file_size)".to_owned(),
            Stall::LineTooLong => "a line longer than the limit (max_line_length)".to_owned(),
        };
        Error::Syntax { at: Box::new(Position::of_line(self.source, line)), message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin_of(text: &str, chunk: usize) -> Result<String, String> {
        let options = Options::default();
        find_origin_in(text.as_bytes(), Path::new("z"), &options, chunk)
            .map(|n| n.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_soa_owner_or_else_the_first_origin() {
        let cases = [
            ("$ORIGIN example.com.\n$TTL 60\n@ SOA ns hm 1 2 3 4 5\n", "example.com."),
            // BIND's dumps: `$ORIGIN .`, then the zone named on its SOA.
            (
                "$ORIGIN .\n$TTL 300\t; 5 minutes\nexample.com\t\tIN SOA\tns hm (\n 1 2 3 4 5 )\n",
                "example.com.",
            ),
            ("; a comment\n\nexample.net. 3600 IN SOA ns hm 1 2 3 4 5\n", "example.net."),
            ("$ORIGIN com.\nexample 60 SOA ns hm 1 2 3 4 5\n", "example.com."),
            // The first record is not the SOA: the first $ORIGIN.
            ("$ORIGIN example.org.\nwww A 192.0.2.1\n@ SOA ns hm 1 2 3 4 5\n", "example.org."),
            ("$ORIGIN a.\n$ORIGIN b.\n$INCLUDE x\n", "a."),
        ];
        for (text, want) in cases {
            for chunk in [1, 7, CHUNK] {
                assert_eq!(origin_of(text, chunk), Ok(want.to_owned()), "{text:?}, chunk {chunk}");
            }
        }
    }

    #[test]
    fn a_file_that_does_not_say_is_an_error_saying_why() {
        let tail = ", and no $ORIGIN comes before it (give the origin)";
        let cases = [
            (
                "$TTL 60\n@ SOA ns hm 1 2 3 4 5\n",
                "z:2: cannot tell the zone's origin: the SOA's owner '@' is relative",
            ),
            (
                "www.example. A 192.0.2.1\n",
                "z:1: cannot tell the zone's origin: the first record is A, not the SOA",
            ),
            (
                "$INCLUDE other.zone\n",
                "z:1: cannot tell the zone's origin: $INCLUDE comes before the first record",
            ),
            ("; nothing\n", "z: cannot tell the zone's origin: the file has no record"),
        ];
        for (text, want) in cases {
            for chunk in [3, CHUNK] {
                assert_eq!(origin_of(text, chunk), Err(format!("{want}{tail}")), "{text:?}");
            }
        }
        assert_eq!(
            origin_of("$ORIGIN a..b\n", CHUNK),
            Err("z:1:9: bad $ORIGIN 'a..b': empty label".to_owned())
        );
    }
}
