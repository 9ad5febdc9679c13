#!/usr/bin/env python3
"""Reads `TYPE<TAB>rdata text` lines on stdin; prints, per line, the uncompressed wire
form dnspython makes of it in hex, or `ERR <reason>`. Used by the differential test in
crates/wire/src/rdata/dnspython.rs. Relative names are taken relative to example.com."""

import sys

try:
    import dns.name
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype
except ImportError:
    print("NO-DNSPYTHON")
    sys.exit(0)

ORIGIN = dns.name.from_text("example.com.")

for line in sys.stdin:
    rtype, _, text = line.rstrip("\n").partition("\t")
    try:
        rdata = dns.rdata.from_text(
            dns.rdataclass.IN, dns.rdatatype.from_text(rtype), text, origin=ORIGIN, relativize=False
        )
        print(rdata.to_wire().hex())
    except Exception as e:  # noqa: BLE001 - every failure is a "reject"
        print("ERR", type(e).__name__, str(e).replace("\n", " "))
