//! Semantic checks of a built zone, in the spirit of `named-checkzone` and Knot DNS's
//! semantic checks. Errors make the zone unusable (it is not loaded, the previous version
//! stays in service); warnings are reported and the zone is served.
//!
//! | check | severity | reference |
//! |---|---|---|
//! | no SOA at the apex, or more than one | error | RFC 1035 §5.2 |
//! | SOA below the apex | error | RFC 1035 §5.2 |
//! | no NS at the apex | error | RFC 1034 §4.2.1 |
//! | CNAME beside other data (RRSIG/NSEC aside) | error | RFC 2181 §10.1, RFC 4035 §2.5 |
//! | more than one CNAME, more than one DNAME | error | RFC 2181 §10.1, RFC 6672 §2.4 |
//! | data below a DNAME | error | RFC 6672 §2.3 |
//! | records outside the zone | warning, ignored | RFC 1035 §5.2 |
//! | duplicate records | warning, dropped | RFC 2181 §5 |
//! | different TTLs in one RRset | warning, lowest used | RFC 2181 §5.2 |
//! | non-address data below a zone cut | warning, kept, not authoritative | RFC 1034 §4.2.1 |
//! | in-zone NS target without addresses (missing glue) | warning | RFC 1034 §4.2.1 |
//! | DS at a name that is not a delegation | warning | RFC 4035 §2.4 |
//! | NSEC3PARAM below the apex | warning | RFC 5155 §4 |
//! | more than 65,535 records (or signatures) in an RRset | error | — (node format) |
//! | an RRset too big for any DNS message | warning | RFC 1035 §4.2.2 |

use tern_wire::rdata::Field;
use tern_wire::{Dname, Rtype};

use crate::contents::{ZoneContents, APEX};
use crate::error::Position;
use crate::node::{Flags, Node, NodeId, Rrset, NO_NODE};
use crate::report::{Report, Severity};

/// Where the findings about a node go: the file and first line of its records, when the
/// zone was read from a file (the builder knows; a changeset does not).
pub type Locate<'a> = &'a dyn Fn(NodeId) -> Option<Position>;

/// The findings of one run of the checks.
struct Findings<'a> {
    report: &'a mut Report,
    locate: Locate<'a>,
}

impl Findings<'_> {
    fn push(
        &mut self,
        severity: Severity,
        node: (NodeId, &Dname),
        rtype: Option<Rtype>,
        message: impl Into<String>,
    ) {
        let locate = self.locate;
        self.report.push_at(severity, || locate(node.0), Some(node.1), rtype, message);
    }

    fn error(&mut self, node: (NodeId, &Dname), rtype: Option<Rtype>, message: impl Into<String>) {
        self.push(Severity::Error, node, rtype, message);
    }

    fn warn(&mut self, node: (NodeId, &Dname), rtype: Option<Rtype>, message: impl Into<String>) {
        self.push(Severity::Warning, node, rtype, message);
    }
}

/// What a node's own data tells the checks, read while that data is at hand (the
/// builder does it as it encodes each node), so that [`zone`] reads a node's data only
/// when a check may have something to say about it. A bit set means "look"; every bit
/// set ([`Checks::UNKNOWN`]) runs each check as if nothing were known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks(u8);

impl Checks {
    /// The rules about which types share a name find something.
    const DATA: u8 = 1;
    /// An NS RRset has an in-zone target, which the glue check looks at ([`ChecksOf`]);
    /// one without addresses, once [`Checks::settle`] has looked.
    const GLUE: u8 = 1 << 1;
    /// An RRset other than A and AAAA: data that would be flagged below a zone cut.
    const NOT_ADDRESS: u8 = 1 << 2;
    /// An A or AAAA RRset: a name an NS record can point to without a warning.
    const ADDRESS: u8 = 1 << 3;

    /// Nothing known: every check runs.
    pub const UNKNOWN: Checks = Checks(Self::DATA | Self::GLUE | Self::NOT_ADDRESS);

    /// Keeps the glue check, in `known` (by node id), only for the nodes among
    /// `ns_targets` (as [`ChecksOf`] gives them) with a target that has no addresses.
    pub fn settle(known: &mut [Checks], ns_targets: &[(NodeId, NodeId)]) {
        for &(id, _) in ns_targets {
            if let Some(checks) = known.get_mut(id as usize) {
                checks.0 &= !Self::GLUE;
            }
        }
        for &(id, target) in ns_targets {
            let addressed = known.get(target as usize).is_some_and(|t| t.has(Self::ADDRESS));
            if let Some(checks) = known.get_mut(id as usize).filter(|_| !addressed) {
                checks.0 |= Self::GLUE;
            }
        }
    }

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// What a node's own data tells the checks ([`Checks`]), read RRset by RRset, so that
/// the zone builder reads it in the one walk of each new node's RRsets it makes for
/// everything: its in-zone NS targets are added to a list as (id, target) for
/// [`Checks::settle`].
#[derive(Default)]
pub struct ChecksOf {
    bits: u8,
    /// An RRset that [`node_data`] may find something about (it reads the node again).
    suspect: bool,
    /// A DS RRset: something to report unless the node is a delegation.
    ds: bool,
}

impl ChecksOf {
    /// One RRset of node `id`; its in-zone NS targets go to `ns_targets`.
    #[inline]
    pub fn add(&mut self, rrset: &Rrset<'_>, id: NodeId, ns_targets: &mut Vec<(NodeId, NodeId)>) {
        self.bits |= match rrset.rtype {
            Rtype::A | Rtype::AAAA => Checks::ADDRESS,
            _ => Checks::NOT_ADDRESS,
        };
        if rrset.rtype == Rtype::NS {
            let before = ns_targets.len();
            let targets = (0..usize::from(rrset.count)).map(|i| rrset.target(i));
            ns_targets.extend(targets.filter(|&t| t != NO_NODE).map(|t| (id, t)));
            if ns_targets.len() > before {
                self.bits |= Checks::GLUE;
            }
        }
        // Every case `node_data` reports on, and more: it decides.
        self.suspect |= rrset.has_records()
            && match rrset.rtype {
                Rtype::SOA | Rtype::NSEC3PARAM => id != APEX,
                Rtype::CNAME | Rtype::DNAME => rrset.count > 1,
                _ => false,
            };
        self.ds |= rrset.has_records() && rrset.rtype == Rtype::DS;
    }

    /// The checks of `node` (node `id`), once every RRset was added and its own flags
    /// are set (DELEGATION and CNAME are read).
    pub fn finish(self, node: &Node, id: NodeId) -> Checks {
        let delegation = node.flags.contains(Flags::DELEGATION);
        let suspect = self.suspect || (self.ds && !delegation) || node.flags.contains(Flags::CNAME);
        let mut bits = self.bits;
        if suspect {
            let mut report = Report::default();
            node_data(node, id, &mut Findings { report: &mut report, locate: &|_| None });
            if !report.issues().is_empty() {
                bits |= Checks::DATA;
            }
        }
        Checks(bits)
    }
}

/// Runs every check and records the findings, each placed by `locate`. `known` holds
/// what each node's data tells the checks, by node id ([`Checks::UNKNOWN`] for a node
/// past its end): a node's data is read only where it says to look.
pub fn zone(zone: &ZoneContents, known: &[Checks], report: &mut Report, locate: Locate<'_>) {
    let mut findings = Findings { report, locate };
    apex(zone, &mut findings);
    for (id, node) in (0..).zip(zone.nodes.iter()) {
        if node.flags.contains(Flags::PHANTOM) {
            continue;
        }
        let checks = known.get(id as usize).copied().unwrap_or(Checks::UNKNOWN);
        if !node.flags.contains(Flags::EMPTY) {
            findings.report.names += 1;
        }
        if node.flags.contains(Flags::DELEGATION) && !node.flags.contains(Flags::NONAUTH) {
            findings.report.delegations += 1;
            if checks.has(Checks::GLUE) {
                glue(zone, id, node, &mut findings);
            }
        }
        if checks.has(Checks::DATA) {
            node_data(node, id, &mut findings);
        }
        let cut = node.flags.contains(Flags::NONAUTH) && checks.has(Checks::NOT_ADDRESS);
        if cut || node.flags.contains(Flags::BELOW_DNAME) {
            placement(node, id, &mut findings);
        }
    }
}

/// The checks that concern one changed node (after a changeset).
pub fn changed_node(zone: &ZoneContents, id: NodeId, report: &mut Report) {
    let Some(node) = zone.node(id) else { return };
    let mut findings = Findings { report, locate: &|_| None };
    if id == APEX {
        apex(zone, &mut findings);
    }
    if node.flags.contains(Flags::PHANTOM) {
        return;
    }
    if node.flags.contains(Flags::DELEGATION) && !node.flags.contains(Flags::NONAUTH) {
        glue(zone, id, node, &mut findings);
    }
    node_data(node, id, &mut findings);
    placement(node, id, &mut findings);
}

fn apex(zone: &ZoneContents, findings: &mut Findings<'_>) {
    let Some(apex) = zone.apex() else { return };
    let at: (NodeId, &Dname) = (APEX, zone.origin());
    match apex.rrset(Rtype::SOA).map(|r| r.count) {
        None | Some(0) => findings.error(at, Some(Rtype::SOA), "missing at the zone apex"),
        Some(1) => {}
        Some(n) => findings.error(
            at,
            Some(Rtype::SOA),
            format!("{n} records at the apex; exactly one is allowed"),
        ),
    }
    if apex.rrset(Rtype::NS).is_none_or(|r| r.count == 0) {
        findings.error(at, Some(Rtype::NS), "missing at the zone apex");
    }
    glue(zone, APEX, apex, findings);
}

/// Rules about which types may share a name.
fn node_data(node: &Node, id: NodeId, findings: &mut Findings<'_>) {
    let at = (id, node.owner());
    for rrset in node.rrsets().filter(|r| r.has_records()) {
        match rrset.rtype {
            Rtype::SOA if id != APEX => findings.error(at, Some(Rtype::SOA), "below the zone apex"),
            Rtype::CNAME | Rtype::DNAME if rrset.count > 1 => findings.error(
                at,
                Some(rrset.rtype),
                format!("{} records at one name; only one is allowed", rrset.count),
            ),
            Rtype::NSEC3PARAM if id != APEX => {
                findings.warn(at, Some(Rtype::NSEC3PARAM), "below the zone apex: ignored")
            }
            Rtype::DS if !node.flags.contains(Flags::DELEGATION) => {
                findings.warn(at, Some(Rtype::DS), "at a name that is not a delegation")
            }
            _ => {}
        }
    }
    if node.flags.contains(Flags::CNAME) {
        let other = node.rrsets().filter(|r| r.has_records()).find(|r| !cname_neighbour(r.rtype));
        if let Some(other) = other {
            let message = format!("exists beside {} data", other.rtype);
            findings.error(at, Some(Rtype::CNAME), message);
        }
    }
}

/// Types allowed at a CNAME's owner (RFC 2181 §10.1, RFC 4035 §2.5).
fn cname_neighbour(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::CNAME | Rtype::RRSIG | Rtype::NSEC | Rtype::KEY | Rtype::SIG)
}

/// Data that sits where it will never be served authoritatively.
fn placement(node: &Node, id: NodeId, findings: &mut Findings<'_>) {
    if node.flags.contains(Flags::EMPTY) {
        return;
    }
    let at = (id, node.owner());
    if node.flags.contains(Flags::BELOW_DNAME) {
        findings.error(at, None, "is below a DNAME (RFC 6672 §2.3 forbids data there)");
    } else if node.flags.contains(Flags::NONAUTH) {
        let not_glue = node.rrsets().find(|r| !matches!(r.rtype, Rtype::A | Rtype::AAAA));
        if let Some(r) = not_glue {
            findings.warn(at, Some(r.rtype), "is below a zone cut: kept, but not authoritative");
        }
    }
}

/// In-zone NS targets need addresses (glue when below the cut).
fn glue(zone: &ZoneContents, id: NodeId, node: &Node, findings: &mut Findings<'_>) {
    let Some(ns) = node.rrset(Rtype::NS) else { return };
    for i in 0..usize::from(ns.count) {
        let Some(target) = zone.node(ns.target(i)) else { continue };
        let has_address = target.rrset(Rtype::A).is_some() || target.rrset(Rtype::AAAA).is_some();
        if !has_address {
            let what =
                if target.owner().is_below(node.owner()) { "glue" } else { "address records" };
            findings.warn(
                (id, node.owner()),
                Some(Rtype::NS),
                format!("target {} is in the zone but has no {what} (A or AAAA)", target.owner()),
            );
        }
    }
}

/// The most a DNS message can hold: TCP's two-byte length (RFC 1035 §4.2.2); UDP with
/// EDNS allows no more (RFC 6891 §6.2.3).
const MAX_MESSAGE: usize = 65_535;

/// Header, and per record the fixed fields: TYPE, CLASS, TTL, RDLENGTH (RFC 1035 §4.1).
const HEADER: usize = 12;
const RR_FIXED: usize = 10;

/// Checks the size of `owner`'s `rtype` RRset: `count` records with `bytes` of RDATA
/// (`rdatas`, read only when the RRset is big), and `sigs` signatures. Returns whether
/// the zone can hold it.
///
/// A node stores at most 65,535 records (and as many signatures) in an RRset; more is an
/// error. Fewer can still be too many for any DNS message, even alone in the answer to a
/// question for them with every name compressed as far as it can be: a warning, as such
/// an RRset can never be sent whole.
#[inline]
pub fn rrset_size<'r>(
    report: &mut Report,
    at: impl FnOnce() -> Option<Position>,
    (owner, rtype): (&Dname, Rtype),
    (count, bytes, sigs): (usize, usize, usize),
    rdatas: impl Iterator<Item = &'r [u8]>,
) -> bool {
    // The question holds the owner; each answer points back to it (two bytes).
    let fixed = HEADER + owner.len() + 4;
    let fits = count <= usize::from(u16::MAX) && sigs <= usize::from(u16::MAX);
    if fits && fixed + count * (2 + RR_FIXED) + bytes <= MAX_MESSAGE {
        return true; // fits even without compressing the RDATA
    }
    big_rrset(report, at, (owner, rtype), (count, bytes, sigs), rdatas)
}

/// [`rrset_size`] for an RRset that does not fit uncompressed, or is too big to hold.
#[cold]
#[inline(never)]
fn big_rrset<'r>(
    report: &mut Report,
    at: impl FnOnce() -> Option<Position>,
    (owner, rtype): (&Dname, Rtype),
    (count, bytes, sigs): (usize, usize, usize),
    rdatas: impl Iterator<Item = &'r [u8]>,
) -> bool {
    if count > usize::from(u16::MAX) || sigs > usize::from(u16::MAX) {
        let message = format!(
            "RRset of {count} records and {sigs} signatures: a zone holds at most 65535 of \
             each in one RRset (and a DNS message about 5,000)"
        );
        report.push_at(Severity::Error, at, Some(owner), Some(rtype), message);
        return false;
    }
    let least = if rtype.shape().compress {
        rdatas.map(|rd| compressed_len(rtype, rd)).sum()
    } else {
        bytes
    };
    let size = HEADER + owner.len() + 4 + count * (2 + RR_FIXED) + least;
    if size > MAX_MESSAGE {
        let message = format!(
            "RRset of {count} records needs at least {size} bytes, more than a DNS message \
             holds ({MAX_MESSAGE}): it can never be sent whole"
        );
        report.push_at(Severity::Warning, at, Some(owner), Some(rtype), message);
    }
    true
}

/// The least RDATA of `rtype` can take with its names compressed (RFC 1035 §4.1.4): each
/// name at most a two-byte pointer.
fn compressed_len(rtype: Rtype, rdata: &[u8]) -> usize {
    let mut at = 0usize;
    let mut len = 0usize;
    for field in rtype.shape().fields {
        let size = match *field {
            Field::Bytes(n) => usize::from(n),
            Field::CharString => 1 + usize::from(rdata.get(at).copied().unwrap_or(0)),
            Field::Name => match rdata.get(at..).map(Dname::from_wire_prefix) {
                Some(Ok((_, n))) => {
                    at += n;
                    len += n.min(2);
                    continue;
                }
                _ => return rdata.len(),
            },
            Field::Rest => rdata.len().saturating_sub(at),
        };
        at += size;
        len += size;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, APEX};

    /// What node `id`'s data tells the checks, its RRsets added one by one.
    fn checks_of(node: &Node, id: NodeId, ns_targets: &mut Vec<(NodeId, NodeId)>) -> Checks {
        let mut checks = ChecksOf::default();
        for rrset in node.rrsets() {
            checks.add(&rrset, id, ns_targets);
        }
        checks.finish(node, id)
    }

    /// A zone with a finding for each warning the checks make.
    const WARNED: &str = "
        d.example. 300 NS ns.d.example.
        d.example. 300 NS ns.other.
        x.d.example. 300 MX 10 mail.other.
        ns2.x.d.example. 300 A 192.0.2.2
        e.example. 300 NS ns.e.example.
        f.example. 300 NS host.example.
        g.example. 300 NS ns.other.
        ds.example. 300 DS 12345 13 2 abababababababababababababababababababababababababababababababab
        sub.example. 300 NSEC3PARAM 1 0 0 -
        host.example. 300 TXT \"no address\"
        www.example. 300 CNAME host.example.";

    /// The findings of every check on `zone`, knowing `known`.
    fn findings(zone: &ZoneContents, known: &[Checks]) -> Report {
        let mut report = Report::default();
        super::zone(zone, known, &mut report, &|_| None);
        report
    }

    #[test]
    fn what_a_node_tells_the_checks_changes_no_finding() {
        let (zone, _) = testutil::zone("example.", &format!("{APEX}{WARNED}"));
        let mut targets = Vec::new();
        let mut known: Vec<Checks> =
            (0..).zip(zone.nodes.iter()).map(|(id, n)| checks_of(n, id, &mut targets)).collect();
        let all = findings(&zone, &[]);
        assert!(all.issues().len() >= 6, "{all:?}");
        assert_eq!(findings(&zone, &known), all);
        Checks::settle(&mut known, &targets);
        assert_eq!(findings(&zone, &known), all, "settled");
    }

    #[test]
    fn plain_delegations_and_addresses_need_no_look() {
        let (zone, _) = testutil::zone("example.", &format!("{APEX}{WARNED}"));
        let id = |name: &str| zone.find(&name.parse::<tern_wire::Name>().unwrap()).unwrap();
        let mut targets = Vec::new();
        let mut known: Vec<Checks> =
            (0..).zip(zone.nodes.iter()).map(|(id, n)| checks_of(n, id, &mut targets)).collect();
        let checks = |known: &[Checks], name: &str| known[id(name) as usize];
        assert_eq!(checks(&known, "g.example."), Checks(Checks::NOT_ADDRESS));
        assert_eq!(checks(&known, "ns2.x.d.example."), Checks(Checks::ADDRESS));
        assert_eq!(checks(&known, "d.example."), Checks(Checks::GLUE | Checks::NOT_ADDRESS));
        assert_eq!(checks(&known, "ds.example.").0 & Checks::DATA, Checks::DATA);
        assert!(targets.contains(&(id("f.example."), id("host.example."))));
        Checks::settle(&mut known, &targets);
        assert!(checks(&known, "f.example.").has(Checks::GLUE), "host.example. has no address");
        assert!(checks(&known, "d.example.").has(Checks::GLUE), "ns.d.example. is a phantom");
        let glued = testutil::zone(
            "example.",
            &format!("{APEX}d.example. 300 NS ns.d.example.\nns.d.example. 300 A 192.0.2.9"),
        )
        .0;
        let mut targets = Vec::new();
        let mut known: Vec<Checks> =
            (0..).zip(glued.nodes.iter()).map(|(id, n)| checks_of(n, id, &mut targets)).collect();
        Checks::settle(&mut known, &targets);
        let d = glued.find(&"d.example.".parse::<tern_wire::Name>().unwrap()).unwrap();
        assert!(!known[d as usize].has(Checks::GLUE), "its glue has an address");
    }
}
