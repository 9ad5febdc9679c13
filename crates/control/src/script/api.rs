//! The `zone` table a script sees: `origin`, `now`, `ttl`, and the functions that add
//! records, `zone.add(name, type, data [, ttl])` for any type and `zone.a(name, address
//! [, ttl])` for an address given as text or as a 32-bit integer (so that a script
//! making many addresses need not build their text). Each call hands its arguments to
//! the [`Sink`], and an error names the script's line of the call. Strings are taken as
//! bytes copied out of Lua (`BString`): in mlua that costs fewer instructions than holding
//! a reference to the Lua string, and a name need not be UTF-8.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::{BString, Lua, LuaString, Table, Value};
use tern_wire::Name;
use tern_zone::records::MAX_TTL;

use super::sink::{Sink, NOT_READ};

/// The default TTL of records added without one.
pub(super) const DEFAULT_TTL: u32 = 3600;

/// What the `zone` table is made from.
pub(super) struct Api<'a> {
    pub origin: &'a Name,
    pub now: u64,
    /// The script's name in messages.
    pub chunk: String,
}

/// Sets the global `zone` table: origin, now, ttl, add and a.
pub(super) fn install(lua: &Lua, api: Api<'_>, sink: Rc<RefCell<Sink>>) -> mlua::Result<()> {
    let zone = lua.create_table()?;
    zone.set("origin", api.origin.to_string())?;
    zone.set("now", api.now)?;
    let ttl = Ttl(Rc::new(Cell::new(DEFAULT_TTL)));
    zone.set("add", add(lua, ttl.clone(), api.chunk.clone(), Rc::clone(&sink))?)?;
    zone.set("a", a(lua, ttl.clone(), api.chunk, sink)?)?;
    zone.set_metatable(Some(ttl.metatable(lua)?))?;
    lua.globals().set("zone", zone)
}

/// `zone.add(name, type, data [, ttl])`.
fn add(
    lua: &Lua,
    ttl: Ttl,
    chunk: String,
    sink: Rc<RefCell<Sink>>,
) -> mlua::Result<mlua::Function> {
    lua.create_function(
        move |lua, (name, rtype, data, given): (BString, BString, BString, Option<u32>)| {
            let ttl = ttl.or(given)?;
            let line = line_of_call(lua);
            let fields = (name.as_slice(), rtype.as_slice(), data.as_slice());
            let added = sink.borrow_mut().add_text(fields, ttl, line);
            added.map_err(|why| failure(&chunk, line, "zone.add", &why))
        },
    )
}

/// `zone.a(name, address [, ttl])`: the address as text (`"192.0.2.1"`) or as an
/// integer of 32 bits, the first octet the most significant (`0xC0000201`).
fn a(lua: &Lua, ttl: Ttl, chunk: String, sink: Rc<RefCell<Sink>>) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, (name, address, given): (BString, Value, Option<u32>)| {
        let ttl = ttl.or(given)?;
        let line = line_of_call(lua);
        let name = name.as_slice();
        let mut sink = sink.borrow_mut();
        let added = match ipv4(&address) {
            Some(Ok(octets)) => sink.add_a(name, octets, ttl, line),
            Some(Err(text)) => sink.add_text((name, b"A", &text.as_bytes()), ttl, line),
            None => Err(format!(
                "the address is text or an integer from 0 to 4294967295, not {}",
                shown(&address)
            )),
        };
        added.map_err(|why| failure(&chunk, line, "zone.a", &why))
    })
}

/// An address argument: `Ok` with the octets of an integer, `Err` with text to read;
/// `None` for anything else (a negative or larger number, a fraction, a table…).
fn ipv4(value: &Value) -> Option<Result<[u8; 4], LuaString>> {
    if let Value::String(text) = value {
        return Some(Err(text.clone()));
    }
    let integer = whole(value)?;
    u32::try_from(integer).ok().map(|a| Ok(a.to_be_bytes()))
}

/// A whole number: an integer, or a float without a fraction within the integers' range.
fn whole(value: &Value) -> Option<i64> {
    match value {
        Value::Integer(i) => Some(*i),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 2f64.powi(63) => Some(*n as i64),
        _ => None,
    }
}

/// A value as a message shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.type_name().to_owned(),
    }
}

/// `zone.ttl`, kept on the Rust side: the table's metatable reads and sets it, so that a
/// call without a TTL does not look it up in the table.
#[derive(Clone)]
struct Ttl(Rc<Cell<u32>>);

impl Ttl {
    /// The TTL `given`, else `zone.ttl`.
    fn or(&self, given: Option<u32>) -> mlua::Result<u32> {
        Ok(given.unwrap_or_else(|| self.0.get()))
    }

    /// `__index` and `__newindex` for `ttl`; other keys are the table's own.
    fn metatable(&self, lua: &Lua) -> mlua::Result<Table> {
        let meta = lua.create_table()?;
        let ttl = Rc::clone(&self.0);
        let index = move |_: &Lua, (_, key): (Table, LuaString)| {
            Ok((key.as_bytes().as_ref() == b"ttl").then(|| ttl.get()))
        };
        meta.set("__index", lua.create_function(index)?)?;
        let ttl = Rc::clone(&self.0);
        let set = move |_: &Lua, (table, key, value): (Table, Value, Value)| {
            if key.as_string().is_none_or(|k| k.as_bytes().as_ref() != b"ttl") {
                return table.raw_set(key, value);
            }
            match whole(&value).and_then(|v| u32::try_from(v).ok()).filter(|v| *v <= MAX_TTL) {
                Some(v) => {
                    ttl.set(v);
                    Ok(())
                }
                None => Err(mlua::Error::runtime(format!(
                    "zone.ttl is an integer from 0 to {MAX_TTL}, not {}",
                    shown(&value)
                ))),
            }
        };
        meta.set("__newindex", lua.create_function(set)?)?;
        Ok(meta)
    }
}

/// The script line of the call being made (0 when Lua does not know it).
fn line_of_call(lua: &Lua) -> u32 {
    let line = lua.inspect_stack(1, |d| d.current_line()).flatten().unwrap_or(0);
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// An error raised in the script at `line` of `chunk`, by `function`.
/// Data that does not read is said first, as the zone-file reader said it before records
/// were built from the calls: `file:line: a record that does not read: zone.add: …`.
fn failure(chunk: &str, line: u32, function: &str, why: &str) -> mlua::Error {
    match why.strip_prefix(NOT_READ) {
        Some(rest) => mlua::Error::runtime(format!("{chunk}:{line}: {NOT_READ}{function}: {rest}")),
        None => mlua::Error::runtime(format!("{chunk}:{line}: {function}: {why}")),
    }
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;
