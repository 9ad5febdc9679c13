//! The key state file (`keys.state`): every key's identity, RFC 7583 timings and DS
//! state, one line each, after a header that names the format. It is replaced
//! atomically ([`storage::replace`](crate::storage::replace)); a temporary file left by
//! a killed write is never read.
//!
//! ```text
//! # tern key state 1
//! next-id 4
//! key 3 tag 12345 alg 13 role zsk created 1800000000 published 1800000000 ready - active 1800000000 retired - removed - ds none -
//! ```
//!
//! Times are seconds since the epoch, `-` for a step not taken; `ds` is `none`,
//! `submitted`, `seen`, `withdrawn` or `gone`, with the time of the change.

use std::fmt::Write as _;
use std::path::Path;

use tern_sign::policy::{DsState, KeyInfo};
use tern_sign::{Algorithm, KeyRole};

use crate::error::{Error, Result};

/// The first line: the format and its version.
pub const HEADER: &str = "# tern key state 1";

/// The largest state file read (a zone has a handful of keys).
pub const MAX_SIZE: u64 = 1 << 20;

/// What the state file holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// The keys.
    pub keys: Vec<KeyInfo>,
    /// The number the next key gets.
    pub next_id: u32,
}

/// The file's text for `state`.
pub fn render(state: &State) -> String {
    let mut out = format!("{HEADER}\nnext-id {}\n", state.next_id);
    for k in &state.keys {
        let time = |t: Option<u64>| t.map_or("-".to_owned(), |t| t.to_string());
        let (ds, at) = match k.ds {
            DsState::None => ("none", None),
            DsState::Submitted { at } => ("submitted", Some(at)),
            DsState::Seen { at } => ("seen", Some(at)),
            DsState::Withdrawn { at } => ("withdrawn", Some(at)),
            DsState::Gone { at } => ("gone", Some(at)),
        };
        let _ = writeln!(
            out,
            "key {} tag {} alg {} role {} created {} published {} ready {} active {} retired {} removed {} ds {ds} {}",
            k.id,
            k.tag,
            k.algorithm.number(),
            role_name(k.role),
            k.created,
            time(k.published),
            time(k.ready),
            time(k.active),
            time(k.retired),
            time(k.removed),
            time(at),
        );
    }
    out
}

/// The role's name in the file.
pub fn role_name(role: KeyRole) -> &'static str {
    match role {
        KeyRole::Ksk => "ksk",
        KeyRole::Zsk => "zsk",
        KeyRole::Csk => "csk",
    }
}

/// Reads the file's text; errors name `file` and the line.
pub fn parse(file: &Path, text: &str) -> Result<State> {
    let fail =
        |line: usize, why: String| Error::KeyStore { file: file.to_owned(), line: Some(line), why };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, HEADER)) => {}
        _ => return Err(fail(1, format!("not a Tern key state file (expected `{HEADER}`)"))),
    }
    let mut state = State::default();
    let mut next_id = None;
    for (number, line) in lines {
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        match words.first() {
            None => continue,
            Some(&"next-id") if words.len() == 2 && next_id.is_none() => {
                let id = words.get(1).and_then(|w| w.parse().ok());
                next_id = Some(id.ok_or_else(|| fail(number, "next-id: not a number".into()))?);
            }
            Some(&"key") => {
                let key = parse_key(&words).map_err(|why| fail(number, why))?;
                if state.keys.iter().any(|k| k.id == key.id) {
                    return Err(fail(number, format!("key {} listed twice", key.id)));
                }
                state.keys.push(key);
            }
            Some(_) => return Err(fail(number, "expected `next-id N` once, or `key …`".into())),
        }
    }
    state.next_id = next_id.ok_or_else(|| fail(1, "no next-id line".into()))?;
    if state.keys.iter().any(|k| k.id >= state.next_id) {
        return Err(fail(2, "next-id is not above every key's id".into()));
    }
    Ok(state)
}

/// The latest time read (9999-12-31 23:59:59 UTC): the policy engine adds intervals
/// to the times, which must not overflow.
pub const MAX_TIME: u64 = 253_402_300_799;

/// The field names of a key line, in order, after `key <id>`.
const FIELDS: [&str; 10] =
    ["tag", "alg", "role", "created", "published", "ready", "active", "retired", "removed", "ds"];

/// One `key` line, split into words.
fn parse_key(words: &[&str]) -> std::result::Result<KeyInfo, String> {
    // key ID, then (name value) pairs, `ds` taking two values.
    if words.len() != 2 + 2 * 10 + 1 {
        return Err(format!("a key line has {} words, not 23", words.len()));
    }
    let value = |i: usize| -> std::result::Result<&str, String> {
        let name = words.get(2 + 2 * i).copied().unwrap_or_default();
        let expected = FIELDS.get(i).copied().unwrap_or_default();
        if name != expected {
            return Err(format!("expected `{expected}`, found `{name}`"));
        }
        Ok(words.get(3 + 2 * i).copied().unwrap_or_default())
    };
    let number = |text: &str| match text.parse::<u64>() {
        Ok(time) if time <= MAX_TIME => Ok(time),
        Ok(_) => Err(format!("`{text}`: a time after the year 9999")),
        Err(_) => Err(format!("`{text}`: not a number")),
    };
    let time = |text: &str| if text == "-" { Ok(None) } else { number(text).map(Some) };
    let id = words.get(1).copied().unwrap_or_default();
    let id = id.parse::<u32>().map_err(|_| format!("`{id}`: not a key id"))?;
    let tag = value(0)?.parse::<u16>().map_err(|_| "tag: not a key tag".to_owned())?;
    let algorithm = value(1)?.parse::<u8>().map_err(|_| "alg: not a number".to_owned())?;
    let algorithm = Algorithm::from_number(algorithm).map_err(|e| e.to_string())?;
    let role = match value(2)? {
        "ksk" => KeyRole::Ksk,
        "zsk" => KeyRole::Zsk,
        "csk" => KeyRole::Csk,
        other => return Err(format!("`{other}`: not a role (ksk, zsk, csk)")),
    };
    let mut key = KeyInfo::new(id, tag, algorithm, role, number(value(3)?)?);
    key.published = time(value(4)?)?;
    key.ready = time(value(5)?)?;
    key.active = time(value(6)?)?;
    key.retired = time(value(7)?)?;
    key.removed = time(value(8)?)?;
    let at = time(words.get(22).copied().unwrap_or_default())?;
    key.ds = match (value(9)?, at) {
        ("none", None) => DsState::None,
        ("submitted", Some(at)) => DsState::Submitted { at },
        ("seen", Some(at)) => DsState::Seen { at },
        ("withdrawn", Some(at)) => DsState::Withdrawn { at },
        ("gone", Some(at)) => DsState::Gone { at },
        (state, _) => return Err(format!("ds `{state}` with that time: not a DS state")),
    };
    Ok(key)
}
