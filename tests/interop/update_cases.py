#!/usr/bin/env python3
"""Dynamic UPDATE (RFC 2136) sequences to replay against BIND, Knot DNS and Tern.

Every case gets its own zone (`cNN.test.`, the same records each), sends its messages
in order, and records each response code and then the zone as AXFR shows it. Run
against several servers, the results are compared case by case: a difference is
printed with both sides. `interop.py`'s `updates` scenario runs it with
`--servers bind,knot,tern --check-tern`.

  update_cases.py [--servers bind,knot] [--engine PATH] [--tern HOST:PORT]
                  [--only NAME[,NAME]] [--keep] [--list] [--show]

`--servers` starts the named servers on loopback (named, knotd, ternd; TSIG key
`upd.key.` allowed to update every zone). `--engine PATH` replays each case through Tern's engine
with the `update_replay` example (`cargo build -p tern-engine --example update_replay`),
as the zone's writer is to. `--tern HOST:PORT` adds a running server already serving
the zones (`--zones DIR` writes the zone files and stops, for setting one up); it must
let `upd.key.` update them. Exit status 1 when the results differ.

Each result is the RCODE (`+sig` when the answer's TSIG verifies, `+aa` when AA is set,
`+zocountN` unless the zone section is echoed once) and the zone by AXFR. Known
differences (BIND 9.18, Knot DNS 3.2, the engine): the engine signs every answer to a
verified request, BIND and Knot DNS leave some errors unsigned; add-existing-other-ttl
(Knot DNS keeps the old TTL), pre-fail-before-formerr (BIND prescans the update section
before the prerequisites), update-delete-ttl (Knot DNS accepts an RRset deletion with a
TTL). In every case the engine's zone equals BIND's.
"""

import argparse
import base64
import os
import shutil
import socket
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import dns.message  # noqa: E402
import dns.name  # noqa: E402
import dns.opcode  # noqa: E402
import dns.query  # noqa: E402
import dns.rcode  # noqa: E402
import dns.rdata  # noqa: E402
import dns.rdataclass  # noqa: E402
import dns.rdataset  # noqa: E402
import dns.rdatatype  # noqa: E402
import dns.rrset  # noqa: E402
import dns.tsigkeyring  # noqa: E402
import dns.update  # noqa: E402
import dns.zone  # noqa: E402

import peers  # noqa: E402

KEY = "upd.key."
SECRET = base64.b64encode(b"tern interop update key 32 byte!").decode()
KEYRING = dns.tsigkeyring.from_text({KEY: ("hmac-sha256", SECRET)})

ZONE = """\
@ 3600 SOA ns1 hostmaster 10 7200 3600 1209600 300
@ 3600 NS ns1
@ 3600 NS ns2
@ 3600 MX 10 mail
ns1 3600 A 192.0.2.53
ns2 3600 A 192.0.2.54
mail 3600 A 192.0.2.25
www 300 A 192.0.2.1
www 300 A 192.0.2.2
www 300 TXT "hello"
alias 300 CNAME www
host.deep 300 A 192.0.2.9
sub 3600 NS ns.sub
ns.sub 3600 A 192.0.2.99
"""

# Each step is ("section", kind, args...) applied to a dnspython UpdateMessage:
#   ("pre", "yx", name[, type])          name in use / RRset exists (class ANY)
#   ("pre", "nx", name[, type])          name not in use / RRset does not exist (NONE)
#   ("pre", "val", name, type, *rdata)   RRset exists, value-dependent (zone class)
#   ("add", name, ttl, type, rdata)      add (zone class)
#   ("del", name)                        delete all RRsets of a name (ANY ANY)
#   ("del", name, type)                  delete an RRset (ANY type)
#   ("del", name, type, rdata)           delete one RR (NONE type rdata)
#   ("raw", section, name, ttl, class, type, rdata-or-None)  any record as written
# A case is (name, [message, ...]) where a message is a list of steps, or a
# ("zone", name, type, class) tuple first to change the zone section.
CASES = [
    ("add-new-name", [[("add", "new", 300, "A", "192.0.2.7")]]),
    ("add-to-rrset", [[("add", "www", 300, "A", "192.0.2.3")]]),
    ("add-to-rrset-other-ttl", [[("add", "www", 60, "A", "192.0.2.3")]]),
    ("add-existing-same-ttl", [[("add", "www", 300, "A", "192.0.2.1")]]),
    ("add-existing-other-ttl", [[("add", "www", 60, "A", "192.0.2.1")]]),
    ("add-twice-in-one", [[("add", "n", 300, "A", "192.0.2.7"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("add-then-delete", [[("add", "n", 300, "A", "192.0.2.7"), ("del", "n", "A", "192.0.2.7")]]),
    ("delete-then-add", [[("del", "www", "A"), ("add", "www", 300, "A", "192.0.2.9")]]),
    ("add-cname-beside-data", [[("add", "www", 300, "CNAME", "mail")]]),
    ("add-data-beside-cname", [[("add", "alias", 300, "A", "192.0.2.4")]]),
    ("replace-cname", [[("add", "alias", 600, "CNAME", "mail")]]),
    ("cname-after-delete", [[("del", "www"), ("add", "www", 300, "CNAME", "mail")]]),
    ("soa-higher", [[("add", "@", 3600, "SOA", "ns1 hostmaster 20 7200 3600 1209600 300")]]),
    ("soa-lower", [[("add", "@", 3600, "SOA", "ns1 hostmaster 5 7200 3600 1209600 300")]]),
    ("soa-equal-with-change", [[("add", "@", 3600, "SOA", "ns1 hostmaster 10 1 1 1 1")]]),
    ("soa-higher-with-data", [[("add", "@", 3600, "SOA", "ns1 hostmaster 20 7200 3600 1209600 300"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("soa-not-apex", [[("add", "www", 3600, "SOA", "ns1 hostmaster 20 7200 3600 1209600 300")]]),
    ("delete-soa-rr", [[("del", "@", "SOA", "ns1 hostmaster 10 7200 3600 1209600 300")]]),
    ("delete-soa-rrset", [[("del", "@", "SOA")]]),
    ("delete-apex-ns-rrset", [[("del", "@", "NS")]]),
    ("delete-one-apex-ns", [[("del", "@", "NS", "ns1")]]),
    ("delete-both-apex-ns", [[("del", "@", "NS", "ns1"), ("del", "@", "NS", "ns2")]]),
    ("delete-apex-all", [[("del", "@")]]),
    ("delete-name", [[("del", "www")]]),
    ("delete-rrset", [[("del", "www", "A")]]),
    ("delete-rr", [[("del", "www", "A", "192.0.2.1")]]),
    ("delete-missing-rr", [[("del", "www", "A", "192.0.2.99")]]),
    ("delete-missing-name", [[("del", "nothing")]]),
    ("delete-delegation", [[("del", "sub", "NS")]]),
    ("add-below-delegation", [[("add", "x.sub", 300, "A", "192.0.2.8")]]),
    ("pre-name-in-use", [[("pre", "yx", "www"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("pre-name-in-use-fails", [[("pre", "yx", "nothing"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("pre-name-in-use-ent", [[("pre", "yx", "deep")]]),
    ("pre-name-not-in-use", [[("pre", "nx", "nothing"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("pre-name-not-in-use-fails", [[("pre", "nx", "www")]]),
    ("pre-name-not-in-use-ent", [[("pre", "nx", "deep")]]),
    ("pre-rrset-exists", [[("pre", "yx", "www", "TXT")]]),
    ("pre-rrset-exists-fails", [[("pre", "yx", "www", "MX")]]),
    ("pre-rrset-absent", [[("pre", "nx", "www", "MX")]]),
    ("pre-rrset-absent-fails", [[("pre", "nx", "www", "A")]]),
    ("pre-value", [[("pre", "val", "www", "A", "192.0.2.2", "192.0.2.1"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("pre-value-subset-fails", [[("pre", "val", "www", "A", "192.0.2.1")]]),
    ("pre-value-superset-fails", [[("pre", "val", "www", "A", "192.0.2.1", "192.0.2.2", "192.0.2.3")]]),
    ("pre-value-missing-fails", [[("pre", "val", "nothing", "A", "192.0.2.1")]]),
    ("pre-ttl-not-zero", [[("raw", "pre", "www", 300, "ANY", "A", None)]]),
    ("pre-any-with-rdata", [[("raw", "pre", "www", 0, "ANY", "A", "192.0.2.1")]]),
    ("pre-none-with-rdata", [[("raw", "pre", "www", 0, "NONE", "A", "192.0.2.1")]]),
    ("pre-other-class", [[("raw", "pre", "www", 0, "CH", "A", None)]]),
    ("pre-outside-zone", [[("pre", "yx", "www.elsewhere.")]]),
    ("pre-fail-before-formerr", [[("pre", "yx", "nothing"), ("raw", "up", "www", 300, "ANY", "A", None)]]),
    ("update-outside-zone", [[("add", "www.elsewhere.", 300, "A", "192.0.2.1")]]),
    ("update-other-class", [[("raw", "up", "n", 300, "CH", "A", "192.0.2.1")]]),
    ("update-add-any", [[("raw", "up", "n", 300, "IN", "ANY", None)]]),
    ("update-add-axfr", [[("raw", "up", "n", 300, "IN", "AXFR", None)]]),
    ("update-delete-ttl", [[("raw", "up", "www", 300, "ANY", "A", None)]]),
    ("update-delete-axfr", [[("raw", "up", "www", 0, "ANY", "AXFR", None)]]),
    ("update-delete-rr-ttl", [[("raw", "up", "www", 300, "NONE", "A", "192.0.2.1")]]),
    ("update-delete-rr-any", [[("raw", "up", "www", 0, "NONE", "ANY", None)]]),
    ("update-bad-rdata", [[("raw", "up", "n", 300, "IN", "A", b"\x01\x02")]]),
    ("notzone-after-good", [[("add", "n", 300, "A", "192.0.2.7"), ("add", "x.elsewhere.", 300, "A", "192.0.2.1")]]),
    ("zone-not-apex", [[("zone", "www", "SOA", "IN"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("zone-type-not-soa", [[("zone", "@", "A", "IN"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("zone-class-ch", [[("zone", "@", "SOA", "CH"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("zone-unknown", [[("zone", "unknown.invalid.", "SOA", "IN"), ("add", "n", 300, "A", "192.0.2.7")]]),
    ("empty-update", [[]]),
    ("sequence-add-then-prereq", [[("add", "n", 300, "A", "192.0.2.7")], [("pre", "val", "n", "A", "192.0.2.7"), ("del", "n", "A")]]),
    ("acme-challenge", [[("add", "_acme-challenge.www", 60, "TXT", '"token-1"')], [("del", "_acme-challenge.www", "TXT")]]),
    ("txt-case-differs", [[("add", "www", 300, "TXT", '"HELLO"')]]),
    ("ns-target-case", [[("add", "@", 3600, "NS", "NS1")]]),
]


def zone_name(index):
    return f"c{index:02d}.test."


def server_bind(port, work, zones):
    text = "".join(
        f'zone "{z}" {{ type primary; file "{work}/{z}zone"; allow-update {{ key "{KEY}"; }}; '
        f"check-integrity no; }};\n"
        for z in zones
    )
    conf = f"""key "{KEY}" {{ algorithm hmac-sha256; secret "{SECRET}"; }};
options {{
  directory "{work}";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  pid-file "{work}/named.pid";
  session-keyfile "{work}/session.key";
  allow-transfer {{ any; }};
  check-names primary ignore;
}};
controls {{ }};
{text}"""
    path = os.path.join(work, "named.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["named", "-g", "-n", "1", "-c", path]


def server_knot(port, work, zones):
    text = "".join(f"  - domain: {z}\n    file: {work}/{z}zone\n" for z in zones)
    conf = f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: stderr
    any: info
database:
  storage: {work}
key:
  - id: {KEY}
    algorithm: hmac-sha256
    secret: {SECRET}
acl:
  - id: update
    key: {KEY}
    action: update
  - id: transfer
    action: transfer
template:
  - id: default
    storage: {work}
    acl: [update, transfer]
    semantic-checks: off
zone:
{text}"""
    path = os.path.join(work, "knot.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["knotd", "-c", path]


def server_tern(port, work, zones):
    """Tern (`$TERND`, else the release build) with `KEY` allowed to update every zone
    and AXFR open to loopback."""
    text = "".join(f'[[zone]]\nname = "{z}"\nfile = "{work}/{z}zone"\nacl = ["update", "transfer"]\n' for z in zones)
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[[key]]
name = "{KEY}"
algorithm = "hmac-sha256"
secret = "{SECRET}"
[[acl]]
id = "update"
key = "{KEY}"
action = "update"
[[acl]]
id = "transfer"
address = "127.0.0.0/8"
action = "transfer"
{text}"""
    path = os.path.join(work, "ternd.toml")
    with open(path, "w") as f:
        f.write(conf)
    return [os.environ.get("TERND") or peers.default_ternd(REPO, "release"), "--config", path]


def tern_agrees(results):
    """Failures of Tern's results against BIND's and Knot DNS's: each case's zone must
    equal BIND's (whose choices Tern follows where the RFC leaves room) and its RCODEs
    must be BIND's or Knot DNS's (TSIG marks aside: Tern signs every answer to a
    verified request)."""
    failures = []
    plain = lambda codes: [c.split("+")[0] for c in codes]  # noqa: E731
    for case, (rcodes, lines) in results["tern"].items():
        bind_codes, bind_lines = results["bind"][case]
        knot_codes = results.get("knot", {}).get(case, (bind_codes, None))[0]
        if lines != bind_lines:
            only = [l for l in lines if l not in bind_lines][:4]
            missing = [l for l in bind_lines if l not in lines][:4]
            failures.append(f"{case}: zone differs from BIND's: extra {only}, missing {missing}")
        if plain(rcodes) not in (plain(bind_codes), plain(knot_codes)):
            failures.append(f"{case}: RCODEs {rcodes}, BIND {bind_codes}, Knot DNS {knot_codes}")
    return failures


def write_zones(directory, zones):
    for z in zones:
        with open(os.path.join(directory, f"{z}zone"), "w") as f:
            f.write(f"$ORIGIN {z}\n{ZONE}")


def name_in(zone, text):
    return dns.name.from_text(text, dns.name.from_text(zone))


def build(zone, steps):
    """The UPDATE message for `steps` (see CASES) in `zone`."""
    zsection = None
    if steps and isinstance(steps[0], tuple) and steps[0][0] == "zone":
        _, zname, ztype, zclass = steps[0]
        zsection = (name_in(zone, zname), dns.rdatatype.from_text(ztype), dns.rdataclass.from_text(zclass))
        steps = steps[1:]
    msg = dns.update.UpdateMessage(zone, keyring=KEYRING, keyname=KEY)
    for step in steps:
        apply_step(msg, zone, step)
    if zsection:
        msg.zone[0] = dns.rrset.RRset(zsection[0], zsection[2], zsection[1])
    return msg


def apply_step(msg, zone, step):
    kind, rest = step[0], step[1:]
    if kind == "pre":
        how, name, args = rest[0], name_in(zone, rest[1]), rest[2:]
        if how == "yx":
            msg.present(name, *args)
        elif how == "nx":
            msg.absent(name, *args)
        else:
            msg.present(name, dns.rdataset.from_text("IN", args[0], 0, *args[1:]))
    elif kind == "add":
        name, ttl, rtype, rdata = rest
        msg.add(name_in(zone, name), ttl, rtype, rdata)
    elif kind == "del":
        msg.delete(name_in(zone, rest[0]), *rest[1:])
    elif kind == "raw":
        raw_record(msg, zone, *rest)


def raw_record(msg, zone, section, name, ttl, rclass, rtype, rdata):
    """A record as written, whatever RFC 2136 says of it."""
    rclass, rtype = dns.rdataclass.from_text(rclass), dns.rdatatype.from_text(rtype)
    target = msg.prerequisite if section == "pre" else msg.update
    deleting = rclass if rclass in (dns.rdataclass.ANY, dns.rdataclass.NONE) else None
    data_class = dns.rdataclass.IN if deleting else rclass
    rrset = msg.find_rrset(target, name_in(zone, name), data_class, rtype, dns.rdatatype.NONE, deleting, True, True)
    if isinstance(rdata, bytes):
        rrset.add(dns.rdata.GenericRdata(data_class, rtype, rdata), ttl)
    elif rdata is not None:
        parsed = dns.rdata.from_text("IN", rtype, rdata, origin=dns.name.from_text(zone))
        rrset.add(dns.rdata.GenericRdata(data_class, rtype, parsed.to_wire()), ttl)
    else:
        rrset.update_ttl(ttl)
        # An empty RRset with a TTL: written as one record without RDATA.
        rrset.add(EmptyRdata(data_class, rtype), ttl)


class EmptyRdata(dns.rdata.Rdata):
    """RDATA of length zero (dnspython writes empty RRsets only for ANY/NONE deletions)."""

    def _to_wire(self, file, compress=None, origin=None, canonicalize=False):
        pass

    def to_text(self, origin=None, relativize=True, **kw):
        return ""


def send(addr, msg):
    """The response code, read from the header (an unsigned error answer to a signed
    request is normal: the zone section may not name a zone of the server); `+sig` when
    the answer carries a TSIG that verifies."""
    wire = msg.to_wire()
    with socket.create_connection(addr, timeout=5) as s:
        s.sendall(struct.pack("!H", len(wire)) + wire)
        size = struct.unpack("!H", read_exactly(s, 2))[0]
        data = read_exactly(s, size)
    rcode = dns.rcode.to_text(data[3] & 0x0F) + ("+aa" if data[2] & 0x04 else "")
    rcode += "" if data[4:6] == b"\x00\x01" else "+zocount" + str(data[5])
    try:
        answer = dns.message.from_wire(data, keyring=KEYRING, request_mac=msg.mac)
        return rcode + ("+sig" if answer.had_tsig else "")
    except Exception:  # noqa: BLE001 - unsigned or not verifiable: the code alone
        return rcode


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise OSError("connection closed")
        data += chunk
    return data


def contents(addr, zone):
    """The zone as AXFR shows it: sorted text lines, relative names."""
    try:
        z = dns.zone.from_xfr(dns.query.xfr(addr[0], zone, port=addr[1], timeout=5))
    except Exception as e:  # noqa: BLE001 - any failure is a result to compare
        return [f"AXFR failed: {type(e).__name__}"]
    return sorted(z.to_text(relativize=True).splitlines())


def run(addr, cases):
    results = {}
    for index, (name, messages) in cases:
        zone = zone_name(index)
        rcodes = [send(addr, build(zone, m)) for m in messages]
        results[name] = (rcodes, contents(addr, zone))
    return results


def run_engine(binary, work, cases):
    """Each case through `update_replay`: the same rcodes and zone text as `run`."""
    import subprocess

    results = {}
    for index, (name, messages) in cases:
        zone = zone_name(index)
        zone_file = os.path.join(work, f"{zone}zone")
        files = []
        for n, m in enumerate(messages):
            path = os.path.join(work, f"{zone}msg{n}")
            with open(path, "wb") as f:
                f.write(build(zone, m).to_wire())
            files.append(path)
        done = subprocess.run(
            [binary, zone, zone_file, KEY, SECRET, *files], capture_output=True, text=True, check=True
        )
        head, _, text = done.stdout.partition("--\n")
        z = dns.zone.from_text(text, origin=zone, relativize=True, check_origin=False)
        results[name] = (head.split(), sorted(z.to_text(relativize=True).splitlines()))
    return results


def wait_serving(addr, zone, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            q = dns.message.make_query(zone, "SOA")
            r = dns.query.udp(q, addr[0], port=addr[1], timeout=0.5)
            if r.rcode() == 0 and r.answer:
                return True
        except Exception:  # noqa: BLE001
            pass
        time.sleep(0.2)
    return False


def start(kind, build_conf, work, zones, tries=3):
    """Start one server on a port chosen just before it starts (a port chosen earlier may
    have been taken meanwhile as another server's source port) and wait until it serves
    the last zone. A start that fails because the port is in use is tried on another."""
    for attempt in range(tries):
        port = peers.free_port()
        here = work if attempt == 0 else f"{work}.{attempt}"
        os.makedirs(here)
        write_zones(here, zones)
        server = peers.Server(kind, [], port, here, build_conf(port, here, zones), None)
        if serving(server, zones[-1]) or "in use" not in log_tail(server).lower():
            return server
        server.stop()
    return server


def serving(server, zone, timeout=30):
    """Whether the server answers for `zone` within `timeout` seconds (False at once when
    it has exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.proc.poll() is None:
        if wait_serving(("127.0.0.1", server.port), zone, timeout=0.5):
            return True
    return False


def log_tail(server, lines=30):
    try:
        with open(server.log_path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def compare(results):
    differ = 0
    names = list(next(iter(results.values())).keys())
    for case in names:
        seen = {server: results[server][case] for server in results}
        first = next(iter(seen.values()))
        same = all(v == first for v in seen.values())
        marks = "  ".join(f"{s}={'/'.join(v[0])}" for s, v in seen.items())
        print(f"{'same' if same else 'DIFF'}  {case:28} {marks}")
        if not same:
            differ += 1
            for s, (rcodes, lines) in seen.items():
                others = [l for v in seen.values() if v is not seen[s] for l in v[1]]
                only = [l for l in lines if l not in others]
                print(f"      {s}: only here: {only}")
    return differ


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--servers", default="bind,knot", help="of bind, knot, tern (started here)")
    p.add_argument("--check-tern", action="store_true",
                   help="pass when Tern's zones equal BIND's and its RCODEs match a peer's")
    p.add_argument("--engine", help="path of the update_replay example")
    p.add_argument("--tern", help="HOST:PORT of a running Tern serving the zones")
    p.add_argument("--zones", help="write the zone files into DIR and stop")
    p.add_argument("--only")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--list", action="store_true")
    p.add_argument("--show", action="store_true", help="print each server's zone after each case")
    args = p.parse_args()
    cases = list(enumerate(CASES, start=1))
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c[1][0] in wanted]
    if args.list:
        for index, (name, messages) in cases:
            print(zone_name(index), name, len(messages))
        return 0
    zones = [zone_name(i) for i, _ in cases]
    if args.zones:
        write_zones(args.zones, [zone_name(i) for i in range(1, len(CASES) + 1)])
        return 0
    base = tempfile.mkdtemp(prefix="tern-update-")
    builders = {"bind": server_bind, "knot": server_knot, "tern": server_tern}
    started, results = [], {}
    try:
        for kind in filter(None, args.servers.split(",")):
            server = start(kind, builders[kind], os.path.join(base, kind), zones)
            started.append(server)
            if not serving(server, zones[-1], timeout=1):
                print(f"{kind} did not start; its log ends:\n{log_tail(server)}")
                return 1
            results[kind] = run(("127.0.0.1", server.port), cases)
        if args.engine:
            work = os.path.join(base, "engine")
            os.makedirs(work)
            write_zones(work, zones)
            results["engine"] = run_engine(args.engine, work, cases)
        if args.tern:
            host, port = args.tern.rsplit(":", 1)
            results["tern"] = run((host, int(port)), cases)
    finally:
        for server in started:
            server.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    if args.show:
        for server, cases_seen in results.items():
            for case, (rcodes, lines) in cases_seen.items():
                print(f"== {server} {case} {'/'.join(rcodes)}")
                print("\n".join("   " + line for line in lines))
    differ = compare(results)
    if args.check_tern:
        failures = tern_agrees(results)
        for failure in failures:
            print(f"FAIL {failure}")
        print(f"tern: {len(results['tern'])} cases, {len(failures)} disagreements")
        return 1 if failures else 0
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
