"""dnspython as a test oracle for tern-wire: one JSON request per input line, one JSON
answer per output line. Used by tests/dnspython_diff.rs and tests/tsig_interop.rs."""

import json
import sys
import time

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import dns.tsig


def parse(req):
    wire = bytes.fromhex(req["wire"])
    try:
        m = dns.message.from_wire(wire, one_rr_per_rrset=True)
    except Exception as e:  # the class name is the verdict
        return {"ok": False, "err": type(e).__name__}
    questions = [[q.name.to_wire().hex(), q.rdtype, q.rdclass] for q in m.question]
    records = []
    for number, section in ((1, m.answer), (2, m.authority), (3, m.additional)):
        for rrset in section:
            for rd in rrset:
                records.append(
                    [number, rrset.name.to_wire().hex(), rrset.rdtype, rrset.rdclass,
                     rrset.ttl, rd.to_wire().hex()])
    opt = None
    if m.opt is not None:
        opt = [m.opt.rdclass, m.opt.ttl, m.opt[0].to_wire().hex()]
    return {"ok": True, "id": m.id, "flags": m.flags, "q": questions, "rr": records, "opt": opt}


def key_of(req):
    name = dns.name.from_text(req["key"])
    return dns.tsig.Key(name, bytes.fromhex(req["secret"]), dns.name.from_text(req["alg"]))


def signed_message(req, key, number=0):
    m = dns.message.make_query(req.get("qname", "example.com."), "SOA")
    m.id = req.get("id", 4242)
    if req.get("request_mac") is not None:
        m.flags |= dns.flags.QR
        m.request_mac = bytes.fromhex(req["request_mac"])
        m.question = []
        rr = dns.rrset.from_text("r%d.example." % number, 60, "IN", "A", "192.0.2.%d" % (number % 250))
        m.answer.append(rr)
    m.use_tsig(key, fudge=req.get("fudge", 300))
    return m


def sign(req):
    key = key_of(req)
    m = signed_message(req, key)
    wire = m.to_wire()
    return {"wire": wire.hex(), "mac": m.mac.hex()}


def verify(req):
    key = key_of(req)
    keyring = {key.name: key}
    request_mac = bytes.fromhex(req["request_mac"]) if req.get("request_mac") else b""
    try:
        dns.message.from_wire(bytes.fromhex(req["wire"]), keyring=keyring, request_mac=request_mac)
    except Exception as e:
        return {"ok": False, "err": type(e).__name__}
    return {"ok": True}


def sign_seq(req):
    key = key_of(req)
    ctx = None
    wires = []
    for i in range(req["count"]):
        m = signed_message(req, key, i)
        wires.append(m.to_wire(multi=True, tsig_ctx=ctx).hex())
        ctx = m.tsig_ctx
    return {"wires": wires}


def verify_seq(req):
    key = key_of(req)
    keyring = {key.name: key}
    ctx = None
    try:
        for w in req["wires"]:
            m = dns.message.from_wire(
                bytes.fromhex(w), keyring=keyring, request_mac=bytes.fromhex(req["request_mac"]),
                xfr=True, tsig_ctx=ctx, multi=True, one_rr_per_rrset=True)
            ctx = m.tsig_ctx
    except Exception as e:
        return {"ok": False, "err": type(e).__name__}
    return {"ok": True}


OPS = {"parse": parse, "sign": sign, "verify": verify, "sign_seq": sign_seq,
       "verify_seq": verify_seq, "now": lambda req: {"now": int(time.time())}}

for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps(OPS[request["op"]](request)), flush=True)
