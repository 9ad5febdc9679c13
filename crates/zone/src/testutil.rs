//! Test helpers: build zones from `owner ttl TYPE rdata` lines (absolute owners, no
//! directives) without the zone-file parser.

use tern_wire::text::Lexer;
use tern_wire::{rdata, Name, Rtype};

use crate::builder::ZoneBuilder;
use crate::contents::ZoneContents;
use crate::error::Error;
use crate::node::NodeId;
use crate::report::Report;

/// Adds every line of `text` to a builder for `origin`.
pub fn builder(origin: &str, text: &str) -> ZoneBuilder {
    let mut b = ZoneBuilder::new(&origin.parse::<Name>().unwrap());
    add_lines(&mut b, origin, text);
    b
}

/// Adds every line of `text` to `b`, a builder for `origin`, calling `after` after each.
pub fn add_lines(b: &mut ZoneBuilder, origin: &str, text: &str) {
    add_lines_then(b, origin, text, |_| {});
}

/// As [`add_lines`], calling `after` with the builder after each record.
pub fn add_lines_then(
    b: &mut ZoneBuilder,
    origin: &str,
    text: &str,
    mut after: impl FnMut(&mut ZoneBuilder),
) {
    let origin: Name = origin.parse().unwrap();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with(';')) {
        let mut lx = Lexer::for_fields(line.as_bytes());
        let owner = Name::parse_text(lx.expect("owner").unwrap().text, Some(&origin)).unwrap();
        let ttl = lx.expect("ttl").unwrap().ttl().unwrap();
        let rtype = Rtype::from_mnemonic(lx.expect("type").unwrap().text).unwrap();
        let mut wire = Vec::new();
        rdata::parse_text(rtype, &mut lx, Some(&origin), &mut wire)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        b.add(&owner, rtype, ttl, &wire);
        after(b);
    }
}

/// Builds a zone that must be valid.
pub fn zone(origin: &str, text: &str) -> (ZoneContents, Report) {
    builder(origin, text).finish().unwrap_or_else(|e| panic!("{e}"))
}

/// Builds a zone that must be refused; returns the report.
pub fn refused(origin: &str, text: &str) -> Report {
    match builder(origin, text).finish() {
        Err(Error::Semantic(report)) => *report,
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("zone was accepted"),
    }
}

/// Everything a built zone holds, node by node, to compare two builds.
pub fn fingerprint(z: &ZoneContents) -> Vec<String> {
    let mut out = vec![format!("{} {} {:?}", z.record_count(), z.serial(), z.denial())];
    for id in 0..z.node_count() as NodeId {
        let n = z.node(id).unwrap();
        let (data, flags) = (&**n.data(), n.flags.bits());
        out.push(format!(
            "{id} {data:?} {} {} {} {} {} {flags} {}",
            n.parent, n.wildcard, n.nsec3, n.prev, n.children, n.refs
        ));
        out.push(format!("{} found at {:?}", n.owner(), z.find(n.owner())));
    }
    out.push(format!("{:?}", z.nsec3()));
    out
}

/// A minimal valid apex.
pub const APEX: &str = "
example. 3600 SOA ns1.example. hostmaster.example. 1 7200 3600 1209600 300
example. 3600 NS ns1.example.
example. 3600 NS ns2.other.
ns1.example. 3600 A 192.0.2.53
";

/// A tiny deterministic generator (xorshift), so randomized tests need no crate.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// One of `items`, at random.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}
