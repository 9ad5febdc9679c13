//! The `zone` table a script sees: `origin`, `now`, `ttl`, and the functions that add
//! records, `zone.add(name, type, data [, ttl])` for any type and `zone.a(name, address
//! [, ttl])` for an address given as text or as a 32-bit integer (so that a script
//! making many addresses need not build their text). Each call hands its arguments to
//! the [`Sink`], borrowing Lua's strings (nothing is copied or allocated per call), and
//! an error names the script's line of the call.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, LuaString, Table, Value};
use tern_wire::Name;

use super::sink::Sink;

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
    zone.set("ttl", DEFAULT_TTL)?;
    let ttl = Ttl { table: zone.clone(), key: lua.create_string("ttl")? };
    zone.set("add", add(lua, ttl.clone(), api.chunk.clone(), Rc::clone(&sink))?)?;
    zone.set("a", a(lua, ttl, api.chunk, sink)?)?;
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
        move |lua, (name, rtype, data, given): (LuaString, LuaString, LuaString, Option<u32>)| {
            let ttl = ttl.or(given)?;
            let line = line_of_call(lua);
            let (name, rtype, data) = (name.as_bytes(), rtype.as_bytes(), data.as_bytes());
            let added = sink.borrow_mut().add_text((&name, &rtype, &data), ttl, line);
            added.map_err(|why| failure(&chunk, line, "zone.add", &why))
        },
    )
}

/// `zone.a(name, address [, ttl])`: the address as text (`"192.0.2.1"`) or as an
/// integer of 32 bits, the first octet the most significant (`0xC0000201`).
fn a(lua: &Lua, ttl: Ttl, chunk: String, sink: Rc<RefCell<Sink>>) -> mlua::Result<mlua::Function> {
    lua.create_function(move |lua, (name, address, given): (LuaString, Value, Option<u32>)| {
        let ttl = ttl.or(given)?;
        let line = line_of_call(lua);
        let name = name.as_bytes();
        let mut sink = sink.borrow_mut();
        let added = match ipv4(&address) {
            Some(Ok(octets)) => sink.add_a(&name, octets, ttl, line),
            Some(Err(text)) => sink.add_text((&name, b"A", &text.as_bytes()), ttl, line),
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
    let integer = match value {
        Value::Integer(i) => *i,
        Value::Number(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n) => {
            *n as i64
        }
        Value::String(text) => return Some(Err(text.clone())),
        _ => return None,
    };
    u32::try_from(integer).ok().map(|a| Ok(a.to_be_bytes()))
}

/// A value as a message shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.type_name().to_owned(),
    }
}

/// Reads `zone.ttl` for a call that gives no TTL.
#[derive(Clone)]
struct Ttl {
    table: Table,
    /// The key, made once (not a new Lua string at every call).
    key: LuaString,
}

impl Ttl {
    /// The TTL `given`, else `zone.ttl`.
    fn or(&self, given: Option<u32>) -> mlua::Result<u32> {
        match given {
            Some(ttl) => Ok(ttl),
            None => self.table.raw_get(&self.key),
        }
    }
}

/// The script line of the call being made (0 when Lua does not know it).
fn line_of_call(lua: &Lua) -> u32 {
    let line = lua.inspect_stack(1, |d| d.current_line()).flatten().unwrap_or(0);
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// An error raised in the script at `line` of `chunk`, by `function`.
fn failure(chunk: &str, line: u32, function: &str, why: &str) -> mlua::Error {
    mlua::Error::runtime(format!("{chunk}:{line}: {function}: {why}"))
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;
