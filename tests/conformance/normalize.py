"""Normalized responses: what two answers must share to count as the same.

A response becomes a dict of fields, each a string, so that two servers' answers are
equal exactly when every field is:

* `opcode`, `rcode` (with the EDNS extended bits, RFC 6891 §6.1.3), `flags` (every
  header bit by name, including the Z bit), `question` (as sent back, case kept);
* `answer`, `authority`, `additional`: each section as a *multiset* of RRs, one RR per
  line (owner, TTL, class, type, RDATA), sorted — order inside a section is free (RFC
  2181 §5, RRset order is not significant), duplicates are kept and show;
* `edns`: OPT presence, version, UDP payload size, flag bits and options with data.

Nothing else is dropped: TTLs, TC, the case of the question and the counts all count.
Domain names in the sections (owners and names inside RDATA) are compared
case-insensitively by default (RFC 4343 §3; name compression makes a server copy the
case of the query into owners and RDATA names); every other RDATA field is compared as
printed. A missing answer and an unparsable one are results too.
"""

import struct
from collections import Counter

import dns.exception
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdatatype

FLAG_BITS = [(0x8000, "qr"), (0x0400, "aa"), (0x0200, "tc"), (0x0100, "rd"),
             (0x0080, "ra"), (0x0040, "z"), (0x0020, "ad"), (0x0010, "cd")]

SECTIONS = ("answer", "authority", "additional")
FIELDS = ("result", "opcode", "rcode", "flags", "question") + SECTIONS + ("edns",)


def normalize(data, exact_case=False):
    """The normalized form of response `data` (bytes), or of no response (None)."""
    if data is None:
        return {"result": "no answer"}
    if len(data) < 12:
        return {"result": f"short message ({len(data)} bytes): {data.hex()}"}
    flags = struct.unpack("!H", data[2:4])[0]
    try:
        msg = dns.message.from_wire(data, one_rr_per_rrset=True)
    except (dns.exception.DNSException, ValueError, IndexError, KeyError) as err:
        return {
            "result": f"unparsable ({type(err).__name__}: {err})",
            "flags": flag_names(flags),
            "opcode": str((flags >> 11) & 0xF),
            "rcode": str(flags & 0xF),
            "body": data[12:].hex(),
        }
    out = {
        "result": "answer",
        "opcode": _opcode_text((flags >> 11) & 0xF),
        "rcode": dns.rcode.to_text(msg.rcode()),
        "flags": flag_names(flags),
        "question": "\n".join(str(q) for q in msg.question),
        "edns": _edns_text(msg),
    }
    for name, section in zip(SECTIONS, (msg.answer, msg.authority, msg.additional)):
        out[name] = "\n".join(sorted(_rr_lines(section, exact_case)))
    return out


def flag_names(flags):
    return " ".join(name for bit, name in FLAG_BITS if flags & bit) or "-"


def _opcode_text(value):
    try:
        return dns.opcode.to_text(value)
    except (ValueError, dns.exception.DNSException):
        return str(value)


def _edns_text(msg):
    if msg.edns < 0:
        return "none"
    options = " ".join(f"{o.otype}:{o.to_wire().hex()}" for o in msg.options)
    return (f"version={msg.edns} payload={msg.payload} flags={msg.ednsflags & 0xFFFF:#06x}"
            f" options=[{options}]")


def _rr_lines(section, exact_case):
    lines = []
    for rrset in section:
        owner = rrset.name.to_text()
        if not exact_case:
            owner = owner.lower()
        for rdata in rrset:
            if not exact_case:
                rdata = _lowercase_names(rdata)
            lines.append(f"{owner} {rrset.ttl} {rrset.rdclass.name} "
                         f"{dns.rdatatype.to_text(rdata.rdtype)} {rdata.to_text()}")
    return lines


def _lowercase_names(rdata):
    """`rdata` with every domain name in it lower-cased (other fields untouched)."""
    names = {slot: getattr(rdata, slot) for slot in rdata._get_all_slots()
             if isinstance(getattr(rdata, slot, None), dns.name.Name)}
    if not names:
        return rdata
    return rdata.replace(**{slot: name.canonicalize() for slot, name in names.items()})


def differing_fields(a, b):
    """Fields whose values differ between two normalized responses."""
    return [f for f in sorted(set(a) | set(b), key=_field_order) if a.get(f) != b.get(f)]


def _field_order(field):
    return FIELDS.index(field) if field in FIELDS else len(FIELDS)


def section_delta(a, b, field):
    """For a section field: (lines only in a, lines only in b), multiset difference."""
    left = Counter((a.get(field) or "").splitlines())
    right = Counter((b.get(field) or "").splitlines())
    return sorted((left - right).elements()), sorted((right - left).elements())
