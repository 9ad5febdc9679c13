#!/usr/bin/env python3
"""Zone transfers, NOTIFY and TSIG between Tern and the real servers, on loopback.

Scenarios (each reports pass or fail; exit status 1 when any failed):
  * tern-primary: Tern serves three zones (one unsigned of some 3,000 records, one
    NSEC-signed, one NSEC3-signed) to Knot DNS, NSD, BIND and Tern secondaries: first
    transfer, then a change on Tern (edit, SIGHUP), NOTIFY, IXFR; every secondary's copy
    must equal Tern's (compared by AXFR).
  * knot-primary, bind-primary: the same steps with the peer as primary and Tern as
    secondary, TSIG required; a second Tern with the wrong key must be refused and
    serve nothing.
  * faults: a scripted primary (`fake.py`) that vanishes mid-transfer, sends a broken
    message, a lower serial, a zone over the size limit, or a bad TSIG: Tern keeps the
    old zone, logs the error, and retries as the SOA's retry interval says.
  * updates, forwarding: dynamic updates with nsupdate and against BIND and Knot DNS,
    and forwarded by secondaries (see updates.py).
  * catalogs: catalog zones, Knot DNS producer → Tern consumer, Tern producer → Knot
    DNS and BIND consumers (see catalogs.py).
  * via: a Knot DNS primary whose ACL allows transfers from 127.0.0.9 alone serves a
    Tern secondary whose remote has `via = "127.0.0.9"` (one without is refused); a Knot
    DNS secondary whose ACL takes NOTIFY from 127.0.0.10 alone follows a Tern primary
    whose remote has `via = "127.0.0.10"`.
  * backup: `ternctl zone-backup`, a change, then `zone-restore` on a Tern primary: a
    Knot DNS secondary takes the restore by NOTIFY and IXFR (serial raised) and equals
    Tern's copy.
  * xot-out: zone transfers over TLS (RFC 9103) from a Tern primary to BIND (mutual TLS)
    and NSD (a pinned client key) secondaries, by NOTIFY and IXFR; plain TCP refused, a
    secondary expecting another name or without a certificate gets nothing (see xot_out.py).
  * xot-in: zone transfers over TLS (RFC 9103): BIND 9.18 serving over TLS only, Tern
    secondaries checking it by key pin, by name and CA, opportunistically, and with a
    client certificate (mutual TLS); a change by NOTIFY and IXFR over TLS; a wrong pin,
    a wrong name and a missing client certificate refused (see xot_in.py).

  interop.py [--tern PATH] [--only NAME[,NAME]] [--keep]
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import dns.message  # noqa: E402
import dns.query  # noqa: E402
import dns.rcode  # noqa: E402
import dns.rdatatype  # noqa: E402
import dns.rrset  # noqa: E402
import dns.tsigkeyring  # noqa: E402
import dns.xfr  # noqa: E402

import catalogs  # noqa: E402
import fake  # noqa: E402
import servers  # noqa: E402
import signing  # noqa: E402
import updates  # noqa: E402
import xot_in  # noqa: E402
import xot_out  # noqa: E402
from checks import (  # noqa: E402
    KEYRING, Failure, axfr, check, log_of, rcode, same_zone, soa_serial, wait_serial,
)
from servers import KEY, SECRET, peers  # noqa: E402

CONFORMANCE = os.path.join(REPO, "tests", "conformance", "zones")


def unsigned_zone(serial, extra=""):
    lines = [
        "$ORIGIN big.example.",
        "$TTL 3600",
        f"@ SOA ns1 hostmaster {serial} 3600 600 86400 300",
        "@ NS ns1",
        "@ NS ns2.example.net.",
        "ns1 A 192.0.2.53",
        "@ MX 10 mail",
        "mail A 192.0.2.25",
        "* TXT \"wildcard\"",
        "sub NS ns.sub",
        "ns.sub A 192.0.2.99",
        "big TXT " + " ".join(f'"{"x" * 200}"' for _ in range(20)),
    ]
    for i in range(1500):
        lines.append(f"host{i} 300 A 10.0.{i >> 8}.{i & 255}")
        lines.append(f"host{i} 300 AAAA 2001:db8::{i:x}")
    return "\n".join(lines) + "\n" + extra


class Run:
    """One run's ports, work directories and servers (stopped at the end)."""

    def __init__(self, tern_bin, keep):
        self.tern_bin = tern_bin
        self.root = tempfile.mkdtemp(prefix="tern-interop-")
        self.keep = keep
        self.started = []

    def work(self, name):
        path = os.path.join(self.root, name)
        os.makedirs(path, exist_ok=True)
        return path

    def start(self, kind, argv_for, port=None, name=None):
        """Starts `kind` with `argv_for(port, work)` on `port` (a free one by default)."""
        port = port or peers.free_port()
        work = self.work(name or f"{kind}-{port}")
        server = servers.launch(kind, argv_for(port, work), port, work)
        self.started.append(server)
        return server

    def tern(self, zones, secret=SECRET, extra="", port=None, name=None):
        argv_for = lambda p, w: servers.tern(p, w, self.tern_bin, zones, secret, extra)  # noqa: E731
        return self.start("tern", argv_for, port=port, name=name)

    def close(self):
        for server in self.started:
            server.stop()
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            print(f"  work kept in {self.root}")


def tern_primary(run):
    """Tern → Knot DNS, NSD, BIND and Tern secondaries: AXFR, change, NOTIFY, IXFR."""
    work = run.work("primary-zones")
    big = os.path.join(work, "big.example.zone")
    with open(big, "w") as f:
        f.write(unsigned_zone(1))
    zones = [("big.example.", big, 1)]
    for origin in ("secure.example.", "optout.example."):
        path = os.path.join(work, origin + "zone")
        shutil.copy(os.path.join(CONFORMANCE, origin + "zone.signed"), path)
        zones.append((origin, path, None))
    ports = {kind: peers.free_port() for kind in ("knot", "nsd", "bind", "tern2")}
    primary_port = peers.free_port()
    notify = [("127.0.0.1", p) for p in ports.values()]
    plan = [{"origin": o, "file": f, "notify": notify} for o, f, _ in zones]
    primary = run.tern(plan, port=primary_port, name="tern-primary")
    serials = {}
    for origin, _, _ in zones:
        deadline = time.monotonic() + 20
        while serials.get(origin) is None and time.monotonic() < deadline:
            serials[origin] = soa_serial(primary_port, origin)
            time.sleep(0.05)
        check(serials[origin] is not None, f"Tern primary does not serve {origin}:\n{primary.log_tail()}")
    secondary_zones = [{"origin": o, "primary": ("127.0.0.1", primary_port)} for o, _, _ in zones]
    builders = {"knot": servers.knot, "nsd": servers.nsd, "bind": servers.bind}
    secondaries = {}
    for kind, port in ports.items():
        if kind == "tern2":
            secondaries[kind] = run.tern(secondary_zones, port=port, name="tern-secondary")
            continue
        argv_for = lambda p, w, b=builders[kind]: b(p, w, secondary_zones)  # noqa: E731
        secondaries[kind] = run.start(kind, argv_for, port=port, name=f"{kind}-secondary")
    for origin, serial in serials.items():
        for kind, server in secondaries.items():
            wait_serial(server.port, origin, serial, who=kind)
            same_zone(primary_port, server.port, origin, f"{kind} after the first transfer")
    print("    first transfer: every secondary equals Tern on all three zones")
    # A change on Tern: edit, reload; NOTIFY brings IXFR to every secondary.
    with open(big, "w") as f:
        f.write(unsigned_zone(2, "new 60 A 192.0.2.200\n").replace("host7 300 A 10.0.0.7\n", ""))
    os.kill(primary.proc.pid, signal.SIGHUP)
    for kind, server in secondaries.items():
        wait_serial(server.port, "big.example.", 2, timeout=30, who=kind)
        same_zone(primary_port, server.port, "big.example.", f"{kind} after the change")
    log = log_of(primary)
    for kind, server in secondaries.items():
        check("kind=\"IXFR\"" in log, f"no IXFR out in Tern's log:\n{log[-3000:]}")
    ixfrs = log.count('kind="IXFR" from="1" serial=2')
    check(ixfrs >= 4, f"{ixfrs} IXFRs from 1 to 2 in Tern's log, want one per secondary")
    notified = log.count("NOTIFY acknowledged zone=big.example.")
    check(notified >= 4, f"{notified} NOTIFYs acknowledged for big.example., want 4")
    print(f"    change: NOTIFY acknowledged by all 4, {ixfrs} IXFRs, copies equal")
    # An edit that leaves the serial alone is refused: the primary keeps serving serial 2
    # as its secondaries have it, rather than other data under the same serial.
    with open(big, "w") as f:
        f.write(unsigned_zone(2, "new 60 A 192.0.2.200\nsame-serial 60 A 192.0.2.201\n")
                .replace("host7 300 A 10.0.0.7\n", ""))
    os.kill(primary.proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "serial 2 did not rise" not in log_of(primary) and time.monotonic() < deadline:
        time.sleep(0.05)
    check("serial 2 did not rise" in log_of(primary), f"no refusal logged:\n{log_of(primary)[-2000:]}")
    answer = dns.query.udp(dns.message.make_query("same-serial.big.example.", "A"), "127.0.0.1",
                           port=primary_port, timeout=2)
    check(not answer.answer, f"the primary serves an edit whose serial did not rise: {answer}")
    for kind, server in secondaries.items():
        same_zone(primary_port, server.port, "big.example.", f"{kind} after an edit without a new serial")
    print("    an edit without a new serial: refused, the primary and its secondaries still equal")


def peer_primary(run, kind):
    """`kind` (knot or bind) as primary → Tern secondary, TSIG required; a wrong key is
    refused."""
    work = run.work(f"{kind}-zones")
    path = os.path.join(work, "big.example.zone")
    with open(path, "w") as f:
        f.write(unsigned_zone(10))
    tern_port, wrong_port = peers.free_port(), peers.free_port()
    zones = [{"origin": "big.example.", "file": path, "notify": [("127.0.0.1", tern_port)]}]
    builder = servers.knot if kind == "knot" else servers.bind
    primary = run.start(kind, lambda p, w: builder(p, w, zones), name=f"{kind}-primary")
    primary_port = primary.port
    wait_serial(primary_port, "big.example.", 10, who=kind)
    ours = [{"origin": "big.example.", "primary": ("127.0.0.1", primary_port)}]
    tern = run.tern(ours, port=tern_port, name=f"tern-of-{kind}")
    wrong = run.tern(ours, secret=servers.WRONG_SECRET, port=wrong_port, name=f"tern-wrong-key-of-{kind}")
    wait_serial(tern_port, "big.example.", 10, who="tern")
    same_zone(primary_port, tern_port, "big.example.", f"tern from {kind}")
    with open(path, "w") as f:
        f.write(unsigned_zone(11, "changed 60 TXT \"by the primary\"\n"))
    if kind == "knot":
        reload = peers.subprocess.run(["knotc", "-s", os.path.join(primary.work, "knot.sock"),
                                       "zone-reload", "big.example."], capture_output=True, text=True)
        check(reload.returncode == 0, f"knotc zone-reload: {reload.stdout}{reload.stderr}")
    else:
        os.kill(primary.proc.pid, signal.SIGHUP)
    wait_serial(tern_port, "big.example.", 11, timeout=30, who="tern")
    same_zone(primary_port, tern_port, "big.example.", f"tern from {kind} after the change")
    log = log_of(tern)
    check('kind="IXFR"' in log, f"Tern did not take the change by IXFR:\n{log[-3000:]}")
    check("NOTIFY received" in log, f"Tern got no NOTIFY from {kind}")
    check(rcode(wrong_port, "big.example.") == dns.rcode.SERVFAIL, "the wrong-key secondary serves data")
    wrong_log = log_of(wrong)
    check("refresh failed" in wrong_log and ("BADSIG" in wrong_log or "BADKEY" in wrong_log),
          f"the wrong key's failure is not logged:\n{wrong_log[-2000:]}")
    print(f"    {kind} → Tern: AXFR, then NOTIFY and IXFR, copies equal; wrong key refused")


def knot_with_acls(port, work, zones, acls):
    """Knot DNS with `zones` (origin, file or primary (host, port)) whose only rule for
    `action` is the address `acls[action]`, with the run's key."""
    remote = lambda a: f"  - id: r{a[1]}\n    address: {a[0]}@{a[1]}\n    key: {KEY}\n"  # noqa: E731
    remotes = "".join(remote(z["primary"]) for z in zones if "primary" in z)
    rules = "".join(f"  - id: {action}\n    address: {address}\n    key: {KEY}\n    action: {action}\n"
                    for action, address in acls.items())
    lines = []
    for z in zones:
        line = f"  - domain: {z['origin']}\n    acl: [{', '.join(acls)}]\n"
        if "primary" in z:
            line += f"    master: r{z['primary'][1]}\n    file: {work}/{z['origin']}zone\n"
        else:
            line += f"    file: {z['file']}\n"
        lines.append(line)
    conf = servers.knot_base(port, work) + ("remote:\n" + remotes if remotes else "") + \
        "acl:\n" + rules + "zone:\n" + "".join(lines)
    path = os.path.join(work, "knot.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["knotd", "-c", path]


def via(run):
    """`[[remote]] via` against Knot DNS ACLs that name one source address."""
    work = run.work("via-zones")
    path = os.path.join(work, "big.example.zone")
    with open(path, "w") as f:
        f.write(unsigned_zone(1))
    zones = [{"origin": "big.example.", "file": path}]
    primary = run.start("knot", lambda p, w: knot_with_acls(p, w, zones, {"transfer": "127.0.0.9"}),
                        name="knot-acl-primary")
    wait_serial(primary.port, "big.example.", 1, who="knot")
    ours = {"origin": "big.example.", "primary": ("127.0.0.1", primary.port)}
    tern = run.tern([dict(ours, via="127.0.0.9")], name="tern-via")
    plain = run.tern([ours], name="tern-without-via")
    wait_serial(tern.port, "big.example.", 1, who="tern with via")
    # Knot DNS answers no other address, so the copy is compared with the file it serves.
    import dns.zone
    served = dns.zone.from_file(path, "big.example.", relativize=False)
    want = sorted({f"{n.to_text().lower()} {ttl} {dns.rdatatype.to_text(r.rdtype)} {r.to_text().lower()}"
                   for n, ttl, r in served.iterate_rdatas()})
    check(axfr(tern.port, "big.example.") == want, "Tern's copy (via 127.0.0.9) differs from the primary's file")
    check(rcode(plain.port, "big.example.") == dns.rcode.SERVFAIL, "Knot DNS served a secondary without via")
    print("    Knot DNS primary, transfers from 127.0.0.9 only: Tern with via served, without refused")

    tern_port = peers.free_port()
    theirs = [{"origin": "big.example.", "primary": ("127.0.0.1", tern_port)}]
    secondary = run.start("knot", lambda p, w: knot_with_acls(p, w, theirs, {"notify": "127.0.0.10"}),
                          name="knot-acl-secondary")
    own = os.path.join(work, "own.big.example.zone")
    with open(own, "w") as f:
        f.write(unsigned_zone(1))
    notify = [("127.0.0.1", secondary.port)]
    told = run.tern([{"origin": "big.example.", "file": own, "notify": notify, "via": "127.0.0.10"}],
                    port=tern_port, name="tern-via-primary")
    wait_serial(told.port, "big.example.", 1, who="tern primary")
    wait_serial(secondary.port, "big.example.", 1, who="knot secondary")
    with open(own, "w") as f:
        f.write(unsigned_zone(2))
    os.kill(told.proc.pid, signal.SIGHUP)
    # Knot DNS refreshes after 3600 s (the SOA's refresh): only a NOTIFY it took brings 2.
    wait_serial(secondary.port, "big.example.", 2, timeout=15, who="knot secondary")
    check("NOTIFY acknowledged" in log_of(told), "the NOTIFY from 127.0.0.10 was not acknowledged")
    print("    Knot DNS secondary, NOTIFY from 127.0.0.10 only: Tern's NOTIFY with via taken")


def faults(run):
    """A scripted primary misbehaves; Tern keeps serving its last good version."""
    primary = fake.Primary("big.example.", KEYRING, KEY)
    primary.set_zone(unsigned_zone(1).replace(" 3600 600 86400", " 2 1 86400"))
    try:
        zones = [{"origin": "big.example.", "primary": ("127.0.0.1", primary.port)}]
        extra = '[transfer]\nmax-zone-size = "400K"\ntimeout = "2s"\n[[template]]\nid = "default"\nrefresh-min = "1s"\nretry-min = "1s"\n'
        tern = run.tern(zones, extra=extra, name="tern-faults")
        wait_serial(tern.port, "big.example.", 1, who="tern")
        cases = [
            ("cut", "mid-transfer", "closed the connection"),
            ("broken", "broken message", "broken answer"),
            ("lower", "lower serial", "not newer"),
            ("big", "over max-zone-size", "max-zone-size"),
            ("badsig", "bad TSIG", "TSIG"),
        ]
        for mode, what, logged in cases:
            mark = len(log_of(tern))
            primary.set_mode(mode, serial=2)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                recent = log_of(tern)[mark:]
                if "refresh failed" in recent:
                    break
                time.sleep(0.1)
            recent = log_of(tern)[mark:]
            check("refresh failed" in recent, f"{what}: no failure logged:\n{recent[-2000:]}")
            check(logged.lower() in recent.lower() or mode == "lower",
                  f"{what}: the log does not say why ({logged!r}):\n{recent[-2000:]}")
            check(soa_serial(tern.port, "big.example.") == 1, f"{what}: serial 1 no longer served")
            check("retry_in=1" in recent or "retry_in=2" in recent, f"{what}: retry not from the SOA:\n{recent[-1500:]}")
            print(f"    {what}: kept serial 1, logged, retried after the SOA's retry interval")
        primary.set_mode("good", serial=3)
        wait_serial(tern.port, "big.example.", 3, timeout=15, who="tern")
        print("    a good primary again: serial 3 taken")
        restart_and_expire(run, tern, primary, zones, extra)
    finally:
        primary.close()


def restart_and_expire(run, tern, primary, zones, extra):
    """A restarted secondary serves its kept copy at once; without a primary for the
    SOA's expire time, it answers SERVFAIL."""
    tern.stop()
    restarted = run.tern(zones, extra=extra, port=tern.port, name="tern-faults")
    wait_serial(restarted.port, "big.example.", 3, timeout=10, who="restarted tern")
    log = log_of(restarted)
    kept = log.find("zone loaded from the kept copy")
    check(kept >= 0, f"the kept copy was not served:\n{log[-2000:]}")
    check("transfer in done" not in log[:kept], "a transfer came before the kept copy")
    print("    restart: the kept copy served at once, refresh as its timers say")
    primary.set_zone(unsigned_zone(4).replace(" 3600 600 86400", " 2 1 6"))
    primary.set_mode("good", serial=4)
    wait_serial(restarted.port, "big.example.", 4, timeout=15, who="tern")
    primary.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and rcode(restarted.port, "big.example.") != dns.rcode.SERVFAIL:
        time.sleep(0.2)
    check(rcode(restarted.port, "big.example.") == dns.rcode.SERVFAIL, "the zone did not expire")
    check("zone expired" in log_of(restarted), "the expiry is not logged")
    print("    no primary for the SOA's expire time (6 s): SERVFAIL, logged")


def ixfr_kind(port, zone, serial):
    """How `port` answers IXFR from `serial`: 'incremental', 'whole' or 'up-to-date'."""
    query = dns.message.make_query(zone, "IXFR")
    soa = dns.rrset.from_text(zone, 0, "IN", "SOA", f"ns1.{zone} hostmaster.{zone} {serial} 1 1 1 1")
    query.authority.append(soa)
    query.use_tsig(KEYRING, keyname=KEY)
    answer = dns.query.tcp(query, "127.0.0.1", port=port, timeout=10, one_rr_per_rrset=True)
    records = [(rrset.rdtype, rdata) for rrset in answer.answer for rdata in rrset]
    if len(records) == 1:
        return "up-to-date"
    second = records[1]
    if second[0] == dns.rdatatype.SOA and second[1].serial == serial:
        return "incremental"
    return "whole"


def journal(run):
    """The journal: a restarted primary still serves IXFR from before its restart; a
    secondary killed (SIGKILL) right after an IXFR serves the new serial at once when it
    comes back, from its kept copy and its journal."""
    work = run.work("journal-zones")
    path = os.path.join(work, "big.example.zone")
    with open(path, "w") as f:
        f.write(unsigned_zone(1))
    primary_port, secondary_port = peers.free_port(), peers.free_port()
    zones = [{"origin": "big.example.", "file": path, "notify": [("127.0.0.1", secondary_port)]}]
    primary = run.tern(zones, port=primary_port, name="journal-primary")
    wait_serial(primary_port, "big.example.", 1, who="primary")
    secondary_zones = [{"origin": "big.example.", "primary": ("127.0.0.1", primary_port)}]
    secondary = run.tern(secondary_zones, port=secondary_port, name="journal-secondary")
    wait_serial(secondary_port, "big.example.", 1, who="secondary")
    time.sleep(1)  # the secondary writes its copy of serial 1
    with open(path, "w") as f:
        f.write(unsigned_zone(2, "journaled 60 A 192.0.2.42\n"))
    os.kill(primary.proc.pid, signal.SIGHUP)
    wait_serial(secondary_port, "big.example.", 2, who="secondary")
    os.kill(secondary.proc.pid, signal.SIGKILL)
    secondary.proc.wait()
    check(ixfr_kind(primary_port, "big.example.", 1) == "incremental", "no IXFR from 1 before the restart")
    primary.stop()
    primary = run.tern(zones, port=primary_port, name="journal-primary")
    wait_serial(primary_port, "big.example.", 2, who="restarted primary")
    kind = ixfr_kind(primary_port, "big.example.", 1)
    check(kind == "incremental", f"after a restart the primary answers IXFR from 1 with {kind}")
    print("    a restarted primary still answers IXFR from before its restart")
    primary.stop()  # the secondary must come back from its own disk
    secondary = run.tern(secondary_zones, port=secondary_port, name="journal-secondary")
    wait_serial(secondary_port, "big.example.", 2, timeout=10, who="restarted secondary")
    log = log_of(secondary)
    check("journal replayed onto the kept copy" in log, f"no journal replay:\n{log[-2000:]}")
    answer = dns.query.udp(dns.message.make_query("journaled.big.example.", "A"), "127.0.0.1",
                           port=secondary_port, timeout=2)
    check(answer.answer and answer.answer[0][0].address == "192.0.2.42", f"{answer}")
    print("    a secondary killed after an IXFR comes back at the new serial (kept copy + journal)")


def signed_queries(run):
    """TSIG on queries against a running Tern (RFC 8945 §5.2), every algorithm, with
    dnspython, dig and kdig as clients."""
    import base64
    import dns.tsig
    algorithms = ["hmac-md5", "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"]
    secrets = {alg: base64.b64encode(f"secret for {alg} ".encode() * 2).decode() for alg in algorithms}
    keys = "".join(f'[[key]]\nname = "{alg}.key"\nalgorithm = "{alg}"\nsecret = "{secrets[alg]}"\n'
                   for alg in algorithms)
    work = run.work("signed-zones")
    path = os.path.join(work, "big.example.zone")
    with open(path, "w") as f:
        f.write(unsigned_zone(5))
    tern = run.tern([{"origin": "big.example.", "file": path}], extra=keys, name="tern-signed")
    wait_serial(tern.port, "big.example.", 5, who="tern")
    names = {"hmac-md5": "hmac-md5.sig-alg.reg.int"}
    for alg in algorithms:
        keyring = dns.tsigkeyring.from_text({f"{alg}.key.": (names.get(alg, alg), secrets[alg])})
        query = dns.message.make_query("host1.big.example.", "A")
        query.use_tsig(keyring, keyname=f"{alg}.key.", algorithm=names.get(alg, alg))
        answer = dns.query.udp(query, "127.0.0.1", port=tern.port, timeout=2)  # verifies the TSIG
        check(answer.rcode() == dns.rcode.NOERROR and answer.had_tsig, f"{alg}: {answer}")
    unknown = dns.tsigkeyring.from_text({"nobody.key.": ("hmac-sha256", secrets["hmac-sha256"])})
    wrong = dns.tsigkeyring.from_text({"hmac-sha256.key.": ("hmac-sha256", servers.WRONG_SECRET)})
    for keyring, keyname, error in [(unknown, "nobody.key.", dns.tsig.PeerBadKey),
                                    (wrong, "hmac-sha256.key.", dns.tsig.PeerBadSignature)]:
        query = dns.message.make_query("host1.big.example.", "A")
        query.use_tsig(keyring, keyname=keyname)
        try:
            dns.query.udp(query, "127.0.0.1", port=tern.port, timeout=2)
            raise Failure(f"{keyname}: answered without a TSIG error")
        except error:
            pass
    query = dns.message.make_query("host1.big.example.", "A")
    query.use_tsig(KEYRING, keyname=KEY)
    wire = bytearray(query.to_wire())
    # The MAC size field (before the 32-byte MAC, original ID, error and other length)
    # cannot be 2 (RFC 8945 §5.2.2.1).
    wire[-40:-38] = b"\x00\x02"
    answer_wire = _udp_raw(bytes(wire), tern.port)
    check(answer_wire is not None and answer_wire[3] & 0xF == dns.rcode.FORMERR, "a malformed TSIG is not FORMERR")
    for tool, flag in (("dig", "-y"), ("kdig", "-y")):
        out = peers.subprocess.run([tool, "@127.0.0.1", "-p", str(tern.port), flag,
                                    f"hmac-sha256:hmac-sha256.key:{secrets['hmac-sha256']}",
                                    "host1.big.example", "A"], capture_output=True, text=True, timeout=10)
        text = out.stdout + out.stderr
        check("NOERROR" in text and "10.0.0.1" in text and "failure" not in text.lower(), f"{tool}:\n{text}")
    print(f"    {len(algorithms)} algorithms verified both ways; BADKEY, BADSIG, FORMERR; dig and kdig agree")


def _udp_raw(wire, port):
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2)
        sock.sendto(wire, ("127.0.0.1", port))
        try:
            return sock.recvfrom(65535)[0]
        except OSError:
            return None


def backup(run):
    """`ternctl zone-backup` and `zone-restore` on a Tern primary with a Knot DNS
    secondary: the restore is a change under a higher serial, which Knot takes by IXFR."""
    work = run.work("backup-zones")
    path = os.path.join(work, "big.example.zone")
    with open(path, "w") as f:
        f.write(unsigned_zone(1))
    knot_port, primary_port = peers.free_port(), peers.free_port()
    socket = os.path.join(work, "ternd.sock")
    zones = [{"origin": "big.example.", "file": path, "notify": [("127.0.0.1", knot_port)]}]
    primary = run.tern(zones, port=primary_port, name="backup-primary",
                       extra=f'[control]\nsocket = "{socket}"\n')
    wait_serial(primary_port, "big.example.", 1, who="primary")
    secondary_zones = [{"origin": "big.example.", "primary": ("127.0.0.1", primary_port)}]
    knot = run.start("knot", lambda p, w: servers.knot(p, w, secondary_zones), port=knot_port,
                     name="knot-backup-secondary")
    wait_serial(knot_port, "big.example.", 1, who="knot")
    ternctl = os.path.join(os.path.dirname(run.tern_bin), "ternctl")

    def ctl(*args):
        out = subprocess.run([ternctl, "--socket", socket, *args], capture_output=True, text=True)
        check(out.returncode == 0, f"ternctl {args}: {out.stdout}{out.stderr}")
        return out.stdout

    said = ctl("zone-backup", "--dir", "before-change")
    check("backed up serial 1" in said, said)
    with open(path, "w") as f:
        f.write(unsigned_zone(2, "new 60 A 192.0.2.200\n").replace("host7 300 A 10.0.0.7\n", ""))
    ctl("zone-reload", "big.example")
    wait_serial(knot_port, "big.example.", 2, who="knot after the change")
    said = ctl("zone-restore", "big.example", "--dir", "before-change")
    check("restored: serial 2 → 3" in said, said)
    wait_serial(knot_port, "big.example.", 3, who="knot after the restore")
    same_zone(primary_port, knot_port, "big.example.", "knot after the restore")
    answer = dns.query.udp(dns.message.make_query("host7.big.example.", "A"), "127.0.0.1",
                           port=knot_port, timeout=2)
    check(answer.answer, f"knot lacks the restored host7: {answer}")
    log = log_of(primary)
    check('kind="IXFR" from="2" serial=3' in log, f"no IXFR of the restore:\n{log[-3000:]}")
    print("    a restore reaches Knot DNS by NOTIFY and IXFR, serial 2 → 3, zones equal")


SCENARIOS = {
    "signed-queries": signed_queries,
    "journal": journal,
    "tern-primary": tern_primary,
    "knot-primary": lambda run: peer_primary(run, "knot"),
    "bind-primary": lambda run: peer_primary(run, "bind"),
    "faults": faults,
    "updates": updates.updates,
    "forwarding": updates.forwarding,
    "catalogs": catalogs.catalogs,
    "via": via,
    "backup": backup,
    "xot-out": xot_out.xot_out,
    "xot-in": xot_in.xot_in,
    "signing": signing.signing,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tern", default=peers.default_ternd(REPO, "release"))
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    args = parser.parse_args()
    if not os.access(args.tern, os.X_OK):
        print(f"no ternd at {args.tern}: build it, and ternctl beside it"
              " (cargo build --release -p ternd -p tern-ctl)")
        return 2
    failed = []
    for name in args.only.split(","):
        print(f"== {name}", flush=True)
        run = Run(args.tern, args.keep)
        started = time.monotonic()
        try:
            SCENARIOS[name](run)
            print(f"  pass ({time.monotonic() - started:.1f} s)")
        except Exception as e:  # a failed check or a server that would not start
            failed.append(name)
            print(f"  FAIL: {e}")
            if not isinstance(e, Failure):
                traceback.print_exc()
            for server in run.started:
                print(f"  --- {server.kind} on {server.port} ({server.work}):\n{server.log_tail(15)}")
        finally:
            run.close()
    print(f"interop: {len(args.only.split(','))} scenarios, {len(failed)} failed {failed or ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
