//! Zones built by Lua scripts (`[[zone]] script`): the script runs in an embedded Lua 5.4
//! (mlua, sources built in) at every load — the start, `ternctl zone-reload`, a reload
//! that finds the script changed — and emits records through a small API (the `api`
//! module) straight into the zone's builder (the `sink` module); the primary's load path
//! commits the zone's difference from the served version like any other change.
//!
//! The API, in the global table `zone`:
//! * `zone.origin`: the zone's name, absolute (`"example.com."`);
//! * `zone.now`: the time of the run, in seconds since the epoch (a serial that rises by
//!   itself, since the script cannot read the clock);
//! * `zone.ttl`: the TTL of records added without one (3600 until the script sets it);
//! * `zone.add(name, type, data [, ttl])`: one record; `name` relative to the origin
//!   unless it ends in a dot, `@` for the apex; `type` a mnemonic (`"A"`, `"MX"`, …);
//!   `data` the record data as a zone file writes it;
//! * `zone.a(name, address [, ttl])`: one A record, the address as text or as an
//!   integer of 32 bits (`10 << 24 | 1` is 10.0.0.1).
//!
//! The sandbox: only the `string`, `table`, `math` and `utf8` libraries and the base
//! functions that touch nothing outside (no `io`, `os`, `package`, `require`, `load`,
//! `dofile`, `loadfile`, `print`, `collectgarbage`); the text of the script only, never
//! precompiled chunks; at most `max-memory` bytes for Lua and as much again for the
//! records emitted; at most `max-instructions` Lua instructions. A script that breaks a
//! rule, fails, or emits a record that does not read is an error naming the script's
//! file and line; the zone keeps what it served.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use mlua::chunk::ChunkMode;
use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Value, VmState};
use tern_wire::Name;
use tern_zone::Loaded;

use crate::error::Error;
pub use crate::plan::Script;

mod api;
mod sink;

use api::Api;
pub(crate) use sink::one_line;
use sink::Sink;

/// The largest script read.
const MAX_SCRIPT_BYTES: u64 = 16 << 20;
/// Instructions between two checks of the budget.
const HOOK_EVERY: u32 = 10_000;

/// Runs `script` for the zone `origin` at `now` (seconds since the epoch) and reads
/// what it emitted: the zone, or why not (with the script's file and line).
pub fn run(script: &Script, origin: &Name, now: u64) -> Result<Loaded, Error> {
    let source = read(&script.path)?;
    execute(script, &source, origin, now)?.finish()
}

/// The script's text, bounded.
fn read(path: &Path) -> Result<String, Error> {
    let why = |e: &dyn std::fmt::Display| fail(path, None, format!("cannot be read: {e}"));
    let meta = std::fs::metadata(path).map_err(|e| why(&e))?;
    if meta.len() > MAX_SCRIPT_BYTES {
        return Err(fail(path, None, format!("larger than {MAX_SCRIPT_BYTES} bytes")));
    }
    std::fs::read_to_string(path).map_err(|e| why(&e))
}

/// Runs the script in a fresh sandbox; what it emitted.
fn execute(script: &Script, source: &str, origin: &Name, now: u64) -> Result<Sink, Error> {
    let lua_error = |e: mlua::Error| lua_failure(&script.path, &e);
    let libs = StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8;
    let lua = Lua::new_with(libs, LuaOptions::default()).map_err(lua_error)?;
    lua.set_memory_limit(script.max_memory).map_err(lua_error)?;
    strip_globals(&lua).map_err(lua_error)?;
    let chunk = script.path.display().to_string();
    budget(&lua, chunk.clone(), script.max_instructions).map_err(lua_error)?;
    let sink = Rc::new(RefCell::new(Sink::new(origin, &script.path, script.max_memory)));
    api::install(&lua, Api { origin, now, chunk }, Rc::clone(&sink)).map_err(lua_error)?;
    let name = format!("@{}", script.path.display());
    lua.load(source).set_name(name).set_mode(ChunkMode::Text).exec().map_err(lua_error)?;
    drop(lua);
    Rc::try_unwrap(sink)
        .map(RefCell::into_inner)
        .map_err(|_| fail(&script.path, None, "the script's records are still in use".into()))
}

/// Removes the base functions that reach outside the sandbox or load code.
fn strip_globals(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    for name in ["dofile", "loadfile", "load", "require", "print", "collectgarbage"] {
        globals.set(name, Value::Nil)?;
    }
    Ok(())
}

/// Stops the script once it has run `max` instructions.
fn budget(lua: &Lua, chunk: String, max: u64) -> mlua::Result<()> {
    let ran = std::cell::Cell::new(0u64);
    let triggers = HookTriggers::new().every_nth_instruction(HOOK_EVERY);
    lua.set_hook(triggers, move |_, debug| {
        ran.set(ran.get().saturating_add(u64::from(HOOK_EVERY)));
        if ran.get() > max {
            let line = debug.current_line().unwrap_or(0);
            return Err(mlua::Error::runtime(format!(
                "{chunk}:{line}: the script ran more than {max} instructions (max-instructions)"
            )));
        }
        Ok(VmState::Continue)
    })
}

/// A Lua failure as an error: the script's line when Lua gave one (its messages start
/// with `file:line:`).
fn lua_failure(path: &Path, error: &mlua::Error) -> Error {
    let text = innermost(error);
    let prefix = format!("{}:", path.display());
    if let Some((line, why)) = text
        .strip_prefix(&prefix)
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(line, why)| Some((line.parse::<usize>().ok()?, why.trim())))
    {
        return fail(path, Some(line), first_line(why));
    }
    // A wrong argument to `zone.add` and the like: the line is in the traceback.
    fail(path, traceback_line(&error.to_string(), &prefix), first_line(&text))
}

/// The first `file:line:` of the script in a traceback.
fn traceback_line(text: &str, prefix: &str) -> Option<usize> {
    text.match_indices(prefix).find_map(|(at, _)| {
        let rest = text.get(at + prefix.len()..)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        rest.get(digits.len()..)?.starts_with(':').then(|| digits.parse().ok()).flatten()
    })
}

/// The message of the error a callback or hook raised, without mlua's wrapping.
fn innermost(error: &mlua::Error) -> String {
    match error {
        mlua::Error::CallbackError { cause, .. } => innermost(cause),
        mlua::Error::RuntimeError(text) | mlua::Error::SyntaxError { message: text, .. } => {
            text.clone()
        }
        mlua::Error::MemoryError(_) => "the script passed its memory limit (max-memory)".into(),
        other => other.to_string(),
    }
}

/// A message's first line (Lua appends a traceback).
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

fn fail(path: &Path, line: Option<usize>, why: String) -> Error {
    Error::Script { file: path.to_path_buf(), line, why }
}

#[cfg(test)]
mod tests;
