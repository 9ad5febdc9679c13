//! A zone's rows in PowerDNS's format, read with Tern's own zone-file parser.
//!
//! Each row becomes one line of zone-file text under `$ORIGIN .`, so that names written
//! without their trailing dot (PowerDNS's way, in owners and in record data) are
//! absolute; `prio` goes before the content of MX and SRV. A row whose name, type or
//! content could be read as more than one record (a newline, a directive, parentheses
//! outside quotes) is refused before it is parsed. Every row the parser refuses is
//! reported with its table and id; the zone is loaded without them, or refused
//! ([`OnBadRow`]).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use tern_wire::Name;
use tern_zone::{Loaded, Options, ZoneBuilder};
use tracing::warn;

use crate::database::{Database, OnBadRow};
use crate::error::Error;

/// The TTL of a row whose `ttl` is NULL (PowerDNS's `default-ttl`).
const DEFAULT_TTL: u32 = 3600;
/// Bad rows a load reports before it gives up on the zone.
const MAX_BAD_ROWS: usize = 1000;
/// Bad rows named one by one in the log; the rest are counted.
const LOGGED_BAD_ROWS: usize = 10;

/// One row of the `records` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `id`.
    pub id: i64,
    /// `name`: the owner, without its trailing dot.
    pub name: String,
    /// `type`.
    pub rtype: String,
    /// `content`: the record's data, names without their trailing dot.
    pub content: String,
    /// `ttl`.
    pub ttl: Option<i64>,
    /// `prio`: MX's preference, SRV's priority.
    pub prio: Option<i64>,
}

impl Row {
    /// The row as [`super::fetch`]'s query returns it.
    pub(crate) fn from_sql(row: &tokio_postgres::Row) -> Result<Row, tokio_postgres::Error> {
        Ok(Row {
            id: row.try_get(0)?,
            name: row.try_get::<_, Option<String>>(1)?.unwrap_or_default(),
            rtype: row.try_get(2)?,
            content: row.try_get::<_, Option<String>>(3)?.unwrap_or_default(),
            ttl: row.try_get(4)?,
            prio: row.try_get(5)?,
        })
    }
}

/// A row left out of a load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    /// Its `id` in `records`.
    pub id: i64,
    /// What is wrong with it.
    pub why: String,
}

/// Loads `origin` from its `rows`: the zone without the rows that do not read (each
/// logged with its table and id), or — with [`OnBadRow::Refuse`], or past
/// 1000 of them — an error naming them.
pub fn read(database: &Database, origin: &Name, rows: &[Row]) -> Result<Loaded, Error> {
    let started = Instant::now();
    let (text, lines, mut bad) = zone_text(rows);
    let source = format!("database {}", database.id);
    let options =
        Options { collect_errors: true, max_errors: MAX_BAD_ROWS, ..Options::untrusted() };
    let mut builder = ZoneBuilder::new(origin);
    let parsed =
        tern_zone::parse_bytes(text.as_bytes(), Path::new(&source), origin, &options, &mut |r| {
            builder.add_record(r);
            Ok(())
        });
    let parse = match parsed {
        Ok(report) => report,
        Err(e) => {
            unread_rows(&e, &lines, rows, &mut bad).map_err(|why| fail(database, why))?;
            tern_zone::parser::Report::default()
        }
    };
    bad.sort_by_key(|b| b.id);
    report_bad(database, origin, &bad)?;
    let (contents, report) = builder.finish().map_err(|e| fail(database, e.to_string()))?;
    Ok(Loaded { contents, report, parse, elapsed: started.elapsed().as_secs_f64() })
}

/// The rows as zone-file text, with the row of each line (from line 2: line 1 is the
/// `$ORIGIN`), and the rows refused before parsing.
fn zone_text(rows: &[Row]) -> (String, Vec<usize>, Vec<BadRow>) {
    let mut text = String::from("$ORIGIN .\n");
    let mut lines = Vec::with_capacity(rows.len());
    let mut bad = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        match line(row) {
            Ok(()) => {
                let _ = write_line(&mut text, row);
                lines.push(index);
            }
            Err(why) => bad.push(BadRow { id: row.id, why }),
        }
    }
    (text, lines, bad)
}

/// Checks that `row` makes exactly one record line.
fn line(row: &Row) -> Result<(), String> {
    let name = &row.name;
    let plain = |c: char| !c.is_whitespace() && !matches!(c, ';' | '(' | ')' | '"');
    if name.is_empty() || name.starts_with('$') || !name.chars().all(plain) {
        return Err(format!("name {name:?} is not a record name"));
    }
    let rtype = &row.rtype;
    if rtype.is_empty() || !rtype.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("type {rtype:?} is not a record type"));
    }
    if row.content.trim().is_empty() {
        return Err("content is empty".into());
    }
    if !crate::script::one_line(&row.content) {
        return Err(format!(
            "content {:?}: record data is one line, without parentheses outside quotes",
            row.content
        ));
    }
    if row.ttl.is_some_and(|ttl| u32::try_from(ttl).is_err()) {
        return Err(format!("ttl {} is not a TTL", row.ttl.unwrap_or_default()));
    }
    if has_prio(rtype) && row.prio.is_some_and(|p| u16::try_from(p).is_err()) {
        return Err(format!("prio {} is not a priority", row.prio.unwrap_or_default()));
    }
    Ok(())
}

/// True for the types whose first field PowerDNS keeps in `prio`.
fn has_prio(rtype: &str) -> bool {
    rtype.eq_ignore_ascii_case("MX") || rtype.eq_ignore_ascii_case("SRV")
}

/// Writes `row` (checked by [`line`]) as one zone-file line.
fn write_line(text: &mut String, row: &Row) -> std::fmt::Result {
    let dot = if row.name.ends_with('.') { "" } else { "." };
    let ttl = row.ttl.and_then(|t| u32::try_from(t).ok()).unwrap_or(DEFAULT_TTL);
    write!(text, "{}{dot} {ttl} IN {} ", row.name, row.rtype)?;
    if has_prio(&row.rtype) {
        write!(text, "{} ", row.prio.unwrap_or(0))?;
    }
    writeln!(text, "{}", row.content)
}

/// The rows behind the parser's errors, added to `bad`; an error that is not about one
/// row, or too many of them, is the zone's.
fn unread_rows(
    error: &tern_zone::Error,
    lines: &[usize],
    rows: &[Row],
    bad: &mut Vec<BadRow>,
) -> Result<(), String> {
    let errors = error.errors();
    if errors.len() >= MAX_BAD_ROWS {
        return Err(format!("more than {MAX_BAD_ROWS} rows do not read (the first: {error})"));
    }
    for e in errors {
        let row = e
            .position()
            .and_then(|p| lines.get((p.line as usize).checked_sub(2)?))
            .and_then(|&index| rows.get(index));
        let Some(row) = row else { return Err(e.to_string()) };
        let why = e.to_string();
        // The message starts with the made-up file and line: the row's id says where.
        let why = why.split_once(": ").map_or(why.as_str(), |(_, rest)| rest).to_owned();
        bad.push(BadRow { id: row.id, why });
    }
    Ok(())
}

/// Logs the bad rows; with [`OnBadRow::Refuse`] and any of them, the load's error.
fn report_bad(database: &Database, origin: &Name, bad: &[BadRow]) -> Result<(), Error> {
    for row in bad.iter().take(LOGGED_BAD_ROWS) {
        warn!(zone = %origin, database = %database.id, table = "records", id = row.id, "row does not read: {}", row.why);
    }
    if bad.len() > LOGGED_BAD_ROWS {
        warn!(zone = %origin, database = %database.id, "{} more rows of table records do not read", bad.len() - LOGGED_BAD_ROWS);
    }
    match (bad.first(), database.on_bad_row) {
        (Some(first), OnBadRow::Refuse) => Err(fail(
            database,
            format!(
                "{} rows do not read (on-bad-row = \"refuse\"), the first: table records, id {}: {}",
                bad.len(),
                first.id,
                first.why
            ),
        )),
        (Some(_), OnBadRow::Skip) => {
            warn!(zone = %origin, database = %database.id, skipped = bad.len(), "zone loaded without the rows that do not read");
            Ok(())
        }
        (None, _) => Ok(()),
    }
}

fn fail(database: &Database, why: String) -> Error {
    super::fail(database, why)
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
