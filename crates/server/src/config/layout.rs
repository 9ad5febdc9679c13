//! Where a configuration file's `[[zone]]` tables are, so that each is parsed on its own
//! as it is read, not the whole document at once: parsed whole, a million zones' file
//! (120 MB) took several gigabytes of tokens and tables, held until its end.
//!
//! The file is cut before each line that begins (blanks aside) with `[`: a table header
//! there, or a line of a multi-line string or array. The toml crate's parser reads each
//! such first line, and says which are `[[zone]]` headers (however the key is written:
//! `[[ "zone" ]]`). The cuts are trusted only once every piece parses on its own, with
//! the crate's parser too: a cut inside a multi-line string or array leaves the piece
//! before it unclosed, which is a syntax error (see [`Layout::others_parse`] and
//! [`zone_item`]); the caller then parses the whole document instead, as before. What
//! is not a `[[zone]]` table (the preamble and the other tables) is parsed together as
//! one document ([`Layout::rest`]), with the zone tables blanked out so that every span
//! stays the file's.

use std::borrow::Cow;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;
use toml_parser::decoder::Encoding;
use toml_parser::lexer::Token;
use toml_parser::parser::{Event, EventKind, ValidateWhitespace};
use toml_parser::{ParseError, Source};

/// A file cut into its `[[zone]]` tables and the rest.
pub(super) struct Layout<'t> {
    /// The file without its `[[zone]]` tables: blanked (spaces), so that a span in it is
    /// a span in the file; cut short after its last other table.
    pub rest: Cow<'t, str>,
    /// Each `[[zone]]` table, from its header to the next cut, in order.
    pub zones: Vec<Range<usize>>,
    /// The stretches between them (the preamble, other tables).
    others: Vec<Range<usize>>,
}

impl<'t> Layout<'t> {
    /// Cuts `text` (see the module comment).
    pub fn split(text: &'t str) -> Layout<'t> {
        let mut headers = HeaderReader::default();
        let (mut zones, mut others) = (Vec::new(), Vec::new());
        let (mut zone, mut other) = (None, Some(0));
        for at in header_lines(text) {
            if let Some(start) = zone.take() {
                zones.push(start..at);
            }
            let line = text.get(at..).and_then(|t| t.split_inclusive('\n').next());
            if line.is_some_and(|line| headers.is_zone(line)) {
                if let Some(start) = other.take().filter(|&start| start < at) {
                    others.push(start..at);
                }
                zone = Some(at);
            } else if other.is_none() {
                other = Some(at);
            }
        }
        zones.extend(zone.map(|start| start..text.len()));
        others.extend(other.map(|start| start..text.len()));
        let rest = rest(text, &zones, &others);
        Layout { rest, zones, others }
    }

    /// True when the cuts between the zone tables and the other stretches can be
    /// trusted as far as the other stretches go: each parses on its own (not needed
    /// when the rest is the one stretch at the start: parsing the rest checks it).
    pub fn others_parse(&self, text: &str) -> bool {
        if self.zones.is_empty() || matches!(&self.others[..], [] | [Range { start: 0, .. }]) {
            return true;
        }
        self.others.iter().all(|range| {
            text.get(range.clone())
                .is_some_and(|piece| DeTable::parse_recoverable(piece).1.is_empty())
        })
    }

    /// True when the file has nothing but `[[zone]]` tables (and comments).
    pub fn only_zones(&self) -> bool {
        self.others.len() <= 1 && self.others.first().is_none_or(|range| range.start == 0)
    }
}

/// The file without its zone tables (see [`Layout::rest`]).
fn rest<'t>(text: &'t str, zones: &[Range<usize>], others: &[Range<usize>]) -> Cow<'t, str> {
    let Some(first) = zones.first() else { return Cow::Borrowed(text) };
    let end = others.last().map_or(0, |range| range.end);
    if end <= first.start {
        return Cow::Borrowed(text.get(..first.start).unwrap_or_default());
    }
    let mut out = String::with_capacity(end);
    let mut at = 0;
    // Cuts are at `[` or the end: character boundaries.
    for range in zones.iter().take_while(|range| range.start < end) {
        out.push_str(text.get(at..range.start).unwrap_or_default());
        out.extend(std::iter::repeat_n(' ', range.len()));
        at = range.end;
    }
    out.push_str(text.get(at..end).unwrap_or_default());
    Cow::Owned(out)
}

/// Where each line that begins with `[` (after spaces and tabs) has it.
fn header_lines(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    // A `[` is rarer than a line's end: each found, look back to its line's start.
    text.match_indices('[').map(|(at, _)| at).filter(move |&at| {
        let before = bytes.get(bom..at).unwrap_or_default();
        let blanks = before.iter().rev().take_while(|&&b| b == b' ' || b == b'\t').count();
        let start = before.len() - blanks;
        start == 0 || before.get(start - 1) == Some(&b'\n')
    })
}

/// Reads a line that may be a table header with the toml crate's lexer and parser.
#[derive(Default)]
struct HeaderReader {
    tokens: Vec<Token>,
    events: Vec<Event>,
    errors: Vec<ParseError>,
    /// The last line found a `[[zone]]` header (the next ones are mostly the same).
    zone_line: String,
}

impl HeaderReader {
    /// True when `line` is a `[[zone]]` header, and nothing else but a comment.
    fn is_zone(&mut self, line: &str) -> bool {
        if line == self.zone_line {
            return true;
        }
        let zone = self.classify(line);
        if zone {
            line.clone_into(&mut self.zone_line);
        }
        zone
    }

    fn classify(&mut self, line: &str) -> bool {
        let source = Source::new(line);
        self.tokens.clear();
        self.tokens.extend(source.lex());
        self.events.clear();
        self.errors.clear();
        toml_parser::parser::parse_document(&self.tokens, &mut self.events, &mut self.errors);
        let mut parts = self.events.iter().filter(|e| {
            !matches!(e.kind(), EventKind::Whitespace | EventKind::Comment | EventKind::Newline)
        });
        let header = [parts.next(), parts.next(), parts.next(), parts.next()];
        let [Some(open), Some(key), Some(close), None] = header else { return false };
        let shape = [open.kind(), key.kind(), close.kind()];
        if shape != [EventKind::ArrayTableOpen, EventKind::SimpleKey, EventKind::ArrayTableClose]
            || !self.errors.is_empty()
        {
            return false;
        }
        decode(source, key, &mut self.errors).is_some_and(|name| name == "zone")
    }
}

/// The keys and string values of a `[[zone]]` table that holds nothing else, and its
/// header's span (the table's, as the toml crate gives it).
pub(super) type FlatTable<'p> = (Range<usize>, Vec<(Cow<'p, str>, Cow<'p, str>)>);

/// Reads the `[[zone]]` pieces whose table is only `key = "string"` lines (a hosting
/// configuration's `name`, `file` and maybe `template`) from the toml crate's lexer,
/// parser and decoder, without building its tables: half the work of the usual reading
/// ([`zone_item`], then serde), which reads every other piece.
#[derive(Default)]
pub(super) struct FlatReader {
    tokens: Vec<Token>,
    events: Vec<Event>,
    errors: Vec<ParseError>,
}

impl FlatReader {
    /// The table of `piece`, if it is a `[[zone]]` header and `key = "string"` lines
    /// alone, each key once, and the crate finds nothing wrong in it; else `None`.
    pub fn read<'p>(&mut self, piece: &'p str) -> Option<FlatTable<'p>> {
        let source = Source::new(piece);
        self.tokens.clear();
        self.tokens.extend(source.lex());
        self.events.clear();
        self.errors.clear();
        let mut events = ValidateWhitespace::new(&mut self.events, source);
        toml_parser::parser::parse_document(&self.tokens, &mut events, &mut self.errors);
        if !self.errors.is_empty() {
            return None;
        }
        let mut parts = self.events.iter().filter(|e| {
            !matches!(e.kind(), EventKind::Whitespace | EventKind::Comment | EventKind::Newline)
        });
        let (open, key, close) = (parts.next()?, parts.next()?, parts.next()?);
        let shape = [open.kind(), key.kind(), close.kind()];
        if shape != [EventKind::ArrayTableOpen, EventKind::SimpleKey, EventKind::ArrayTableClose]
            || decode(source, key, &mut self.errors)? != "zone"
        {
            return None;
        }
        let mut values: Vec<(Cow<'p, str>, Cow<'p, str>)> = Vec::with_capacity(4);
        while let Some(key) = parts.next() {
            let (equals, value) = (parts.next()?, parts.next()?);
            let shape = [key.kind(), equals.kind(), value.kind()];
            if shape != [EventKind::SimpleKey, EventKind::KeyValSep, EventKind::Scalar]
                || !matches!(
                    value.encoding(),
                    Some(Encoding::BasicString | Encoding::LiteralString)
                )
            {
                return None;
            }
            let key = decode(source, key, &mut self.errors)?;
            if values.iter().any(|(seen, _)| *seen == key) {
                return None;
            }
            let mut text = Cow::Borrowed("");
            let _ = source.get(value)?.decode_scalar(&mut text, &mut self.errors);
            values.push((key, text));
        }
        let span = open.span().start()..close.span().end();
        self.errors.is_empty().then_some((span, values))
    }
}

/// The key of a `SimpleKey` event, decoded (`None` if the crate finds it wrong).
fn decode<'p>(
    source: Source<'p>,
    key: &Event,
    errors: &mut Vec<ParseError>,
) -> Option<Cow<'p, str>> {
    let mut name = Cow::Borrowed("");
    source.get(key)?.decode_key(&mut name, errors);
    errors.is_empty().then_some(name)
}

/// The one table of a `[[zone]]` piece of the file (spans from the piece's start), or
/// `None` when the piece does not parse on its own or is not one `[[zone]]` table: the
/// cuts are not to be trusted, and the whole document is to be parsed.
pub(super) fn zone_item(piece: &str) -> Option<Spanned<DeValue<'_>>> {
    let (doc, errors) = DeTable::parse_recoverable(piece);
    if !errors.is_empty() {
        return None;
    }
    let mut entries = doc.into_inner().into_iter();
    let (key, value) = entries.next()?;
    if entries.next().is_some() || key.get_ref() != "zone" {
        return None;
    }
    match value.into_inner() {
        DeValue::Array(items) if items.len() == 1 => items.into_iter().next(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(text: &str) -> Vec<&str> {
        Layout::split(text).zones.iter().map(|r| &text[r.clone()]).collect()
    }

    #[test]
    fn zone_tables_are_cut_out_and_the_rest_keeps_its_places() {
        let text = "[server]\nstorage = \"s\"\n[[zone]]\nname = \"a\"\n  [[ \"zone\" ]] # b\nname = \"b\"\n[log]\nlevel = \"warn\"\n[[zone]]\nname = \"c\"\n";
        let layout = Layout::split(text);
        assert_eq!(
            zones(text),
            [
                "[[zone]]\nname = \"a\"\n  ",
                "[[ \"zone\" ]] # b\nname = \"b\"\n",
                "[[zone]]\nname = \"c\"\n"
            ]
        );
        assert_eq!(layout.rest.len(), text.find("[[zone]]\nname = \"c\"").unwrap());
        let log = text.find("[log]").unwrap();
        assert_eq!(&layout.rest[log..log + 5], "[log]");
        let first = text.find("[[zone]]").unwrap();
        assert_eq!(&layout.rest[..first], &text[..first]);
        assert!(layout.rest[first..log].bytes().all(|b| b == b' '), "{:?}", layout.rest);
        assert!(layout.others_parse(text));
        assert!(!layout.only_zones());
        assert!(zone_item(&text[layout.zones[1].clone()]).is_some());
    }

    #[test]
    fn other_headers_and_lines_are_not_zone_tables() {
        for text in [
            "[zone]\nname = \"a\"\n",
            "[[zone.x]]\nname = \"a\"\n",
            "[[zones]]\nname = \"a\"\n",
            "[[zone]] x = 1\n",
            "a = [\n[1, 2],\n]\n",
        ] {
            assert!(zones(text).is_empty(), "{text}");
            assert_eq!(Layout::split(text).rest, text);
        }
        let crlf = "[[zone]]\r\nname = \"a\"\r\n";
        assert_eq!(zones(crlf), [crlf]);
        let bom = "\u{feff}[[zone]]\nname = \"a\"\n";
        assert_eq!(zones(bom), [&bom[3..]]);
    }

    /// A `[[zone]]` line inside a multi-line string is cut at, but the cut is not
    /// trusted: the piece before it does not parse on its own.
    #[test]
    fn a_cut_inside_a_multi_line_string_is_not_trusted() {
        for quotes in ["\"\"\"", "'''"] {
            let text = format!("[[zone]]\nname = \"a\"\nx = {quotes}\n[[zone]]\n{quotes}\n");
            let layout = Layout::split(&text);
            assert_eq!(layout.zones.len(), 2);
            assert!(zone_item(&text[layout.zones[0].clone()]).is_none(), "{text}");
            let text = format!("[server]\nx = {quotes}\n[[zone]]\nname = \"a\"\n[log]\n{quotes}\n");
            let layout = Layout::split(&text);
            assert_eq!(layout.zones.len(), 1);
            assert!(!layout.others_parse(&text), "{text}");
        }
    }
}
