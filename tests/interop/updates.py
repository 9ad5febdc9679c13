"""Dynamic updates (RFC 2136) on loopback, as operators send them: `nsupdate` (UDP and
TCP, TSIG) to Tern, and the same update sequences to BIND, Knot DNS and Tern compared
by AXFR (`update_cases.py`); updates sent to a secondary forwarded to its primary
(RFC 2136 §6) between Tern and Knot DNS in both roles.

Scenarios for `interop.py`: `updates` (access rules, per-key limits, signed zones, the
update cases) and `forwarding`.
"""

import os
import shutil
import subprocess
import sys

import dns.rcode

import servers
from checks import check, log_of, rcode, same_zone, soa_serial, wait_serial

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.join(os.path.dirname(HERE), "conformance", "zones")
UPDATE_KEY, UPDATE_SECRET = servers.UPDATE_KEY, servers.UPDATE_SECRET
ACME_SECRET = "YWNtZSBrZXkgb2YgdGhlIGludGVyb3AgdGVzdHMgISE="

# Who may update what on a Tern primary: the update key anything from loopback; the
# ACME key only TXT at _acme-challenge names (one rule, as docs/configuration.md shows).
ACLS = f"""
[[key]]
name = "{UPDATE_KEY}"
secret = "{UPDATE_SECRET}"
[[key]]
name = "acme.key."
secret = "{ACME_SECRET}"
[[acl]]
id = "update"
address = "127.0.0.0/8"
key = ["{UPDATE_KEY}", "{servers.KEY}"]
action = "update"
[[acl]]
id = "acme"
key = "acme.key."
action = "update"
update-owner-name = ["_acme-challenge", "_acme-challenge.www"]
update-owner-match = "equal"
update-type = "TXT"
"""

ZONE = """$ORIGIN dyn.example.
$TTL 300
@ SOA ns1 hostmaster 1 3600 600 86400 300
@ NS ns1
ns1 A 192.0.2.53
www A 192.0.2.1
"""


def nsupdate(port, lines, key=None, tcp=False):
    """Runs nsupdate with `lines` (zone, prereq, update commands) against 127.0.0.1:port;
    returns (exit status, output). nsupdate checks the answer's TSIG itself."""
    script = f"server 127.0.0.1 {port}\n" + "".join(line + "\n" for line in lines) + "send\n"
    argv = ["nsupdate", *(["-v"] if tcp else [])]
    if key:
        argv += ["-y", f"hmac-sha256:{key[0]}:{key[1]}"]
    done = subprocess.run(argv, input=script, capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout + done.stderr


def answers(port, name, qtype):
    """The answer's records as text (empty on any error)."""
    import dns.message
    import dns.query

    q = dns.message.make_query(name, qtype)
    try:
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=2)
    except Exception:  # noqa: BLE001
        return []
    return [rd.to_text() for rrset in r.answer for rd in rrset]


def primary_with_updates(run, notify=(), name="tern-primary"):
    work = run.work(name + "-zones")
    path = os.path.join(work, "dyn.example.zone")
    with open(path, "w") as f:
        f.write(ZONE)
    signed = os.path.join(work, "secure.example.zone")
    shutil.copy(os.path.join(CONFORMANCE, "secure.example.zone.signed"), signed)
    zones = [
        {"origin": "dyn.example.", "file": path, "notify": list(notify), "acls": ["update", "acme"]},
        {"origin": "secure.example.", "file": signed, "acls": ["update"]},
    ]
    tern = run.tern(zones, extra=ACLS, name=name)
    wait_serial(tern.port, "dyn.example.", 1, who="tern primary")
    return tern, path


def updates(run):
    """nsupdate against a Tern primary: UDP and TCP, TSIG, denials, per-key limits, the
    signed zone refused; then the update cases against BIND and Knot DNS."""
    tern, _ = primary_with_updates(run)
    port, key = tern.port, (UPDATE_KEY, UPDATE_SECRET)
    status, out = nsupdate(port, ["zone dyn.example.", "update add a.dyn.example. 60 A 192.0.2.7"], key)
    check(status == 0, f"signed update over UDP failed: {out}")
    status, out = nsupdate(port, ["zone dyn.example.", "update add b.dyn.example. 60 TXT tcp"], key, tcp=True)
    check(status == 0, f"signed update over TCP failed: {out}")
    check(answers(port, "a.dyn.example.", "A") == ["192.0.2.7"], "the UDP update is not served")
    check(answers(port, "b.dyn.example.", "TXT") == ['"tcp"'], "the TCP update is not served")
    check(soa_serial(port, "dyn.example.") == 3, "two updates, serial 1 → 3 (increment)")
    status, out = nsupdate(port, ["zone dyn.example.", "update add c.dyn.example. 60 A 192.0.2.8"])
    check(status != 0 and "REFUSED" in out, f"an unsigned update was not refused: {out}")
    status, out = nsupdate(port, ["zone dyn.example.", "prereq nxdomain www.dyn.example.",
                                  "update add d.dyn.example. 60 A 192.0.2.9"], key)
    check(status != 0 and "YXDOMAIN" in out, f"a failed prerequisite did not give YXDOMAIN: {out}")
    print("    nsupdate: UDP and TCP signed updates served, unsigned REFUSED, prerequisites checked")
    acme = ("acme.key.", ACME_SECRET)
    status, out = nsupdate(port, ["zone dyn.example.",
                                  'update add _acme-challenge.www.dyn.example. 60 TXT "token"'], acme)
    check(status == 0, f"the ACME key could not add its TXT: {out}")
    status, out = nsupdate(port, ["zone dyn.example.", "update add www.dyn.example. 60 A 192.0.2.66"], acme)
    check(status != 0 and "REFUSED" in out, f"the ACME key updated an A record: {out}")
    status, out = nsupdate(port, ["zone dyn.example.",
                                  'update add _acme-challenge.www.dyn.example. 60 HINFO "a" "b"'], acme)
    check(status != 0 and "REFUSED" in out, f"the ACME key added another type: {out}")
    check(answers(port, "_acme-challenge.www.dyn.example.", "TXT") == ['"token"'], "the ACME TXT is not served")
    print("    per-key limits: the ACME key adds its TXT, anything else REFUSED")
    status, out = nsupdate(port, ["zone secure.example.", "update add x.secure.example. 60 A 192.0.2.1"], key)
    check(status != 0 and "REFUSED" in out, f"an update of a signed zone was not refused: {out}")
    check("updates to signed zones need online signing" in log_of(tern), "no log line for the signed zone")
    print("    signed zone: REFUSED, and the log says why")
    update_cases(run)


def update_cases(run):
    """The 69 update sequences of `update_cases.py` against BIND, Knot DNS and Tern."""
    env = dict(os.environ, TERND=run.tern_bin)
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "update_cases.py"), "--servers", "bind,knot,tern", "--check-tern"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    summary = done.stdout.strip().splitlines()[-1:] or ["no output"]
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    check(done.returncode == 0, f"update cases: {fails or done.stdout[-2000:] + done.stderr[-2000:]}")
    print(f"    update cases: {summary[0]} (zones equal BIND's, RCODEs match a peer)")


def forwarding(run):
    """Updates sent to secondaries reach the primary: Tern → Tern, Knot DNS → Tern (Knot
    forwards to a Tern primary), Tern → Knot DNS (Tern forwards to a Knot primary)."""
    key = (UPDATE_KEY, UPDATE_SECRET)
    ports = {k: servers.peers.free_port() for k in ("tern2", "knot")}
    notify = [("127.0.0.1", p) for p in ports.values()]
    primary, _ = primary_with_updates(run, notify=notify)
    ours = [{"origin": "dyn.example.", "primary": ("127.0.0.1", primary.port), "acls": ["update"]}]
    secondary = run.tern(ours, extra=ACLS, port=ports["tern2"], name="tern-secondary")
    theirs = [{"origin": "dyn.example.", "primary": ("127.0.0.1", primary.port), "update": True}]
    knot = run.start("knot", lambda p, w: servers.knot(p, w, theirs), port=ports["knot"], name="knot-secondary")
    for who, server in (("tern secondary", secondary), ("knot secondary", knot)):
        wait_serial(server.port, "dyn.example.", 1, who=who)
    status, out = nsupdate(secondary.port, ["zone dyn.example.", "update add f1.dyn.example. 60 A 192.0.2.31"], key)
    check(status == 0, f"update through the Tern secondary failed: {out}")
    check(answers(primary.port, "f1.dyn.example.", "A") == ["192.0.2.31"], "the primary lacks the forwarded update")
    wait_serial(secondary.port, "dyn.example.", 2, who="tern secondary")
    status, out = nsupdate(knot.port, ["zone dyn.example.", "update add f2.dyn.example. 60 A 192.0.2.32"], key, tcp=True)
    check(status == 0, f"update through the Knot DNS secondary failed: {out}")
    check(answers(primary.port, "f2.dyn.example.", "A") == ["192.0.2.32"], "Tern lacks the update Knot forwarded")
    for who, server in (("tern secondary", secondary), ("knot secondary", knot)):
        wait_serial(server.port, "dyn.example.", 3, who=who)
        same_zone(primary.port, server.port, "dyn.example.", who)
    print("    Tern and Knot DNS secondaries forward to a Tern primary; copies follow by IXFR")
    knot_primary(run, key)


def knot_primary(run, key):
    """A Tern secondary of a Knot DNS primary forwards an update to it."""
    work = run.work("knot-primary-zones")
    path = os.path.join(work, "dyn.example.zone")
    with open(path, "w") as f:
        f.write(ZONE)
    tern_port = servers.peers.free_port()
    zones = [{"origin": "dyn.example.", "file": path, "notify": [("127.0.0.1", tern_port)], "update": True}]
    knot = run.start("knot", lambda p, w: servers.knot(p, w, zones), name="knot-primary")
    wait_serial(knot.port, "dyn.example.", 1, who="knot primary")
    ours = [{"origin": "dyn.example.", "primary": ("127.0.0.1", knot.port), "acls": ["update"]}]
    tern = run.tern(ours, extra=ACLS, port=tern_port, name="tern-of-knot")
    wait_serial(tern.port, "dyn.example.", 1, who="tern secondary")
    status, out = nsupdate(tern.port, ["zone dyn.example.", "update add f3.dyn.example. 60 A 192.0.2.33"], key)
    check(status == 0, f"update through Tern to Knot DNS failed: {out}")
    check(answers(knot.port, "f3.dyn.example.", "A") == ["192.0.2.33"], "Knot DNS lacks the forwarded update")
    wait_serial(tern.port, "dyn.example.", 2, who="tern secondary")
    status, out = nsupdate(tern.port, ["zone dyn.example.", "update add f4.dyn.example. 60 A 192.0.2.34"])
    check(status != 0 and "REFUSED" in out, f"Tern forwarded an update its rules do not allow: {out}")
    check(rcode_is(tern.port), "the secondary still serves")
    print("    a Tern secondary forwards to a Knot DNS primary (signed answer relayed); unsigned REFUSED")


def rcode_is(port):
    return rcode(port, "dyn.example.") == dns.rcode.NOERROR
