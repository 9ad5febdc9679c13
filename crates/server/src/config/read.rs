//! Reading a configuration file, and the file of zones added at run time: each table on
//! its own, every error kept with its place, in the order of the document's keys.
//!
//! The `[[zone]]` tables, nearly all of a large file, are found without parsing the whole
//! document ([`Layout`]): the other tables are parsed together and read first, then each
//! zone table is parsed, read and planned in turn ([`Intake`]), so that neither the
//! whole document's tables nor the zones' tables as read are held at once. When the
//! cuts cannot be trusted (a piece does not parse on its own: a syntax error, or a
//! `[[zone]]` line inside a multi-line string) or `zone` is written otherwise than as
//! `[[zone]]` tables (`[zone.x]`, `zone = [...]`), the whole document is parsed at once,
//! as it always was. Either way the errors, their order and their places are the same.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use tern_wire::Name;
use toml::de::{DeString, DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

use super::intake::{Intake, Located};
use super::layout::{zone_item, FlatReader, Layout};
use super::{added_file, key_span, report, values, Config, ZoneConfig, ADDED_ZONES, MAX_ERRORS};
use crate::error::{Error, Result};

/// Where the file of zones added at run time comes from.
pub(super) enum Added<'a> {
    /// There is none.
    Absent,
    /// This text, of this file.
    Given(&'a str, &'a Path),
    /// The file in the storage directory the configuration names, if it exists.
    Storage,
}

/// The cuts of the file cannot be trusted: the whole document is to be parsed.
struct Whole;

/// What a reading found.
enum Outcome<'a> {
    Read(Box<Config>),
    /// Errors, some maybe in the file of added zones (text and path).
    Failed(Vec<Located>, Option<(Cow<'a, str>, PathBuf)>),
    /// The file of added zones exists, but cannot be read.
    Unreadable(Error),
}

/// A reading that failed: the error, and whether a file of added zones was read too
/// (its zones may be why).
pub(super) struct Failure {
    pub error: Error,
    pub added: bool,
}

impl Config {
    /// Reads configuration `text` (of the file `path`) with the zones of `added` after
    /// its own (see the module comment).
    pub(super) fn read_with(
        text: &str,
        path: &Path,
        added: Added<'_>,
    ) -> std::result::Result<Config, Failure> {
        let layout = Layout::split(text);
        let outcome = match read_split(text, path, &added, &layout) {
            Ok(outcome) => outcome,
            Err(Whole) => {
                drop(layout);
                read_whole(text, path, &added).map_err(|error| Failure { error, added: false })?
            }
        };
        match outcome {
            Outcome::Read(config) => Ok(*config),
            Outcome::Failed(errors, added) => {
                let read = added.as_ref().map(|(text, path)| (&**text, path.as_path()));
                let error = render(text, path, read, &errors);
                Err(Failure { error, added: added.is_some() })
            }
            Outcome::Unreadable(error) => Err(Failure { error, added: true }),
        }
    }
}

/// Reads the file as cut by `layout`, unless the cuts cannot be trusted.
fn read_split<'a>(
    text: &str,
    path: &Path,
    added: &Added<'a>,
    layout: &Layout<'_>,
) -> std::result::Result<Outcome<'a>, Whole> {
    if !layout.others_parse(text) {
        return Err(Whole);
    }
    let (doc, syntax) = DeTable::parse_recoverable(&layout.rest);
    if !syntax.is_empty() || doc.get_ref().iter().any(|(key, _)| key.get_ref() == "zone") {
        return Err(Whole);
    }
    let mut reading = Reading::start(text, path, doc.get_ref(), layout.zones.len());
    reading.pieces(&layout.zones)?;
    Ok(reading.end(added))
}

/// Reads the file parsed whole.
fn read_whole<'a>(text: &str, path: &Path, added: &Added<'a>) -> Result<Outcome<'a>> {
    let (doc, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        let errors: Vec<Located> =
            syntax.iter().map(|e| (e.span(), e.message().to_owned())).collect();
        return Err(render(text, path, None, &errors));
    }
    let zones = doc.get_ref().iter().find(|(key, _)| key.get_ref() == "zone");
    let count = zones.and_then(|(_, value)| value.get_ref().as_array()).map_or(0, |a| a.len());
    let mut reading = Reading::start(text, path, doc.get_ref(), count);
    if let Some((_, value)) = zones {
        reading.items(value);
    }
    Ok(reading.end(added))
}

/// The errors as shown: `file:line:column: message` and the line, for the first
/// [`MAX_ERRORS`]; spans past the end of `text` are in `added` (see [`Config::read`]).
fn render(text: &str, path: &Path, added: Option<(&str, &Path)>, errors: &[Located]) -> Error {
    let offset = text.len() + 1;
    let rendered: Vec<String> = errors
        .iter()
        .take(MAX_ERRORS)
        .map(|(span, message)| match (span, added) {
            (Some(s), Some((added_text, added_path))) if s.start >= offset => {
                let inner = s.start - offset..s.end.saturating_sub(offset);
                report::render(added_path, added_text, Some(inner), message)
            }
            _ => report::render(path, text, span.clone(), message),
        })
        .collect();
    let more = errors.len().saturating_sub(MAX_ERRORS);
    let tail = if more > 0 { format!("\n({more} more errors not shown)") } else { String::new() };
    Error::Config(format!("{}{tail}", rendered.join("\n")))
}

/// A reading under way: the tables other than the zones' read, the zones being taken.
struct Reading<'t> {
    text: &'t str,
    config: Config,
    /// The errors of the tables before `zone` in the document's order (its keys are
    /// sorted), of the zone tables, of the tables after.
    before: Vec<Located>,
    zones: Vec<Located>,
    after: Vec<Located>,
    /// The checks of the tables read together (cookies' secrets, TLS).
    checks: Vec<Located>,
    intake: Intake,
    /// The zones of the file itself (those of the file of added zones follow).
    main: usize,
    flat: FlatReader,
}

impl<'t> Reading<'t> {
    /// Reads the tables of `doc` other than `zone`, makes their paths relative to the
    /// file's directory and checks them; ready for about `zones` zones.
    fn start(text: &'t str, path: &Path, doc: &DeTable<'_>, zones: usize) -> Reading<'t> {
        let mut config = Config { path: Some(path.to_owned()), ..Config::default() };
        let (mut before, mut after) = (TableReader::default(), TableReader::default());
        for (key, value) in doc {
            match &**key.get_ref() {
                "zone" => {}
                name if name < "zone" => before.top(&mut config, key, value),
                _ => after.top(&mut config, key, value),
            }
        }
        let base = config.base().unwrap_or_else(|| PathBuf::from("/"));
        config.resolve_paths(&base);
        let mut checks = Vec::new();
        config.cookies.resolve(&base, &mut checks);
        if let Err(why) = config.tls.check(!config.quic.listen.is_empty()) {
            let table = |name: &str| doc.iter().find(|(k, _)| &**k.get_ref() == name);
            let table = table("tls").or_else(|| table("quic"));
            checks.push((table.map(|(k, _)| k.span()), why));
        }
        let intake = Intake::new(&config, &base, true, zones);
        let (before, after) = (before.errors, after.errors);
        let flat = FlatReader::default();
        Reading { text, config, before, zones: Vec::new(), after, checks, intake, main: 0, flat }
    }

    /// Takes the zone tables at `ranges` of the text, each parsed on its own.
    fn pieces(&mut self, ranges: &[Range<usize>]) -> std::result::Result<(), Whole> {
        for range in ranges {
            let piece = self.text.get(range.clone()).ok_or(Whole)?;
            if let Some((span, zone)) = flat_zone(&mut self.flat, piece) {
                let prepared = self.intake.prepare(moved(span, range.start), zone);
                self.intake.admit(prepared);
                continue;
            }
            let item = zone_item(piece).ok_or(Whole)?;
            match read_table::<ZoneConfig>(item, || zone_item(piece)) {
                Ok(zone) => {
                    let span = moved(zone.span(), range.start);
                    let prepared = self.intake.prepare(span, zone.into_inner());
                    self.intake.admit(prepared);
                }
                Err((span, why)) => self.zones.push((span.map(|s| moved(s, range.start)), why)),
            }
        }
        self.main = self.intake.taken();
        Ok(())
    }

    /// Takes the zone tables of the document parsed whole (`zone`'s value).
    fn items(&mut self, value: &Spanned<DeValue<'_>>) {
        let Some(items) = value.get_ref().as_array() else {
            let why = "expected an array of tables (`[[...]]`)".to_owned();
            self.zones.push((Some(value.span()), why));
            return;
        };
        for item in items.iter() {
            match read_table::<ZoneConfig>(item.clone(), || Some(item.clone())) {
                Ok(zone) => {
                    let prepared = self.intake.prepare(zone.span(), zone.into_inner());
                    self.intake.admit(prepared);
                }
                Err(error) => self.zones.push(error),
            }
        }
        self.main = self.intake.taken();
    }

    /// Reads the file of added zones and takes its zones; then the configuration, or
    /// every error in the order of a reading of the whole file.
    fn end<'a>(mut self, added: &Added<'a>) -> Outcome<'a> {
        let added = match self.added_text(added) {
            Ok(added) => added,
            Err(error) => return Outcome::Unreadable(error),
        };
        let mut added_errors = Vec::new();
        if let Some((added_text, _)) = &added {
            let offset = self.text.len() + 1;
            self.config.added_log = self.read_log(added_text, offset, &mut added_errors);
        }
        let mut errors = [self.before, self.zones, self.after, added_errors].concat();
        errors.extend(self.intake.errors());
        errors.append(&mut self.checks);
        if !errors.is_empty() {
            return Outcome::Failed(errors, added);
        }
        let mut config = self.config;
        match self.intake.finish(&config.server.storage) {
            Ok((resolved, producers)) => {
                config.added_from = self.main.min(resolved.zones.len());
                config.resolved = Arc::new(resolved);
                config.zones = producers;
                Outcome::Read(Box::new(config))
            }
            Err(errors) => Outcome::Failed(errors, added),
        }
    }

    /// The text and path of the file of added zones, if there is one.
    fn added_text<'a>(&self, added: &Added<'a>) -> Result<Option<(Cow<'a, str>, PathBuf)>> {
        match added {
            Added::Absent => Ok(None),
            Added::Given(text, path) => Ok(Some((Cow::Borrowed(*text), path.to_path_buf()))),
            Added::Storage => {
                let path = self.config.server.storage.join(ADDED_ZONES);
                if !path.exists() {
                    return Ok(None);
                }
                // Lossy: bytes a crash left past the last whole change need not be UTF-8
                // (they are ignored, see `added_file`).
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        Ok(Some((String::from_utf8_lossy(&bytes).into_owned().into(), path)))
                    }
                    Err(source) => Err(Error::File { path, source }),
                }
            }
        }
    }

    /// Reads the file of added zones ([`added_file`]) and takes the zones of its
    /// committed part (see [`added_tables`]); returns what is known of it. A torn last
    /// change is ignored (its bytes are past [`AddedLog::committed`](added_file::AddedLog));
    /// damage is an error at the mark that does not match. Spans are moved `offset` on.
    fn read_log(
        &mut self,
        text: &str,
        offset: usize,
        errors: &mut Vec<Located>,
    ) -> added_file::AddedLog {
        let (end, marked, tail) = added_file::committed(text);
        // A torn change (`len` past `committed`) is logged once logging runs.
        match tail {
            added_file::Tail::Clean | added_file::Tail::Torn(_) => {}
            added_file::Tail::Damaged(at) => errors.push((
                Some(at + offset..at + offset + 1),
                "damaged: this change's check (CRC-32) does not match, and changes follow it; restore the file from a backup".into(),
            )),
        }
        let committed = text.get(..end).unwrap_or_default();
        let intake = &mut self.intake;
        let (kept, tables) = added_tables(committed, offset, errors, &mut |zone| {
            intake.prepare(zone.span(), zone.into_inner())
        });
        for zone in kept {
            self.intake.admit(zone);
        }
        let len = text.len() as u64;
        added_file::AddedLog { committed: end as u64, len, marked, tables }
    }
}

/// The zone of a piece whose table is string values alone, read straight from the
/// parser's events ([`FlatReader`]), with its table's span (from the piece's start).
fn flat_zone(reader: &mut FlatReader, piece: &str) -> Option<(Range<usize>, ZoneConfig)> {
    let (span, values) = reader.read(piece)?;
    Some((span, ZoneConfig::from_strings(&values)?))
}

/// `span` moved `by` on.
fn moved(span: Range<usize>, by: usize) -> Range<usize> {
    span.start + by..span.end + by
}

/// One table read as a `T`, or the error and where: at the key the message names (in
/// the table `again` gives, parsed anew), else where the toml crate says, else the
/// table.
fn read_table<'i, T: DeserializeOwned>(
    item: Spanned<DeValue<'i>>,
    again: impl FnOnce() -> Option<Spanned<DeValue<'i>>>,
) -> std::result::Result<Spanned<T>, Located> {
    let whole = item.span();
    Spanned::<T>::deserialize(ValueDeserializer::from(item)).map_err(|e| {
        let at = again().and_then(|item| key_span(&item, e.message()));
        (at.or(e.span()).or(Some(whole)), e.message().to_owned())
    })
}

/// The tables of a file of added zones ([`added_file`]: nothing else may be in it), in
/// order: each zone read, its span moved `offset` on, and made a `T` by `take`; a
/// removal record takes away the zone of its name read before it. Errors (moved too) go
/// to `errors`. Returns the zones kept, in order, and the number of tables.
pub(super) fn added_tables<T>(
    text: &str,
    offset: usize,
    errors: &mut Vec<Located>,
    take: &mut dyn FnMut(Spanned<ZoneConfig>) -> T,
) -> (Vec<T>, usize) {
    let layout = Layout::split(text);
    if layout.only_zones() {
        let (rest, syntax) = DeTable::parse_recoverable(&layout.rest);
        if syntax.is_empty() && rest.get_ref().is_empty() {
            let mark = errors.len();
            let mut log = AddedTables::new(offset);
            if log.pieces(text, &layout.zones, errors, take).is_ok() {
                return log.kept();
            }
            errors.truncate(mark);
        }
    }
    drop(layout);
    let mut log = AddedTables::new(offset);
    log.whole(text, errors, take);
    log.kept()
}

/// The zones of a file of added zones, as its tables are read (see [`added_tables`]).
struct AddedTables<T> {
    offset: usize,
    /// The zones read, `None` once removed.
    slots: Vec<Option<T>>,
    /// Where the last zone of each name is among them.
    at: std::collections::HashMap<Name, usize>,
    tables: usize,
    flat: FlatReader,
}

impl<T> AddedTables<T> {
    fn new(offset: usize) -> Self {
        let (slots, at, flat) = (Vec::new(), Default::default(), FlatReader::default());
        AddedTables { offset, slots, at, tables: 0, flat }
    }

    fn kept(self) -> (Vec<T>, usize) {
        (self.slots.into_iter().flatten().collect(), self.tables)
    }

    /// Reads the zone tables at `ranges` of `text`, each parsed on its own.
    fn pieces(
        &mut self,
        text: &str,
        ranges: &[Range<usize>],
        errors: &mut Vec<Located>,
        take: &mut dyn FnMut(Spanned<ZoneConfig>) -> T,
    ) -> std::result::Result<(), Whole> {
        for range in ranges {
            let piece = text.get(range.clone()).ok_or(Whole)?;
            if let Some((span, zone)) = flat_zone(&mut self.flat, piece) {
                self.tables += 1;
                self.zone(Spanned::new(moved(span, range.start), zone), take);
                continue;
            }
            let item = zone_item(piece).ok_or(Whole)?;
            self.table(item, range.start, || zone_item(piece), errors, take);
        }
        Ok(())
    }

    /// Reads `text` parsed whole.
    fn whole(
        &mut self,
        text: &str,
        errors: &mut Vec<Located>,
        take: &mut dyn FnMut(Spanned<ZoneConfig>) -> T,
    ) {
        let offset = self.offset;
        let (doc, syntax) = DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            let moved =
                |e: &toml::de::Error| (e.span().map(|s| moved(s, offset)), e.message().to_owned());
            errors.extend(syntax.iter().map(moved));
            return;
        }
        for (key, value) in doc.get_ref() {
            if &**key.get_ref() != "zone" {
                let why = format!(
                    "unknown field `{}`: only `[[zone]]` tables belong here",
                    key.get_ref()
                );
                errors.push((Some(moved(key.span(), offset)), why));
                continue;
            }
            let Some(items) = value.get_ref().as_array() else {
                let why = "expected an array of tables (`[[...]]`)".to_owned();
                errors.push((Some(moved(value.span(), offset)), why));
                continue;
            };
            for item in items.iter() {
                self.table(item.clone(), 0, || Some(item.clone()), errors, take);
            }
        }
    }

    /// One table (its spans from byte `at` of the text): a zone, or a removal record
    /// ([`added_file::removal`]), which takes away the last zone of its name.
    fn table<'i>(
        &mut self,
        item: Spanned<DeValue<'i>>,
        at: usize,
        again: impl FnOnce() -> Option<Spanned<DeValue<'i>>>,
        errors: &mut Vec<Located>,
        take: &mut dyn FnMut(Spanned<ZoneConfig>) -> T,
    ) {
        self.tables += 1;
        let by = self.offset + at;
        let keys = item.get_ref().as_table().into_iter();
        if added_file::is_removal(keys.flat_map(|t| t.iter().map(|(k, _)| k.get_ref().as_ref()))) {
            let whole = item.span();
            match RemovedZone::deserialize(ValueDeserializer::from(item)) {
                Ok(gone) => {
                    if let Some(slot) =
                        self.at.remove(&gone.name).and_then(|i| self.slots.get_mut(i))
                    {
                        *slot = None;
                    }
                }
                Err(e) => {
                    errors.push((Some(moved(e.span().unwrap_or(whole), by)), e.message().into()))
                }
            }
            return;
        }
        match read_table::<ZoneConfig>(item, again) {
            Ok(zone) => self.zone(Spanned::new(moved(zone.span(), at), zone.into_inner()), take),
            Err((span, why)) => errors.push((span.map(|s| moved(s, by)), why)),
        }
    }

    /// A zone read (its span from the start of the text).
    fn zone(&mut self, zone: Spanned<ZoneConfig>, take: &mut dyn FnMut(Spanned<ZoneConfig>) -> T) {
        let span = moved(zone.span(), self.offset);
        let zone = zone.into_inner();
        self.at.insert(zone.name.clone(), self.slots.len());
        self.slots.push(Some(take(Spanned::new(span, zone))));
    }
}

/// A removal record of the file of added zones ([`added_file::removal`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemovedZone {
    #[serde(deserialize_with = "values::zone_name")]
    name: Name,
    #[allow(dead_code)]
    removed: bool,
}

/// Reads the top-level tables other than the zones' one by one, collecting every error.
#[derive(Default)]
pub(super) struct TableReader {
    pub errors: Vec<Located>,
}

/// The top-level keys, for the unknown-key hint.
const TOP_KEYS: &str = "`server`, `tcp`, `identity`, `log`, `transfer`, `rrl`, `cookies`, \
     `control`, `xdp`, `http`, `tls`, `quic`, `key`, `remote`, `acl`, `template`, `policy`, `zone`, `database`";

impl TableReader {
    /// Reads one top-level key (`zone` is read apart: see [`Reading`]).
    fn top(
        &mut self,
        config: &mut Config,
        key: &Spanned<DeString<'_>>,
        value: &Spanned<DeValue<'_>>,
    ) {
        match &**key.get_ref() {
            "server" => self.one(&mut config.server, value),
            "tcp" => self.one(&mut config.tcp, value),
            "identity" => self.one(&mut config.identity, value),
            "log" => self.one(&mut config.log, value),
            "transfer" => self.one(&mut config.transfer, value),
            "rrl" => self.one(&mut config.rrl, value),
            "cookies" => self.one(&mut config.cookies, value),
            "control" => self.one(&mut config.control, value),
            "xdp" => self.one(&mut config.xdp, value),
            "http" => self.one(&mut config.http, value),
            "tls" => self.one(&mut config.tls, value),
            "quic" => self.one(&mut config.quic, value),
            "key" => self.list(&mut config.tables.keys, value),
            "remote" => self.list(&mut config.tables.remotes, value),
            "acl" => self.list(&mut config.tables.acls, value),
            "template" => self.list(&mut config.tables.templates, value),
            "policy" => self.list(&mut config.tables.policies, value),
            "database" => self.list(&mut config.databases, value),
            "zone" => {}
            other => self.errors.push((
                Some(key.span()),
                format!("unknown field `{other}`, expected one of {TOP_KEYS}"),
            )),
        }
    }

    /// A table read into `slot`.
    fn one<T: DeserializeOwned>(&mut self, slot: &mut T, value: &Spanned<DeValue<'_>>) {
        match T::deserialize(ValueDeserializer::from(value.clone())) {
            Ok(read) => *slot = read,
            Err(e) => self.errors.push((e.span().or(Some(value.span())), e.message().to_owned())),
        }
    }

    /// An array of tables, each read on its own.
    fn list<T: DeserializeOwned>(
        &mut self,
        list: &mut Vec<Spanned<T>>,
        value: &Spanned<DeValue<'_>>,
    ) {
        let Some(items) = value.get_ref().as_array() else {
            let message = "expected an array of tables (`[[...]]`)".to_owned();
            self.errors.push((Some(value.span()), message));
            return;
        };
        for item in items.iter() {
            match read_table(item.clone(), || Some(item.clone())) {
                Ok(read) => list.push(read),
                Err(error) => self.errors.push(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reading shows: the plans, or the errors as rendered.
    fn shown(text: &str, outcome: Result<Outcome<'_>>) -> String {
        let path = Path::new("/etc/tern/ternd.toml");
        match outcome {
            Ok(Outcome::Read(config)) => format!("{:?} {:?}", config.resolved.zones, config.zones),
            Ok(Outcome::Failed(errors, added)) => {
                let added = added.as_ref().map(|(text, path)| (&**text, path.as_path()));
                render(text, path, added, &errors).to_string()
            }
            Ok(Outcome::Unreadable(error)) | Err(error) => error.to_string(),
        }
    }

    /// Reading the file cut into its zone tables shows what reading it whole does.
    #[test]
    fn the_zone_tables_read_one_by_one_read_as_the_whole_document() {
        let path = Path::new("/etc/tern/ternd.toml");
        let zone = |name: &str, extra: &str| format!("[[zone]]\nname = \"{name}\"\n{extra}");
        let texts = [
            format!("{}{}", zone("a", "file = \"a\"\n"), zone("b", "file = \"b\"\n")),
            format!(
                "[server]\nudp-workers = 0\n{}[tcp]\nidle-timeout = \"x\"\n{}zzz = 1\n",
                zone("a..b", "file = \"a\"\n"),
                zone("b", "fil = 1\n")
            ),
            format!(
                "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n{}{}",
                zone("a", "primary = \"p\"\n"),
                zone("b", "primary = \"q\"\n")
            ),
            format!(
                "{}{}{}",
                zone("a", "file = \"x\"\n"),
                zone("b", "file = \"x\"\nprimary = \"p\"\n"),
                "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n"
            ),
            format!("{}{}", zone("a", "file = \"a\"\n"), zone("A.", "file = \"b\"\n")),
            format!(
                "{}{}",
                zone("c", "catalog-role = \"producer\"\n"),
                zone("m", "file = \"m\"\ncatalog = \"c\"\n")
            ),
            format!(
                "{}{}",
                zone("m", "file = \"m\"\ncatalog = \"nope\"\n"),
                zone("d", "database = \"x\"\n")
            ),
            format!(
                "[[template]]\nid = \"t\"\nnotify = \"r\"\n{}",
                zone("a", "file = \"a\"\ntemplate = \"t\"\n")
            ),
        ];
        for text in &texts {
            let layout = Layout::split(text);
            let Ok(fast) = read_split(text, path, &Added::Absent, &layout) else {
                panic!("not cut: {text}")
            };
            let fast = shown(text, Ok(fast));
            assert_eq!(fast, shown(text, read_whole(text, path, &Added::Absent)), "{text}");
        }
    }

    /// A zone table of string values read from the parser's events is what serde reads
    /// from the crate's table; any other table is left to serde.
    #[test]
    fn a_table_of_strings_reads_as_serde_reads_it() {
        let read = [
            "[[zone]]\nname = \"a.example\"\nfile = \"a.zone\"\n",
            "[[ 'zone' ]] # a\n  \"name\" = 'A.example.' # b\n\n'file'=\"/z/\\u0041 b\"\ntemplate = \"t\"",
            "[[zone]]\r\nname = \"a\"\r\nfile = \"a\\\\b\"\r\n",
            "[[zone]]\nfile = \"x\"\nname = \"b\"\n# the end\n   ",
            "[[zone]]\nname = \"c\"\n",
            "[[zone]]\nname = \"s\"\nprimary = \"p\"\nzonefile-sync = \"never\"\nnotify = 'q'\n",
            "[[zone]]\nname = \"s\"\nfile = \"s\"\nixfr-history-size = \"64M\"\ncatalog = \"cat\"\n",
            "[[zone]]\nname = \"k\"\ncatalog-role = \"consumer\"\ncatalog-template = \"t\"\n",
            "[[zone]]\nname = \"l\"\nscript = \"l.lua\"\nscript-max-memory = \"32M\"\n",
            "[[zone]]\nname = \"d\"\ndatabase = \"pdns\"\ndnssec-policy = \"p\"\n",
            "[[zone]]\nname = \"r\"\nrefresh-min = \"1h\"\nserial-policy = \"unixtime\"\n",
        ];
        let left = [
            "[[zone]]\nname = \"a..b\"\nfile = \"a\"\n",
            "[[zone]]\nname = \"a\"\nfile = \"\"\n",
            "[[zone]]\nname = \"a\"\nname = \"b\"\n",
            "[[zone]]\nname = \"a\"\nfile = \"a\"\nfil = \"p\"\n",
            "[[zone]]\nname = \"a\"\nzonefile-sync = \"sometimes\"\n",
            "[[zone]]\nname = \"a\"\nfile = \"a\"\nscript = \"b\"\n",
            "[[zone]]\nname = \"a\"\ncatalog-role = \"both\"\n",
            "[[zone]]\nname = \"a\"\nixfr-history = \"3\"\n",
            "[[zone]]\nname = \"a\"\nfile = \"a\"\nprimary = [\"p\"]\n",
            "[[zone]]\nname = \"a\"\nfile = 1\n",
            "[[zone]]\nname = \"a\"\nfile = \"\"\"a\"\"\"\n",
            "[[zone]]\nname.x = \"a\"\n",
            "[[zone]]\nname = \"a\" file = \"b\"\n",
            "[[zone]]\nname = \"a\\q\"\n",
            "[[zone]]\n",
            "[[zone.x]]\nname = \"a\"\n",
            "[[zone]]\nname = \"a\"\n[x]\n",
        ];
        let mut flat = FlatReader::default();
        for piece in read {
            let (span, zone) = flat_zone(&mut flat, piece).unwrap_or_else(|| panic!("{piece}"));
            let item = zone_item(piece).unwrap();
            let serde = read_table::<ZoneConfig>(item, || None).unwrap();
            assert_eq!((span, zone), (serde.span(), serde.into_inner()), "{piece}");
        }
        for piece in left {
            assert!(flat_zone(&mut flat, piece).is_none(), "{piece}");
        }
    }

    /// The file of added zones read table by table reads as it does parsed whole.
    #[test]
    fn the_added_zones_read_one_by_one_read_as_the_whole_file() {
        let zone = |name: &str| format!("[[zone]]\nname = \"{name}\"\nfile = \"/z/{name}\"\n");
        let gone = |name: &str| format!("[[zone]]\nname = \"{name}\"\nremoved = true\n");
        let texts = [
            format!("# header\n{}{}{}{}", zone("a"), zone("b"), gone("a"), zone("a")),
            format!("{}[[zone]]\nname = \"a..b\"\n{}", zone("a"), gone("x")),
            format!("{}[[zone]]\nname = \"c\"\nremoved = 1\n", zone("a")),
            format!("{}[log]\nlevel = \"warn\"\n", zone("a")),
        ];
        for text in &texts {
            let (mut fast_errors, mut whole_errors) = (Vec::new(), Vec::new());
            let fast = added_tables(text, 7, &mut fast_errors, &mut |z| format!("{z:?}"));
            let mut log = AddedTables::new(7);
            log.whole(text, &mut whole_errors, &mut |z| format!("{z:?}"));
            assert_eq!((fast, fast_errors), (log.kept(), whole_errors), "{text}");
        }
    }
}
