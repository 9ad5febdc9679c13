//! `$GENERATE` templates, in BIND's syntax: text in which `$` stands for the iterator.
//!
//! * `$` is the iterator in decimal; `${offset[,width[,base]]}` adds a signed offset,
//!   pads to `width` with zeros, and prints in base `d`, `o`, `x`, `X`, or `n`/`N`
//!   (nibbles: the hexadecimal digits reversed, one label each, as in `ip6.arpa`; the
//!   width counts the dots too, so `${0,4,n}` of 26 is `a.1.`).
//! * `$$` and `\$` are a literal `$`; any other `\X` is kept as it is, for the name or
//!   RDATA parser that reads the result. In a quoted RDATA template `\"` becomes `"`,
//!   so quoted fields can be written inside it.
//!
//! A template is parsed once per directive; expanding it does not allocate beyond the
//! caller's buffer. Where BIND is lax, Tern refuses: an unknown base, a missing `}` and a
//! value that the offset makes negative are errors.

use std::io::Write;

use tern_wire::text::excerpt;

/// Widest field a modifier may ask for.
const MAX_WIDTH: usize = 255;

/// How the iterator is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Decimal,
    Octal,
    Hex,
    HexUpper,
    Nibble,
    NibbleUpper,
}

/// One `$` or `${...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Format {
    offset: i64,
    width: usize,
    base: Base,
}

const DEFAULT_FORMAT: Format = Format { offset: 0, width: 0, base: Base::Decimal };

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    Value(Format),
}

/// A parsed `$GENERATE` owner or RDATA template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses a template token's text (escapes still in place, as the lexer leaves
    /// them); `quoted` when the token was a quoted string.
    pub fn parse(text: &[u8], quoted: bool) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut literal = Vec::new();
        let mut rest = text;
        while let Some((&c, tail)) = rest.split_first() {
            rest = tail;
            match c {
                b'\\' => {
                    let (&escaped, tail) = rest.split_first().ok_or("backslash at the end")?;
                    rest = tail;
                    match escaped {
                        b'$' => literal.push(b'$'),
                        b'"' if quoted => literal.push(b'"'),
                        _ => literal.extend_from_slice(&[b'\\', escaped]),
                    }
                }
                b'$' if rest.first() == Some(&b'$') => {
                    literal.push(b'$');
                    rest = rest.get(1..).unwrap_or_default();
                }
                b'$' => {
                    let (format, tail) = parse_modifier(rest)?;
                    rest = tail;
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Value(format));
                }
                _ => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Template { pieces })
    }

    /// The longest text [`Template::expand`] can produce.
    pub fn max_len(&self) -> usize {
        // Iterator plus offset is below 2^32: at most 11 octal digits or 15 nibble chars.
        const DIGITS: usize = 17;
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.len(),
                Piece::Value(format) => format.width.max(DIGITS),
            })
            .sum()
    }

    /// Appends the template's text for iterator value `value` to `out`.
    pub fn expand(&self, value: u32, out: &mut Vec<u8>) -> Result<(), String> {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.extend_from_slice(text),
                Piece::Value(format) => format.write(value, out)?,
            }
        }
        Ok(())
    }
}

/// Reads an optional `{offset[,width[,base]]}` after a `$`.
fn parse_modifier(rest: &[u8]) -> Result<(Format, &[u8]), String> {
    let Some(body) = rest.strip_prefix(b"{") else {
        return Ok((DEFAULT_FORMAT, rest));
    };
    let end = body.iter().position(|&b| b == b'}').ok_or("'${' without a closing '}'")?;
    let (inside, tail) = body.split_at(end);
    let tail = tail.get(1..).unwrap_or_default();
    let mut parts = inside.split(|&b| b == b',');
    let offset = parts.next().unwrap_or_default();
    let offset = std::str::from_utf8(offset)
        .ok()
        .and_then(|s| s.parse::<i32>().ok())
        .ok_or_else(|| format!("bad offset '{}' in ${{...}}", excerpt(offset)))?;
    let width = match parts.next() {
        None => 0,
        Some(w) => std::str::from_utf8(w)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|w| *w <= MAX_WIDTH)
            .ok_or_else(|| format!("bad width '{}' in ${{...}}", excerpt(w)))?,
    };
    let base = match parts.next() {
        None => Base::Decimal,
        Some(b) => parse_base(b)?,
    };
    if parts.next().is_some() {
        return Err("too many fields in ${offset,width,base}".to_owned());
    }
    Ok((Format { offset: i64::from(offset), width, base }, tail))
}

fn parse_base(text: &[u8]) -> Result<Base, String> {
    Ok(match text {
        b"d" => Base::Decimal,
        b"o" => Base::Octal,
        b"x" => Base::Hex,
        b"X" => Base::HexUpper,
        b"n" => Base::Nibble,
        b"N" => Base::NibbleUpper,
        _ => {
            let shown = excerpt(text);
            return Err(format!(
                "unknown base '{shown}' in ${{...}} (expected d, o, x, X, n or N)"
            ));
        }
    })
}

impl Format {
    /// Appends the iterator `value` in this format.
    fn write(self, value: u32, out: &mut Vec<u8>) -> Result<(), String> {
        let shifted = i64::from(value) + self.offset;
        let v = u64::try_from(shifted)
            .map_err(|_| format!("iterator {value} with offset {} is negative", self.offset))?;
        let w = self.width;
        // Writing into a Vec cannot fail.
        let _ = match self.base {
            Base::Decimal => write!(out, "{v:0w$}"),
            Base::Octal => write!(out, "{v:0w$o}"),
            Base::Hex => write!(out, "{v:0w$x}"),
            Base::HexUpper => write!(out, "{v:0w$X}"),
            Base::Nibble => {
                write_nibbles(v, w, b"0123456789abcdef", out);
                Ok(())
            }
            Base::NibbleUpper => {
                write_nibbles(v, w, b"0123456789ABCDEF", out);
                Ok(())
            }
        };
        Ok(())
    }
}

/// Nibble mode: hexadecimal digits from the least significant, separated by dots, padded
/// with `0` digits (and dots) until `width` characters have been written.
fn write_nibbles(mut value: u64, width: usize, digits: &[u8; 16], out: &mut Vec<u8>) {
    let mut left = width;
    loop {
        let digit = digits.get((value & 0xF) as usize).copied().unwrap_or(b'0');
        out.push(digit);
        left = left.saturating_sub(1);
        value >>= 4;
        if value == 0 && left == 0 {
            return;
        }
        out.push(b'.');
        left = left.saturating_sub(1);
        if value == 0 && left == 0 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(template: &str, value: u32) -> String {
        let t = Template::parse(template.as_bytes(), false).unwrap();
        let mut out = Vec::new();
        t.expand(value, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn plain_and_escaped_dollars() {
        assert_eq!(expand("host-$", 7), "host-7");
        assert_eq!(expand("$.0", 127), "127.0");
        assert_eq!(expand("SERVER$.EXAMPLE.", 2), "SERVER2.EXAMPLE.");
        assert_eq!(expand(r"a\$$$b$", 1), "a$$b1");
        assert_eq!(expand(r"x\\$", 2), r"x\\2");
        assert_eq!(expand(r"a\.b$", 3), r"a\.b3");
        assert_eq!(expand("no-iterator", 3), "no-iterator");
    }

    #[test]
    fn modifiers_as_bind_prints_them() {
        // Checked against BIND 9.18's named-checkzone.
        assert_eq!(expand("x${-10,3,d}", 10), "x000");
        assert_eq!(expand("y${5,4,x}", 10), "y000f");
        assert_eq!(expand("z${0,0,X}", 10), "zA");
        assert_eq!(expand("o${0,0,o}", 10), "o12");
        assert_eq!(expand("${5}", 1), "6");
        assert_eq!(expand("${1,2,x}", 1), "02");
    }

    #[test]
    fn nibble_mode_counts_dots_in_the_width() {
        // Checked against BIND 9.18: 26 = 0x1a.
        let cases = [(0, "a.1"), (1, "a.1"), (3, "a.1"), (4, "a.1."), (5, "a.1.0"), (6, "a.1.0.")];
        for (width, want) in cases {
            assert_eq!(expand(&format!("${{0,{width},n}}"), 26), want, "width {width}");
        }
        assert_eq!(expand("${0,8,N}", 26), "A.1.0.0.");
        assert_eq!(expand("${0,0,n}", 0), "0");
        assert_eq!(expand("${0,3,n}", 0), "0.0");
    }

    #[test]
    fn quoted_templates_unescape_quotes() {
        let t = Template::parse(br#"a \"q$\" \\"#, true).unwrap();
        let mut out = Vec::new();
        t.expand(4, &mut out).unwrap();
        assert_eq!(out, br#"a "q4" \\"#);
    }

    #[test]
    fn bad_templates_are_refused() {
        assert!(Template::parse(b"a${1", false).unwrap_err().contains("closing"));
        assert!(Template::parse(b"${0,0,z}", false).unwrap_err().contains("unknown base"));
        assert!(Template::parse(b"${x}", false).unwrap_err().contains("bad offset"));
        assert!(Template::parse(b"${0,999}", false).unwrap_err().contains("bad width"));
        assert!(Template::parse(b"${0,1,d,4}", false).unwrap_err().contains("too many"));
        assert!(Template::parse(b"a\\", false).is_err());
        let long = Template::parse("${0,255,d}".repeat(20).as_bytes(), false).unwrap();
        assert_eq!(long.max_len(), 255 * 20);
        assert_eq!(Template::parse(b"ab$", false).unwrap().max_len(), 2 + 17);
        let t = Template::parse(b"${-5}", false).unwrap();
        assert!(t.expand(4, &mut Vec::new()).unwrap_err().contains("negative"));
    }
}
