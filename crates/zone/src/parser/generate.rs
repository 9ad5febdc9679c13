//! `$GENERATE <start>-<stop>[/<step>] <owner> [<TTL>] [<class>] <type> <RDATA>` — BIND's
//! extension for series of records (RFC 2317 reverse delegations, host ranges).
//!
//! The owner and the RDATA are [`Template`]s; the RDATA is one token (quote it when it
//! has several fields, as BIND requires). Each generated record goes through the same
//! name and RDATA parsers as a written one. The TTL follows the usual rules, and a stated
//! TTL counts as the last one stated; the previous owner is not changed (as in BIND).
//!
//! Bounds for untrusted input: `start`, `stop`, `step` are at most 2^31-1 (BIND's range),
//! all the `$GENERATE`s of a parse make at most `Options::max_generated_records` records,
//! and templates and their expansions are at most a few KiB, so the work per directive
//! is bounded before it starts.

use tern_wire::rdata;
use tern_wire::text::{Lexer, Token};
use tern_wire::{NameBuilder, Rtype};

use super::driver::{Failure, Parser, Scope};
use super::template::Template;

/// Longest text a template may expand to (checked before any record is made).
const MAX_EXPANDED: usize = 4096;
/// Largest `start`, `stop` and `step`.
const MAX_RANGE: u32 = 0x7FFF_FFFF;

/// `start-stop/step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    start: u32,
    stop: u32,
    step: u32,
}

impl Range {
    fn parse(token: &Token<'_>) -> Result<Range, tern_wire::Error> {
        let bad = || {
            token.error(format!(
                "expected a range start-stop or start-stop/step (0..=2147483647), found '{}'",
                token.display()
            ))
        };
        let (bounds, step) = match token.text.iter().position(|&b| b == b'/') {
            Some(i) => (token.text.get(..i), token.text.get(i + 1..)),
            None => (Some(token.text), None),
        };
        let bounds = bounds.ok_or_else(bad)?;
        let dash = bounds.iter().position(|&b| b == b'-').ok_or_else(bad)?;
        let number = |text: Option<&[u8]>| {
            let text = text.ok_or_else(bad)?;
            Token::new(text, token.quoted(), token.line(), token.column())
                .number::<u32>("a number")
                .ok()
                .filter(|v| *v <= MAX_RANGE)
                .ok_or_else(bad)
        };
        let start = number(bounds.get(..dash))?;
        let stop = number(bounds.get(dash + 1..))?;
        let step = match step {
            Some(text) => number(Some(text))?,
            None => 1,
        };
        if start > stop || step == 0 {
            return Err(token.error(format!(
                "range '{}' is empty: start must not exceed stop, and step must be at least 1",
                token.display()
            )));
        }
        Ok(Range { start, stop, step })
    }

    fn count(self) -> u64 {
        u64::from((self.stop - self.start) / self.step) + 1
    }

    fn values(self) -> impl Iterator<Item = u32> {
        (self.start..=self.stop).step_by(self.step as usize)
    }
}

/// The parsed parts of one `$GENERATE`.
struct Directive<'a> {
    owner: Template,
    owner_token: Token<'a>,
    rdata: Template,
    rdata_token: Token<'a>,
    rtype: Rtype,
    ttl: u32,
    line: u32,
}

impl Parser<'_, '_> {
    /// Reads a `$GENERATE` entry and makes its records.
    pub(super) fn generate(
        &mut self,
        keyword: &Token<'_>,
        lx: &mut Lexer<'_>,
        scope: &mut Scope<'_>,
    ) -> Result<(), Failure> {
        let range_token = lx.expect("a range (start-stop[/step]) after $GENERATE")?;
        let range = Range::parse(&range_token)?;
        let owner_token = lx.expect("an owner name template")?;
        let head = self.read_head(lx)?;
        let rdata_token = lx.expect("an RDATA template (quoted if it has several fields)")?;
        lx.expect_end()?;
        let owner = template(&owner_token)?;
        let rdata = template(&rdata_token)?;
        self.reserve_generated(&range_token, range.count())?;
        let ttl = self.record_ttl(head, scope);
        let directive = Directive {
            owner,
            owner_token,
            rdata,
            rdata_token,
            rtype: head.rtype,
            ttl,
            line: keyword.line(),
        };
        let mut text = Vec::new();
        for value in range.values() {
            self.generate_one(&directive, value, scope, &mut text)?;
        }
        Ok(())
    }

    /// Counts `count` records against `Options::max_generated_records`.
    fn reserve_generated(&mut self, at: &Token<'_>, count: u64) -> Result<(), tern_wire::Error> {
        let limit = self.options.max_generated_records;
        let total = self.generated.saturating_add(count);
        if total > limit {
            return Err(at.error(format!(
                "$GENERATE would make {count} records, {total} in all, over the limit of {limit}"
            )));
        }
        self.generated = total;
        Ok(())
    }

    /// Makes the record for one iterator value.
    fn generate_one(
        &mut self,
        d: &Directive<'_>,
        value: u32,
        scope: &Scope<'_>,
        text: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        expand(&d.owner, &d.owner_token, value, text)?;
        let owner = NameBuilder::parse_text(text, Some(&scope.origin)).map_err(|m| {
            d.owner_token.error(format!("generated owner '{}' is not a name: {m}", shown(text)))
        })?;
        expand(&d.rdata, &d.rdata_token, value, text)?;
        self.rdata.clear();
        let mut fields = Lexer::for_fields(text);
        rdata::parse_text(d.rtype, &mut fields, Some(&scope.origin), &mut self.rdata).map_err(
            |e| {
                let reason = match e {
                    tern_wire::Error::Syntax { message, .. } => message,
                    other => other.to_string(),
                };
                d.rdata_token.error(format!("generated RDATA '{}': {reason}", shown(text)))
            },
        )?;
        self.emit(&owner, d.rtype, d.ttl, d.line)
    }
}

/// Parses a template token, checking the size of what it can expand to.
fn template(token: &Token<'_>) -> Result<Template, tern_wire::Error> {
    if token.text.len() > MAX_EXPANDED {
        return Err(token.error(format!("$GENERATE template longer than {MAX_EXPANDED} bytes")));
    }
    let template = Template::parse(token.text, token.quoted()).map_err(|m| token.error(m))?;
    if template.max_len() > MAX_EXPANDED {
        return Err(token.error(format!("$GENERATE template can expand past {MAX_EXPANDED} bytes")));
    }
    Ok(template)
}

/// Expands a template into `text` (cleared first).
fn expand(
    template: &Template,
    token: &Token<'_>,
    value: u32,
    text: &mut Vec<u8>,
) -> Result<(), tern_wire::Error> {
    text.clear();
    template.expand(value, text).map_err(|m| token.error(m))
}

/// Expanded text for messages.
fn shown(text: &[u8]) -> String {
    Token::whole(text).display()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str) -> Result<Range, tern_wire::Error> {
        Range::parse(&Token::whole(text.as_bytes()))
    }

    #[test]
    fn ranges() {
        assert_eq!(range("1-127").unwrap(), Range { start: 1, stop: 127, step: 1 });
        assert_eq!(range("0-10/5").unwrap().values().collect::<Vec<_>>(), [0, 5, 10]);
        assert_eq!(range("0-11/5").unwrap().count(), 3);
        assert_eq!(range("7-7").unwrap().count(), 1);
        assert_eq!(range("0-2147483647").unwrap().count(), 1 << 31);
        for bad in ["5-1", "1-2/0", "1", "-1", "1-", "a-b", "0-2147483648", "1-2/", "1-2/x", "1--2"]
        {
            assert!(range(bad).is_err(), "{bad}");
        }
    }
}
