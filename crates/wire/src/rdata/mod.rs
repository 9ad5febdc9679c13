//! Resource record data (RDATA).
//!
//! RDATA is held in uncompressed wire form everywhere in Tern (zones, changesets,
//! journals); this module converts it from and to presentation format, checks it, puts it
//! in DNSSEC canonical form, and offers a typed view ([`Rdata`]).
//!
//! * [`parse_text`] reads one record's RDATA fields from a [`Lexer`] entry straight into
//!   wire form — the zone loader's fast path, which builds no typed value. The RFC 3597 §5
//!   generic form `\# <length> <hex>` is accepted for every type, and checked against the
//!   type's format when the type is known.
//! * [`write_text`] prints wire RDATA in presentation format, falling back to the generic
//!   form for unknown types and for data its type's text form cannot express.
//! * [`validate`] checks wire RDATA against its type's format without allocating.
//! * [`canonical_wire`] lower-cases embedded names where RFC 4034 §6.2 says so.
//! * [`Rdata`] decodes to and encodes from typed structs with public fields.
//!
//! Each layout is declared once (see [`format`]): its fields' kinds give the text parser,
//! printer, checker, decoder and encoder, and `typed`'s table maps type codes to
//! layouts for both the typed enum and the text dispatch.

pub mod fields;
pub mod shape;

mod address;
mod basic;
mod bitmap;
mod certs;
mod dnssec;
pub(crate) mod encoding;
mod format;
mod gateway;
mod generic;
mod kinds;
mod legacy;
mod loc;
mod nsec3;
mod services;
mod svcb;
mod time;
pub use time::{days_from_civil, sig_time_text};
mod typed;
mod zone_sync;

use std::fmt::Write;

use crate::error::{Error, Result};
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::Rtype;

pub use address::{Apl, AplItem, Eui48, Eui64, Nid, L32, L64};
pub use basic::{Aaaa, Exchange, Hinfo, Isdn, NamePair, Px, Soa, Target, Txt, A, X25};
pub use certs::{Cert, Dhcid, Hip, Openpgpkey, Sshfp, Tlsa};
pub use dnssec::{Dnskey, Ds, Nsec, Nxt, Rkey, Rrsig};
pub use fields::RdataReader;

/// `secs` (seconds since the epoch) as `YYYYMMDDHHmmSS` in UTC, as RRSIG times are
/// written (RFC 4034 §3.2).
pub fn date_text(secs: u32) -> String {
    let mut out = String::with_capacity(14);
    time::write_sig_time(secs, &mut out);
    out
}
pub use gateway::{Amtrelay, Gateway, Ipseckey};
pub use kinds::CharString;
pub use legacy::{Gpos, Nsap, Wks, WksService, A6, WKS_SERVICES};
pub use loc::Loc;
pub use nsec3::{Nsec3, Nsec3param};
pub use services::{Caa, Doa, Naptr, Srv, Uri};
pub use shape::{Field, Shape};
pub use svcb::{SvcParam, Svcb};
pub use typed::Rdata;
pub use zone_sync::{Csync, Zonemd};

/// Reads presentation-format fields of one layout into wire form.
type ParseFn = fn(&mut Lexer<'_>, Option<&Dname>, &mut Vec<u8>) -> Result<()>;
/// Prints wire-form RDATA of one layout; fails if the data breaks the layout.
type PrintFn = fn(&mut RdataReader<'_>, &mut String) -> Result<()>;
/// Checks wire-form RDATA of one layout.
type CheckFn = fn(&mut RdataReader<'_>) -> Result<()>;

/// The presentation codec and checker of one layout.
pub(crate) struct Codec {
    parse: ParseFn,
    print: PrintFn,
    check: CheckFn,
}

impl Codec {
    pub(crate) const fn new(parse: ParseFn, print: PrintFn, check: CheckFn) -> Codec {
        Codec { parse, print, check }
    }
}

/// The codec for a type, if Tern knows its presentation format.
fn codec(rtype: Rtype) -> Option<&'static Codec> {
    typed::codec(rtype)
}

/// True when Tern knows the presentation format of `rtype` (otherwise only the generic
/// form is read and written).
pub fn is_known(rtype: Rtype) -> bool {
    codec(rtype).is_some()
}

/// Reads one record's RDATA from the rest of the lexer's entry and appends its
/// uncompressed wire form to `out`. Relative names get `origin` appended. On error `out`
/// is left as it was.
pub fn parse_text(
    rtype: Rtype,
    lx: &mut Lexer<'_>,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    let result = parse_text_inner(rtype, lx, origin, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn parse_text_inner(
    rtype: Rtype,
    lx: &mut Lexer<'_>,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    if lx.next_is_escaped(b"\\#")? {
        let token = lx.expect("\\#")?;
        generic::parse(lx, out)?;
        if codec(rtype).is_some() {
            validate(rtype, out.get(start..).unwrap_or(&[])).map_err(|e| {
                token.error(format!("generic RDATA is not valid {rtype} data: {e}"))
            })?;
        }
        return lx.expect_end();
    }
    let Some(codec) = codec(rtype) else {
        return Err(lx.error_here(format!(
            "type {rtype} has no known presentation format: use the generic form \\# <length> <hex>"
        )));
    };
    (codec.parse)(lx, origin, out)?;
    if out.len() - start > usize::from(u16::MAX) {
        return Err(lx.error_here("RDATA longer than 65535 bytes"));
    }
    lx.expect_end()
}

/// Why `text` is not exactly one record's RDATA: a line break ends a record, a `;`
/// outside quotes starts a comment; either would cut the record short unseen.
pub fn not_one_record(text: &str) -> Option<&'static str> {
    if text.contains(['\n', '\r']) {
        return Some("a line break in a record (one text is one record; write \\010 in a string)");
    }
    let (mut quoted, mut escaped) = (false, false);
    for byte in text.bytes() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => quoted = !quoted,
            b';' if !quoted => {
                return Some("a `;` outside quotes starts a comment (write \\; or quote it)")
            }
            _ => {}
        }
    }
    None
}

/// Parses RDATA given as one string (for tests, tools and the control interface): the
/// data of exactly one record, which may span lines inside parentheses and hold
/// comments, as in a zone file; text after its end (another line) is refused, never
/// dropped. Interfaces that take one record a line refuse more with
/// [`not_one_record`].
pub fn parse_str(rtype: Rtype, text: &str, origin: Option<&Dname>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut lexer = Lexer::for_fields(text.as_bytes());
    parse_text(rtype, &mut lexer, origin, &mut out)?;
    if lexer.next_entry()?.is_some() {
        return Err(lexer.error_here("more than one record: text after the end of the first"));
    }
    Ok(out)
}

/// Checks that wire RDATA follows its type's format (known types only; any bytes up to
/// 65535 are valid for an unknown type). Does not allocate.
pub fn validate(rtype: Rtype, rdata: &[u8]) -> Result<()> {
    if rdata.len() > usize::from(u16::MAX) {
        return Err(bad(usize::from(u16::MAX), "RDATA longer than 65535 bytes"));
    }
    let Some(codec) = codec(rtype) else {
        return Ok(());
    };
    let mut reader = RdataReader::new(rdata);
    (codec.check)(&mut reader)?;
    reader.finish()
}

/// Appends the presentation form of wire RDATA to `out`.
pub fn write_text(rtype: Rtype, rdata: &[u8], out: &mut String) {
    let start = out.len();
    if let Some(codec) = codec(rtype) {
        let mut reader = RdataReader::new(rdata);
        if (codec.print)(&mut reader, out).and_then(|()| reader.finish()).is_ok() {
            return;
        }
        out.truncate(start);
    }
    generic::write(rdata, out);
}

/// The presentation form of wire RDATA as a new string.
pub fn to_text(rtype: Rtype, rdata: &[u8]) -> String {
    let mut out = String::new();
    write_text(rtype, rdata, &mut out);
    out
}

/// Appends the DNSSEC canonical form of wire RDATA (RFC 4034 §6.2 as amended by
/// RFC 6840 §5.1): names in the listed types lower-cased, everything else unchanged.
/// Used for signing, verification and duplicate detection. On error `out` is left as
/// it was.
pub fn canonical_wire(rtype: Rtype, rdata: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let shape = rtype.shape();
    if !shape.canonical_lowercase {
        out.extend_from_slice(rdata);
        return Ok(());
    }
    let start = out.len();
    let result = match rtype {
        Rtype::A6 => legacy::a6_canonical(rdata, out),
        _ => lowercase_names(shape, rdata, out),
    };
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Copies `rdata` field by field following `shape`, lower-casing names.
fn lowercase_names(shape: &Shape, rdata: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut rd = RdataReader::new(rdata);
    for field in shape.fields {
        match *field {
            Field::Bytes(n) => out.extend_from_slice(rd.bytes(usize::from(n))?),
            Field::Name => rd.name()?.write_lowercase(out),
            Field::CharString => {
                let s = rd.char_string()?;
                out.push(s.len() as u8); // came from a length byte
                out.extend_from_slice(s);
            }
            Field::Rest => out.extend_from_slice(rd.rest()),
        }
    }
    rd.finish()
}

/// Writes `fmt::Write` output into a String, where it cannot fail.
pub(crate) fn push_fmt(out: &mut String, args: std::fmt::Arguments<'_>) {
    // Writing into a String never fails.
    let _ = out.write_fmt(args);
}

/// Error for a field that cannot be printed because the wire data is malformed.
pub(crate) fn bad(offset: usize, reason: &'static str) -> Error {
    Error::BadRdata { offset, reason }
}

#[cfg(test)]
pub(crate) mod tests;
