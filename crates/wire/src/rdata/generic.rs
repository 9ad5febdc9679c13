//! The generic RDATA form of RFC 3597 §5: `\# <length> <hex>`.

use super::encoding;
use crate::error::Result;
use crate::text::Lexer;

/// Reads `<length> <hex...>` (after the `\#` token); the hex may be split into any
/// number of tokens.
pub(super) fn parse(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<()> {
    let len_token = lx.expect("the RDATA length after \\#")?;
    let len: u16 = len_token.number("the RDATA length (0..65535)")?;
    let got = encoding::parse_hex_tokens(lx, out)?;
    if got != usize::from(len) {
        return Err(len_token.error(format!("\\# says {len} bytes but {got} bytes of hex follow")));
    }
    Ok(())
}

/// Writes `\# <length> <hex>`.
pub(super) fn write(data: &[u8], out: &mut String) {
    super::push_fmt(out, format_args!("\\# {}", data.len()));
    if !data.is_empty() {
        out.push(' ');
        encoding::write_hex(data, out);
    }
}
