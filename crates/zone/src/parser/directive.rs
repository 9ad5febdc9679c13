//! The control entries of a zone file: `$ORIGIN` and `$TTL` here, `$INCLUDE` in
//! [`super::include`], `$GENERATE` in [`super::generate`].
//!
//! Directives are recognised only at the start of a line and in any letter case.

use tern_wire::text::{Lexer, Token};

use super::driver::{Failure, Parser, Scope};
use super::entry::parse_name;

impl Parser<'_, '_> {
    /// Runs the directive named by `keyword` (a token starting with `$`).
    pub(super) fn directive(
        &mut self,
        keyword: &Token<'_>,
        lx: &mut Lexer<'_>,
        scope: &mut Scope<'_>,
    ) -> Result<(), Failure> {
        let name = keyword.text;
        if name.eq_ignore_ascii_case(b"$ORIGIN") {
            origin(lx, scope)
        } else if name.eq_ignore_ascii_case(b"$TTL") {
            self.default_ttl(lx, scope)
        } else if name.eq_ignore_ascii_case(b"$INCLUDE") {
            self.include(keyword, lx, scope)
        } else if name.eq_ignore_ascii_case(b"$GENERATE") {
            self.generate(keyword, lx, scope)
        } else {
            let message = format!(
                "unknown directive '{}' (expected $ORIGIN, $TTL, $INCLUDE or $GENERATE)",
                keyword.display()
            );
            Err(keyword.error(message).into())
        }
    }

    /// `$TTL <ttl>`: the TTL of later records that state none (RFC 2308 §4).
    fn default_ttl(&mut self, lx: &mut Lexer<'_>, scope: &mut Scope<'_>) -> Result<(), Failure> {
        let token = lx.expect("a TTL after $TTL")?;
        let ttl = self.ttl_value(&token)?;
        lx.expect_end()?;
        scope.default_ttl = Some(ttl);
        Ok(())
    }
}

/// `$ORIGIN <name>`: a relative name is taken relative to the current origin, as BIND,
/// Knot DNS and NSD do (RFC 1035 §5.1 does not say).
fn origin(lx: &mut Lexer<'_>, scope: &mut Scope<'_>) -> Result<(), Failure> {
    let token = lx.expect("a domain name after $ORIGIN")?;
    let origin = parse_name(&token, &scope.origin)?;
    lx.expect_end()?;
    scope.set_origin(origin);
    Ok(())
}
