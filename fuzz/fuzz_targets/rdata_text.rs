//! Presentation-format RDATA: for an arbitrary (type, text), parsing never panics; what
//! parses is valid wire data that prints back to text parsing to the same bytes, and that
//! decodes to a typed value re-encoding to the same bytes. The same input taken as wire
//! bytes must be judged alike by `validate` and the typed decoder, and round-trip too.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tern_wire::rdata::{self, Rdata};
use tern_wire::text::Lexer;
use tern_wire::{Name, Rtype};

/// Every type with a known presentation format.
fn known() -> &'static [Rtype] {
    static KNOWN: OnceLock<Vec<Rtype>> = OnceLock::new();
    KNOWN.get_or_init(|| (0..=u16::MAX).map(Rtype).filter(|&t| rdata::is_known(t)).collect())
}

/// First byte picks a known type (or, from 0xF0 on, the next two bytes give any type).
fn split(data: &[u8]) -> Option<(Rtype, &[u8])> {
    let (&first, rest) = data.split_first()?;
    if first < 0xF0 {
        let types = known();
        return Some((types[usize::from(first) % types.len()], rest));
    }
    let (code, rest) = rest.split_at_checked(2)?;
    Some((Rtype(u16::from_be_bytes([code[0], code[1]])), rest))
}

fn check_text(rtype: Rtype, text: &[u8], origin: &Name) {
    let mut wire = Vec::new();
    if rdata::parse_text(rtype, &mut Lexer::for_fields(text), Some(origin), &mut wire).is_err() {
        assert!(wire.is_empty(), "failed parse left output behind");
        return;
    }
    rdata::validate(rtype, &wire).expect("parsed RDATA is valid");
    let printed = rdata::to_text(rtype, &wire);
    let again = rdata::parse_str(rtype, &printed, None)
        .unwrap_or_else(|e| panic!("{rtype} printed as {printed:?} which does not parse: {e}"));
    assert_eq!(again, wire, "{rtype} {printed:?}");
    let typed = Rdata::from_wire(rtype, &wire).expect("parsed RDATA decodes");
    assert_eq!(typed.to_wire_vec(), wire);
    let mut canonical = Vec::new();
    rdata::canonical_wire(rtype, &wire, &mut canonical).expect("canonical form");
    assert_eq!(canonical.len(), wire.len());
}

fn check_wire(rtype: Rtype, wire: &[u8]) {
    let valid = rdata::validate(rtype, wire).is_ok();
    let typed = Rdata::from_wire(rtype, wire);
    assert_eq!(valid, typed.is_ok(), "validate and from_wire disagree for {rtype}");
    let printed = rdata::to_text(rtype, wire);
    if let Ok(typed) = typed {
        assert_eq!(typed.to_wire_vec(), wire);
        let again = rdata::parse_str(rtype, &printed, None)
            .unwrap_or_else(|e| panic!("{rtype} printed as {printed:?} which does not parse: {e}"));
        assert_eq!(again, wire, "{rtype} {printed:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((rtype, rest)) = split(data) else { return };
    let origin: Name = "origin.example.".parse().unwrap_or_else(|_| Name::root());
    check_text(rtype, rest, &origin);
    check_wire(rtype, rest);
});
