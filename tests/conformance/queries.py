"""The conformance query set: deterministic, several thousand queries.

Three groups:
* `matrix`: every interesting name (each owner of the served zones, names that do not
  exist, names below cuts, wildcard matches, ENTs, CNAME/DNAME owners and what they
  redirect, names outside every zone, case-mixed spellings) x every type in `TYPES` x
  the four EDNS variants of `VARIANTS` over UDP.
* `tcp`: a subset of names and types again over TCP, on one persistent connection
  (RFC 7766: TCP answers like UDP, never truncated).
* `rfc8906`: the EDNS and header compliance cases of RFC 8906 §8 (the ISC EDNS
  compliance tests) and malformed queries (RFC 1035 §4.1.1, RFC 6891 §6.1.1/§7).

`python3 queries.py` prints the set, one query per line, for inspection.
"""

import os
import random
import re
import struct
from dataclasses import dataclass

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.rdatatype
import dns.zone

HERE = os.path.dirname(os.path.abspath(__file__))
ZONE_DIR = os.path.join(HERE, "zones")

# The served zones: (origin, file in zones/). Every server gets all of them.
ZONES = [
    ("example.com.", "example.com.zone"),
    ("sub.example.com.", "sub.example.com.zone"),
    ("example.net.", "example.net.zone"),
    ("secure.example.", "secure.example.zone.signed"),
    ("optout.example.", "optout.example.zone.signed"),
    ("apex-dname.example.", "apex-dname.example.zone"),
]

TYPES = ["A", "AAAA", "NS", "SOA", "MX", "TXT", "CNAME", "DNAME", "PTR", "SRV", "CAA",
         "HTTPS", "SVCB", "DS", "DNSKEY", "RRSIG", "NSEC", "NSEC3", "NSEC3PARAM", "ANY",
         "TYPE666"]

# name -> (use_edns, payload, DO bit)
VARIANTS = {
    "plain": (None, None, False),
    "edns": (0, 1232, False),
    "do": (0, 1232, True),
    "edns512": (0, 512, False),
}

FLAG_QR, FLAG_AA, FLAG_TC, FLAG_RD = 0x8000, 0x0400, 0x0200, 0x0100
FLAG_RA, FLAG_Z, FLAG_AD, FLAG_CD = 0x0080, 0x0040, 0x0020, 0x0010


@dataclass(frozen=True)
class Query:
    """One query: what to ask, how, and a stable key naming it in reports."""

    key: str
    qname: str
    qtype: str
    transport: str = "udp"
    use_edns: object = None  # None (no OPT) or the EDNS version
    payload: int = 1232
    dnssec_ok: bool = False
    ednsflags: int = 0  # extra EDNS flag bits beyond DO
    options: tuple = ()  # ((code, bytes), ...)
    flags: int = 0  # header flag bits (RD, CD, AD, Z, QR ...)
    opcode: int = 0
    qclass: str = "IN"
    mangle: str = ""  # a malformed-message recipe, see `wire`
    group: str = "matrix"
    case: str = ""  # what part of the zones this exercises (for summaries)

    def wire(self, qid):
        """The query message in wire form with ID `qid`."""
        options = [dns.edns.GenericOption(code, data) for code, data in self.options]
        if self.use_edns is None:
            msg = dns.message.make_query(self.qname, self.qtype, self.qclass,
                                         use_edns=False, flags=0, id=qid)
        else:
            msg = dns.message.make_query(
                self.qname, self.qtype, self.qclass, use_edns=self.use_edns,
                want_dnssec=self.dnssec_ok, payload=self.payload, options=options or None,
                ednsflags=self.ednsflags | (dns.flags.DO if self.dnssec_ok else 0),
                flags=0, id=qid)
        data = bytearray(msg.to_wire())
        flags = self.flags | (self.opcode << 11)
        data[2:4] = struct.pack("!H", flags)
        return mangle(bytes(data), self.mangle)


def mangle(data, recipe):
    """Applies a malformed-message recipe to a well-formed query."""
    header, body = data[:12], data[12:]
    qd, an, ns, ar = struct.unpack("!HHHH", header[4:12])
    question_end = 12 + dns.name.from_wire(data, 12)[1] + 4
    question = data[12:question_end]
    if recipe == "":
        return data
    if recipe == "qdcount0":
        return header[:4] + struct.pack("!HHHH", 0, an, ns, ar) + data[question_end:]
    if recipe == "qdcount2":
        return (header[:4] + struct.pack("!HHHH", 2, an, ns, ar) + question + question
                + data[question_end:])
    if recipe == "trailing":
        return data + b"\x00\x01garbage"
    if recipe == "short":
        return data[:14]
    if recipe == "two-opt":
        opt = data[question_end:]
        return header[:4] + struct.pack("!HHHH", qd, an, ns, ar + 1) + body + opt
    if recipe == "opt-in-answer":
        opt = data[question_end:]
        return header[:4] + struct.pack("!HHHH", qd, 1, ns, 0) + question + opt
    if recipe == "header-only":
        return header[:4] + struct.pack("!HHHH", 0, 0, 0, 0)
    if recipe == "dso-keepalive":
        # A DSO message (RFC 8490 §5.4): no records, a Keepalive TLV (§7.1) after the
        # header: type 1, length 8, inactivity timeout and keepalive interval (ms).
        tlv = struct.pack("!HHII", 1, 8, 15000, 15000)
        return header[:4] + struct.pack("!HHHH", 0, 0, 0, 0) + tlv
    raise ValueError(f"unknown mangle recipe {recipe!r}")


def _zone_owners():
    """Every owner name of every served zone (for signed zones: the unsigned source plus
    a few NSEC3 owners)."""
    owners = []
    for origin, fname in ZONES:
        src = fname.removesuffix(".signed")
        zone = dns.zone.from_file(os.path.join(ZONE_DIR, src), origin, relativize=False)
        owners += [n.to_text() for n in sorted(zone.nodes)]
        if fname.endswith(".signed"):
            signed = dns.zone.from_file(os.path.join(ZONE_DIR, fname), origin,
                                        relativize=False)
            nsec3 = [n.to_text() for n in sorted(signed.nodes)
                     if signed.nodes[n].get_rdataset(1, dns.rdatatype.NSEC3)]
            owners += nsec3[:3]
    return owners


def _ents(owners):
    """Empty non-terminals: ancestors of owners that are not owners themselves."""
    names = {dns.name.from_text(o) for o in owners}
    origins = [dns.name.from_text(o) for o, _ in ZONES]
    ents = set()
    for name in names:
        zone = max((o for o in origins if name.is_subdomain(o)), key=len)
        parent = name.parent()
        while parent != zone and parent.is_subdomain(zone):
            if parent not in names:
                ents.add(parent.to_text())
            parent = parent.parent()
    return sorted(ents)


# Names that are not owners: misses, names below cuts, wildcard matches, DNAME
# substitutions, names outside every zone. Relative to example.com. unless absolute.
CRAFTED = [
    "nx", "nx.www", "zzz-after-the-last", "0-before-the-first", "a.b.c.d.e.nx",
    "host.deleg", "a.b.deleg", "host.insecure", "host.sibling", "host.outns", "host.authns",
    "host.big", "host.mid", "www.sub", "nx.sub", "host.wild.sub",
    "host.wild", "a.b.wild", "nx.ent.wild", "y.x.ent.wild", "host.cnwild", "a.b.cnwild",
    "host.cnwild-net", "host.cnwild-nx", "host.star", "host.star-cname", "foo.w2",
    "x.foo.w2", "nx.x.*.w2", "host.wdeleg", "a.b.wdeleg", "nx.c.ent", "nx.ent",
    "host.dname-net", "www.dname-net", "nx.dname-net", "host.dname-in", "alias.dname-in",
    "nx.dname-in", "host.dname-chain", "alias.dname-chain", "host.dname-out",
    "host.dname-data", "host.dname-grow",
    "a.dname-long",
    "x" * 63 + "." + "y" * 63 + ".dname-long",
    "nx.example.net.", "www.example.org.", ".", "com.", "example.", "elsewhere.example.",
    "nx.secure.example.", "host.wild.secure.example.", "a.b.wild.secure.example.",
    "nx.ent.secure.example.", "host.cnwild.secure.example.", "host.secure.secure.example.",
    "host.insecure.secure.example.", "host.dname.secure.example.", "b.ent.secure.example.",
    "nx.optout.example.", "host.wild.optout.example.", "nx.ent.optout.example.",
    "host.secure.optout.example.", "host.insecure.optout.example.",
    "host.insecure2.optout.example.", "host.dname.optout.example.",
    "b.ent.optout.example.",
    "www.apex-dname.example.", "nx.apex-dname.example.", "a.b.apex-dname.example.",
    "back.apex-dname.example.",
    "a.wself", "loop.wself", "a.wback", "x.wback2", "x.wviareal",
]


def _absolute(name):
    return name if name.endswith(".") else f"{name}.example.com."


def _case_label(name):
    """The zone and the label just below its origin, e.g. 'example.com/deleg'."""
    qname = dns.name.from_text(name)
    origins = [dns.name.from_text(o) for o, _ in ZONES]
    inside = [o for o in origins if qname.is_subdomain(o)]
    if not inside:
        return "not-served"
    zone = max(inside, key=len)
    rel = qname.relativize(zone)
    label = rel.labels[-1].decode(errors="replace").lower() if rel.labels else "@"
    return f"{zone.to_text(omit_final_dot=True)}/{label}"


def _mixed_case(name, rng):
    return "".join(c.upper() if c.isalpha() and rng.random() < 0.5 else c for c in name)


# Owners that only repeat another owner's case (more glue of the same cut, more links
# of the same CNAME chain): left out of the matrix to keep it short.
REPEATS = re.compile(r"^(ns(0[2-9]|1[0-3])\.big|ns[2-6]\.mid|chain([2-9]|10))\.example\.com\.$")


def names():
    """Every matrix name, deterministic order, with case-mixed spellings of some."""
    owners = [o for o in _zone_owners() if not REPEATS.match(o)]
    base = owners + _ents(owners) + [_absolute(n) for n in CRAFTED]
    seen, ordered = set(), []
    for n in base:
        if n.lower() not in seen:
            seen.add(n.lower())
            ordered.append(n)
    rng = random.Random(8906)
    mixed = [_mixed_case(n, rng) for n in ordered[::4] if n != "."]
    return ordered + [m for m in mixed if m.lower() != m]


def matrix():
    out = []
    for name in names():
        case = _case_label(name)
        for qtype in TYPES:
            for variant, (edns, payload, do) in VARIANTS.items():
                out.append(Query(
                    key=f"matrix/udp/{variant}/{name}/{qtype}", qname=name, qtype=qtype,
                    use_edns=edns, payload=payload or 1232, dnssec_ok=do, case=case))
    return out


TCP_TYPES = ["A", "TXT", "NS", "DS", "DNSKEY", "ANY", "MX"]


def tcp():
    out = []
    for name in names()[::2]:
        for qtype in TCP_TYPES:
            for variant in ("plain", "do"):
                edns, payload, do = VARIANTS[variant]
                out.append(Query(
                    key=f"tcp/tcp/{variant}/{name}/{qtype}", qname=name, qtype=qtype,
                    transport="tcp", use_edns=edns, payload=payload or 1232, dnssec_ok=do,
                    group="tcp", case=_case_label(name)))
    return out


def _special(key, **kw):
    kw.setdefault("qname", "example.com.")
    kw.setdefault("qtype", "SOA")
    return Query(key=f"rfc8906/{key}", group="rfc8906", case=key.split("/")[0], **kw)


def rfc8906():
    """RFC 8906 §8 compliance cases, header bits and malformed queries."""
    big = "many.example.com."
    cases = [
        _special("dns"),
        _special("edns", use_edns=0),
        _special("edns1", use_edns=1),
        _special("edns1/unknown-option", use_edns=1, options=((100, b""),)),
        _special("edns1/secure", use_edns=1, qname="secure.example.", dnssec_ok=True),
        _special("ednsopt", use_edns=0, options=((100, b""),)),
        _special("ednsopt/data", use_edns=0, options=((65001, b"\x01\x02\x03"),)),
        _special("ednsflags", use_edns=0, ednsflags=0x0080),
        _special("ednsflags/all", use_edns=0, ednsflags=0x7FFF),
        _special("ednsflags/do", use_edns=0, ednsflags=0x4000, dnssec_ok=True),
        _special("do", use_edns=0, dnssec_ok=True, qname="secure.example."),
        _special("edns@512", use_edns=0, payload=512, dnssec_ok=True,
                 qname="secure.example.", qtype="DNSKEY"),
        _special("edns@512/big", use_edns=0, payload=512, qname=big, qtype="A"),
        _special("edns@100", use_edns=0, payload=100, qname=big, qtype="A"),
        _special("edns@65535", use_edns=0, payload=65535, qname=big, qtype="A"),
        _special("nsid", use_edns=0, options=((3, b""),)),
        _special("expire", use_edns=0, options=((9, b""),)),
        _special("cookie", use_edns=0, options=((10, bytes(range(8))),)),
        _special("cookie/bad-length", use_edns=0, options=((10, b"\x01\x02\x03"),)),
        _special("subnet", use_edns=0, options=((8, b"\x00\x01\x00\x00"),)),
        _special("keepalive", use_edns=0, options=((11, b""),)),
        _special("keepalive/tcp", use_edns=0, options=((11, b""),), transport="tcp"),
        _special("padding", use_edns=0, options=((12, b"\x00" * 8),)),
        _special("zflag", flags=FLAG_Z),
        _special("zflag/edns", flags=FLAG_Z, use_edns=0),
        _special("rd", flags=FLAG_RD),
        _special("rd/nx", flags=FLAG_RD, qname="nx.example.com."),
        _special("rd/refused", flags=FLAG_RD, qname="www.example.org."),
        _special("cd", flags=FLAG_CD, use_edns=0, dnssec_ok=True, qname="secure.example."),
        _special("ad", flags=FLAG_AD, use_edns=0, qname="secure.example."),
        _special("ad/do", flags=FLAG_AD, use_edns=0, dnssec_ok=True,
                 qname="secure.example."),
        _special("aa-in-query", flags=FLAG_AA),
        _special("ra-in-query", flags=FLAG_RA),
        _special("tc-in-query", flags=FLAG_TC),
        _special("qr-in-query", flags=FLAG_QR),
        _special("opcode/iquery", opcode=1),
        _special("opcode/status", opcode=2),
        _special("opcode/3", opcode=3),
        _special("opcode/notify", opcode=4),
        _special("opcode/update", opcode=5),
        _special("opcode/15", opcode=15),
        _special("opcode/15/edns", opcode=15, use_edns=0),
        # Without a question (RFC 1035 §4.1.1 NOTIMP; RFC 8490 §5.1.1 for DSO).
        _special("opcode/iquery/qdcount0", opcode=1, mangle="qdcount0"),
        _special("opcode/status/qdcount0", opcode=2, mangle="qdcount0"),
        _special("opcode/dso", opcode=6, mangle="qdcount0"),
        _special("opcode/dso/edns", opcode=6, mangle="qdcount0", use_edns=0),
        _special("opcode/dso/question", opcode=6),
        _special("opcode/dso/keepalive", opcode=6, mangle="dso-keepalive"),
        _special("opcode/dso/keepalive/tcp", opcode=6, mangle="dso-keepalive",
                 transport="tcp"),
        _special("opcode/15/qdcount0", opcode=15, mangle="qdcount0", use_edns=0),
        _special("type666", qtype="TYPE666"),
        _special("type666/owner", qtype="TYPE666", qname="unknown.example.com."),
        _special("type0", qtype="TYPE0"),
        _special("axfr/udp", qtype="AXFR"),
        _special("ixfr/udp", qtype="IXFR"),
        _special("maila", qtype="MAILA"),
        _special("opt-type", qtype="OPT"),
        _special("class/ch", qclass="CH"),
        _special("class/any", qclass="ANY", qname="www.example.com.", qtype="A"),
        _special("class/none", qclass="NONE"),
        _special("class/65280", qclass="CLASS65280"),
        _special("tcp", transport="tcp"),
        _special("tcp/edns", transport="tcp", use_edns=0),
        _special("tcp/big", transport="tcp", qname=big, qtype="A"),
        _special("tcp/bigtxt", transport="tcp", use_edns=0, qname="bigtxt.example.com.",
                 qtype="TXT"),
        _special("malformed/qdcount0", mangle="qdcount0"),
        _special("malformed/qdcount0/edns", mangle="qdcount0", use_edns=0),
        _special("malformed/qdcount2", mangle="qdcount2"),
        _special("malformed/trailing", mangle="trailing"),
        _special("malformed/short", mangle="short"),
        _special("malformed/header-only", mangle="header-only"),
        _special("malformed/two-opt", mangle="two-opt", use_edns=0),
        _special("malformed/opt-in-answer", mangle="opt-in-answer", use_edns=0),
    ]
    return cases


def generate():
    """The whole query set, in a fixed order."""
    return matrix() + tcp() + rfc8906()


if __name__ == "__main__":
    all_queries = generate()
    for q in all_queries:
        print(q.key)
    groups = {}
    for q in all_queries:
        groups[q.group] = groups.get(q.group, 0) + 1
    print(f"# {len(all_queries)} queries: {groups}")
