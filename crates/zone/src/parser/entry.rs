//! One resource-record entry (RFC 1035 §5.1):
//! `[<owner>] [<TTL>] [<class>] <type> <RDATA>`, TTL and class in either order.
//!
//! A token at the very start of a line is always the owner, even when it looks like a type
//! or class (`A A 192.0.2.1`). After it, a token starting with a digit is a TTL, a class
//! mnemonic or `CLASSnnn` is the class, and the first type mnemonic or `TYPEnnn` ends the
//! head: mnemonics of types and classes are disjoint (RFC 1035 §5.1).

use tern_wire::rdata;
use tern_wire::text::{parse_duration, Entry, Lexer, Token};
use tern_wire::{Class, Dname, NameBuf, NameBuilder, Rtype};

use super::driver::{Failure, Parser, Scope};

/// Largest TTL (RFC 2181 §8).
const MAX_TTL: u32 = 0x7FFF_FFFF;

/// The fields between owner and RDATA.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head<'a> {
    /// The TTL, when stated.
    pub ttl: Option<u32>,
    /// The type.
    pub rtype: Rtype,
    /// The type's token, to place messages about the record as a whole.
    pub type_token: Token<'a>,
}

impl Parser<'_, '_> {
    /// Reads a record entry whose owner token (if any) has been taken.
    pub(super) fn record<'t>(
        &mut self,
        lx: &mut Lexer<'t>,
        entry: Entry,
        owner: Option<Token<'t>>,
        scope: &mut Scope<'t>,
    ) -> Result<(), Failure> {
        if let Some(token) = owner {
            if scope.owner_text != Some(token.text) || scope.owner.is_none() {
                scope.owner_text = None;
                let name = self.names.parse_text_in(token.text, Some(&scope.origin));
                let name = name.map_err(|m| bad_name(&token, m))?;
                match scope.owner.as_mut() {
                    Some(owner) => owner.set(name),
                    None => scope.owner = Some(NameBuf::from_dname(name)),
                }
                scope.owner_text = Some(token.text);
            }
        } else if scope.owner.is_none() {
            let message = "the line starts with a blank, which means the previous owner, \
                           but there is no previous record in this file";
            return Err(tern_wire::Error::syntax(entry.line, 1, message).into());
        }
        let head = self.read_head(lx)?;
        let ttl = self.record_ttl(head, scope);
        self.rdata.clear();
        rdata::parse_text(head.rtype, lx, Some(&scope.origin), &mut self.rdata)?;
        if lx.incomplete() {
            // The entry runs past this chunk of the file: read it again with the rest.
            return Err(lx.error_here("entry continues in the next chunk").into());
        }
        match scope.owner.as_ref() {
            Some(owner) => self.emit(owner, head.rtype, ttl, entry.line),
            None => Ok(()), // checked above
        }
    }

    /// Reads `[TTL] [class] type` (TTL and class in either order).
    pub(super) fn read_head<'a>(&mut self, lx: &mut Lexer<'a>) -> Result<Head<'a>, Failure> {
        let mut ttl = None;
        let mut class = None;
        loop {
            let token = lx.expect("a record type")?;
            if token.text.first().is_some_and(u8::is_ascii_digit) {
                if ttl.is_some() {
                    return Err(token.error("a second TTL: expected a record type").into());
                }
                ttl = Some(self.ttl_value(&token)?);
            } else if let Some(value) = Class::from_mnemonic(token.text) {
                if class.is_some() {
                    return Err(token.error("a second class: expected a record type").into());
                }
                class = Some(self.check_class(value, &token)?);
            } else if let Some(rtype) = Rtype::from_mnemonic(token.text) {
                check_type(rtype, &token)?;
                return Ok(Head { ttl, rtype, type_token: token });
            } else {
                return Err(token.error(unknown_head_message(&token)).into());
            }
        }
    }

    /// The TTL of a record: as stated (and remembered, RFC 1035 §5.1), else implicit.
    pub(super) fn record_ttl(&mut self, head: Head<'_>, scope: &mut Scope<'_>) -> u32 {
        match head.ttl {
            Some(ttl) => {
                scope.last_ttl = Some(ttl);
                ttl
            }
            None => self.implicit_ttl(scope, &head.type_token),
        }
    }

    /// Reads a TTL token. Values above 2^31-1 are taken as zero with a warning, as
    /// RFC 2181 §8 says and BIND does; values above 2^32-1 are errors.
    pub(super) fn ttl_value(&mut self, token: &Token<'_>) -> Result<u32, tern_wire::Error> {
        let ttl = parse_duration(token.text).ok_or_else(|| {
            token.error(format!(
                "expected a TTL (seconds, or units as in 1w2d3h4m5s, at most 2147483647), found '{}'",
                token.display()
            ))
        })?;
        if ttl > MAX_TTL {
            self.warn(token, format!("TTL {ttl} is above 2^31-1 and is taken as 0 (RFC 2181 §8)"));
            return Ok(0);
        }
        Ok(ttl)
    }

    /// A stated class must be the zone's.
    fn check_class(&self, class: Class, token: &Token<'_>) -> Result<Class, tern_wire::Error> {
        if class != self.options.class {
            let zone = self.options.class;
            return Err(token.error(format!("class {class} in a zone of class {zone}")));
        }
        Ok(class)
    }
}

/// Query-only types cannot be stored in a zone (RFC 6895 §3.1).
fn check_type(rtype: Rtype, token: &Token<'_>) -> Result<(), tern_wire::Error> {
    if rtype.is_meta() {
        return Err(token.error(format!("{rtype} is a query type, not a record type")));
    }
    Ok(())
}

/// The message for a token that is neither TTL, class nor type.
fn unknown_head_message(token: &Token<'_>) -> String {
    let shown = token.display();
    if token.text.first() == Some(&b'$') {
        return format!(
            "expected a record type, found '{shown}' (directives start at the beginning of a line)"
        );
    }
    format!("expected a record type (or a TTL or class before it), found '{shown}'")
}

/// Reads a name token relative to `origin`.
pub(super) fn parse_name(token: &Token<'_>, origin: &Dname) -> Result<NameBuf, tern_wire::Error> {
    NameBuilder::parse_text(token.text, Some(origin)).map_err(|m| bad_name(token, m))
}

/// The error for a name token that does not parse.
fn bad_name(token: &Token<'_>, message: &str) -> tern_wire::Error {
    token.error(format!("bad name '{}': {message}", token.display()))
}
