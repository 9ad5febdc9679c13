//! The two traits every RDATA codec is built from, and the macro that builds most of them.
//!
//! * A [`FieldKind`] is one field's encoding (a 16-bit number, a name, base64 to the end,
//!   a type bitmap, …): how it reads from presentation tokens into wire bytes, prints from
//!   wire bytes, is checked on the wire, and converts between wire bytes and a typed value.
//! * A [`Format`] is a whole RDATA layout. Most are a plain sequence of fields, declared
//!   with [`rdata_format!`]: the macro writes the public struct and all five conversions
//!   from the field list, so each field kind's code exists once. Layouts whose fields
//!   depend on each other (IPSECKEY, AMTRELAY) or whose text order differs from the wire
//!   order (LOC) implement [`Format`] by hand.
//!
//! The presentation parser writes wire bytes directly: the typed value is never built on
//! the zone-loading path.

use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;

use super::fields::RdataReader;
use super::Codec;

/// One field's encoding. Implemented by zero-sized marker types.
pub(crate) trait FieldKind {
    /// The field's typed value.
    type Value;

    /// Reads the field's presentation tokens and appends its wire form.
    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()>;

    /// Prints the field from wire form. Fails if the wire data is malformed (the caller
    /// then prints the whole RDATA in the generic form).
    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()>;

    /// Checks the field's wire form without building the value.
    fn check(rd: &mut RdataReader<'_>) -> Result<()>;

    /// Reads the typed value from wire form.
    fn decode(rd: &mut RdataReader<'_>) -> Result<Self::Value>;

    /// Appends the wire form of a typed value.
    fn encode(value: &Self::Value, out: &mut Vec<u8>);
}

/// A whole RDATA layout, shared by every type that uses it.
pub(crate) trait Format: Sized {
    /// Reads presentation fields up to the end of the entry and appends wire form.
    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()>;

    /// Prints wire form. The caller checks that all input was consumed.
    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()>;

    /// Checks wire form without allocating. The caller checks that all input was
    /// consumed.
    fn check(rd: &mut RdataReader<'_>) -> Result<()>;

    /// Reads the typed value. The caller checks that all input was consumed.
    fn decode(rd: &mut RdataReader<'_>) -> Result<Self>;

    /// Appends the wire form.
    fn encode(&self, out: &mut Vec<u8>);

    /// The presentation codec of this layout, for the per-type dispatch table.
    const CODEC: Codec = Codec::new(Self::parse, Self::print, Self::check);
}

/// Prints one field of a multi-field RDATA: a space before every field but the first,
/// and no space at all for a field that prints nothing (an empty type bitmap).
pub(crate) fn print_field<K: FieldKind>(
    rd: &mut RdataReader<'_>,
    out: &mut String,
    first: &mut bool,
) -> Result<()> {
    let before = out.len();
    if !*first {
        out.push(' ');
    }
    let after_space = out.len();
    K::print(rd, out)?;
    if out.len() == after_space {
        out.truncate(before);
    } else {
        *first = false;
    }
    Ok(())
}

/// An extra rule over a whole RDATA that no single field can check (for example a DS
/// digest whose length depends on the digest type). Gets the wire form.
pub(crate) type Rule = fn(&[u8]) -> Result<(), &'static str>;

/// Declares an RDATA layout as a sequence of fields: the public struct with one public
/// field per wire field, and its [`Format`] implementation.
///
/// ```text
/// rdata_format! {
///     /// Doc of the struct.
///     Mx [rule] {
///         /// Doc of the field.
///         preference: u16 as U16,
///         exchange: Name as NameKind,
///     }
/// }
/// ```
///
/// The optional `[rule]` is a [`Rule`] run on the complete wire form after parsing,
/// checking and decoding.
macro_rules! rdata_format {
    (
        $(#[$meta:meta])*
        $name:ident $([$rule:path])? {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty as $kind:ty ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )+
        }

        impl $crate::rdata::format::Format for $name {
            fn parse(
                lx: &mut $crate::text::Lexer<'_>,
                origin: Option<&$crate::name::Dname>,
                out: &mut Vec<u8>,
            ) -> $crate::error::Result<()> {
                use $crate::rdata::format::FieldKind as _;
                let _start = out.len();
                $( <$kind>::parse(lx, origin, out)?; )+
                $( $crate::rdata::format::apply_rule_text($rule, lx, out.get(_start..))?; )?
                Ok(())
            }

            fn print(
                rd: &mut $crate::rdata::fields::RdataReader<'_>,
                out: &mut String,
            ) -> $crate::error::Result<()> {
                $( $crate::rdata::format::apply_rule_wire($rule, rd)?; )?
                let mut first = true;
                $( $crate::rdata::format::print_field::<$kind>(rd, out, &mut first)?; )+
                Ok(())
            }

            fn check(
                rd: &mut $crate::rdata::fields::RdataReader<'_>,
            ) -> $crate::error::Result<()> {
                use $crate::rdata::format::FieldKind as _;
                $( $crate::rdata::format::apply_rule_wire($rule, rd)?; )?
                $( <$kind>::check(rd)?; )+
                Ok(())
            }

            fn decode(
                rd: &mut $crate::rdata::fields::RdataReader<'_>,
            ) -> $crate::error::Result<Self> {
                use $crate::rdata::format::FieldKind as _;
                $( $crate::rdata::format::apply_rule_wire($rule, rd)?; )?
                Ok($name { $( $field: <$kind>::decode(rd)?, )+ })
            }

            fn encode(&self, out: &mut Vec<u8>) {
                use $crate::rdata::format::FieldKind as _;
                $( <$kind>::encode(&self.$field, out); )+
            }
        }
    };
}
pub(crate) use rdata_format;

/// Runs a [`Rule`] on freshly parsed wire bytes; a failure points at the end of the
/// entry.
pub(crate) fn apply_rule_text(rule: Rule, lx: &Lexer<'_>, wire: Option<&[u8]>) -> Result<()> {
    rule(wire.unwrap_or(&[])).map_err(|m| lx.error_here(m))
}

/// Runs a [`Rule`] on the whole RDATA behind a reader.
pub(crate) fn apply_rule_wire(rule: Rule, rd: &RdataReader<'_>) -> Result<()> {
    rule(rd.all()).map_err(|reason| super::bad(0, reason))
}
