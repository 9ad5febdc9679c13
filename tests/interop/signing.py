"""Online signing (issue #51) proven against validating resolvers, secondaries and
rollovers: the `signing` scenario of `interop.py`.

One Tern serves a parent zone, `example.`, and its children, every one signed by Tern
under its own `[[policy]]` with timings of seconds; each child's DS is put into the
parent by a dynamic UPDATE (RFC 2136) when the child's CDS (RFC 7344) asks for it, and
`ternctl zone-ksk-submitted` then tells the child (the server does not query the parent
yet). unbound and Knot Resolver, caches on, with the parent's key as their only trust
anchor, resolve through Tern.

1. Every answer kind (positive, NXDOMAIN, NODATA, wildcard, CNAME, DNAME, DS, the DS of
   an unsigned delegation, NSEC3 opt-out and the insecure zone below it) is asked of
   both resolvers: secure (AD), never SERVFAIL.
2. Knot DNS, NSD and BIND take two signed zones (NSEC, NSEC3 opt-out) by AXFR, then an
   UPDATE to Tern by NOTIFY and IXFR; each one's copy passes `dnssec-verify` and
   `ldns-verify-zone`.
3. A ZSK, a KSK, a CSK and an algorithm rollover (the policy's algorithm changed, then
   `ternctl reload`) run to their end in four children at once while both resolvers ask
   every answer kind of every child in a loop: no bogus answer. Tern is killed (SIGKILL)
   in the middle and started again: the rollovers go on where they were. Each key's step times
   (`ternctl zone-keys`) are compared with RFC 7583's intervals.
4. Knot DNS signs the same unsigned zone (`knot.example.`, its DS in the parent too):
   both resolvers give the same answers as for Tern's copy, all secure. unbound asks
   Knot DNS; kresd, whose forwarding sends a question's whole chain to one server, asks
   Tern, which serves Knot DNS's signed zone as its secondary.
"""

import calendar
import os
import re
import shutil
import signal
import subprocess
import time

import dns.message
import dns.query
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.update

import resolvers
import servers
from checks import KEYRING, check, log_of, soa_serial, wait_serial
from servers import peers

PARENT = "example."
TTL = 3  # every record's TTL in the children (zone-max-ttl) and the SOA minimum
# Seconds-long timings (`[[policy]]` keys): RFC 7583's intervals from them are below.
TIMINGS = {
    "dnskey-ttl": 2, "zone-max-ttl": TTL, "propagation-delay": 1, "publish-safety": 1,
    "retire-safety": 1, "parent-ds-ttl": 2, "parent-propagation-delay": 1,
    "signature-validity": 30, "signature-refresh": 24,
}
DSGN = TIMINGS["signature-validity"] - TIMINGS["signature-refresh"]
IPUB = TIMINGS["propagation-delay"] + TIMINGS["dnskey-ttl"] + TIMINGS["publish-safety"]
IRET = DSGN + TIMINGS["propagation-delay"] + TTL + TIMINGS["retire-safety"]
IPUB_PARENT = TIMINGS["parent-propagation-delay"] + TIMINGS["parent-ds-ttl"] + TIMINGS["publish-safety"]
IRET_DNSKEY = TIMINGS["propagation-delay"] + TIMINGS["dnskey-ttl"] + TIMINGS["retire-safety"]
LIFETIME = 14
# The children: a policy each (its keys beyond TIMINGS). `roll` names what rolls.
CHILDREN = {
    "nsec.example.": {"scheme": "ksk-zsk", "signature-validity": 600, "signature-refresh": 300},
    "optout.example.": {"scheme": "csk", "denial": "nsec3", "nsec3-opt-out": True,
                        "signature-validity": 600, "signature-refresh": 300},
    "zsk.example.": {"scheme": "ksk-zsk", "zsk-lifetime": LIFETIME, "roll": "Zsk"},
    "ksk.example.": {"scheme": "ksk-zsk", "ksk-lifetime": LIFETIME, "roll": "Ksk"},
    "csk.example.": {"scheme": "csk", "csk-lifetime": LIFETIME, "roll": "Csk"},
    "alg.example.": {"scheme": "ksk-zsk", "algorithm": "ecdsap256sha256", "roll": "algorithm"},
    # Signing turned off (`signing = false`), and on for a zone served unsigned so far.
    "off.example.": {"scheme": "ksk-zsk", "turn": "off"},
    "on.example.": {"scheme": "csk", "turn": "on"},
}
NEW_ALGORITHM = "ed25519"
INSECURE = "insecure.optout.example."  # an unsigned zone below an opt-out delegation
KNOT_ZONE = "knot.example."  # signed by Knot DNS
ROLL_BUDGET = 120  # seconds for the four rollovers to end
KILL_AFTER = 12  # seconds into the rollovers: Tern is killed and started again


def child_text(origin, serial=1):
    """A child's unsigned zone: one name of each answer kind."""
    return f"""$ORIGIN {origin}
$TTL {TTL}
@ SOA ns hostmaster {serial} 3600 600 86400 {TTL}
@ NS ns
ns A 127.0.0.1
www A 192.0.2.1
www AAAA 2001:db8::1
*.wild TXT "wildcard"
alias CNAME www
d DNAME t
x.t A 192.0.2.7
sub NS ns.sub
ns.sub A 192.0.2.54
""" + (f"insecure NS ns.insecure\nns.insecure A 127.0.0.1\n" if origin == "optout.example." else "")


def parent_text():
    lines = [f"$ORIGIN {PARENT}", "$TTL 2", "@ SOA ns hostmaster 1 3600 600 86400 2",
             "@ NS ns", "ns A 127.0.0.1"]
    for child in [*CHILDREN, KNOT_ZONE]:
        label = child[: -len(PARENT) - 1]
        lines += [f"{label} NS ns.{label}", f"ns.{label} A 127.0.0.1"]
    return "\n".join(lines) + "\n"


def policy_text(pid, settings):
    """A `[[policy]]` table: TIMINGS, then `settings` (seconds written as "Ns")."""
    merged = dict(TIMINGS, **{k: v for k, v in settings.items() if k not in ("roll", "turn")})
    lines = [f'[[policy]]\nid = "{pid}"\n']
    for key, value in merged.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {str(value).lower()}\n")
        elif isinstance(value, int) and key not in ("nsec3-iterations", "nsec3-salt-length"):
            lines.append(f'{key} = "{value}s"\n')
        else:
            lines.append(f'{key} = "{value}"\n')
    return "".join(lines)


def queries(zone):
    """What is asked about a child: (name, type, rcode wanted, whether AD is required).
    A zone being turned from signed to unsigned or back may be either: never bogus."""
    optout = zone == "optout.example."
    kinds = [
        (f"www.{zone}", "A", "NOERROR", True),  # positive
        (f"nope.{zone}", "A", "NXDOMAIN", not optout),  # NXDOMAIN (opt-out may be insecure)
        (f"www.{zone}", "TXT", "NOERROR", True),  # NODATA
        (f"a.wild.{zone}", "TXT", "NOERROR", not optout),  # wildcard
        (f"alias.{zone}", "A", "NOERROR", True),  # CNAME
        (f"x.d.{zone}", "A", "NOERROR", True),  # DNAME
        (zone, "DS", "NOERROR", True),  # DS, signed by the parent
        (zone, "DNSKEY", "NOERROR", True),
        (f"sub.{zone}", "DS", "NOERROR", not optout),  # no DS at an unsigned delegation
    ]
    if optout:
        kinds.append((f"www.{INSECURE}", "A", "NOERROR", False))  # insecure, by opt-out
    if CHILDREN.get(zone, {}).get("turn"):
        kinds = [(name, rtype, want, False) for name, rtype, want, _ in kinds]
    return kinds


class Signing:
    """The scenario's servers and what it learned on the way."""

    def __init__(self, run):
        self.run = run
        self.work = run.work("signing-zones")
        self.socket = os.path.join(self.work, "ternd.sock")
        self.ternctl_bin = os.path.join(os.path.dirname(run.tern_bin), "ternctl")
        self.tern = None
        self.knot = None
        self.secondaries = {}
        self.parent_ds = {}  # child -> the DS rdata texts put into the parent
        self.ds_log = {}  # child -> when its DS was changed at the parent (epoch seconds)
        self.stats = {"queries": 0, "bad": []}
        self.turned = False

    def ctl(self, *args, ok=True):
        out = subprocess.run([self.ternctl_bin, "--socket", self.socket, *args],
                             capture_output=True, text=True, timeout=30)
        if ok:
            check(out.returncode == 0, f"ternctl {' '.join(args)}: {out.stdout}{out.stderr}")
        return out.stdout + out.stderr

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def config_extra(self, turned=False):
        """The policies, the update ACL and the control socket; `turned`: the algorithm
        rollover's and `off.example.`'s policies changed."""
        text = f'[control]\nsocket = "{self.socket}"\n'
        text += '[[acl]]\nid = "update"\naddress = "127.0.0.0/8"\naction = "update"\n'
        text += policy_text("parent", {"scheme": "csk"})
        for zone, settings in CHILDREN.items():
            if turned and settings.get("roll") == "algorithm":
                settings = dict(settings, algorithm=NEW_ALGORITHM)
            if turned and settings.get("turn") == "off":
                settings = dict(settings, signing=False)
            text += policy_text(zone.split(".")[0], settings)
        return text

    def start_tern(self, secondary_ports, knot_port):
        zones = [{"origin": PARENT, "file": self.write("parent.zone", parent_text()),
                  "acls": ["update"], "settings": 'dnssec-policy = "parent"\n'}]
        notify = [("127.0.0.1", p) for p in secondary_ports]
        for zone in CHILDREN:
            zones.append({"origin": zone, "file": self.write(zone + "zone", child_text(zone)),
                          "acls": ["update"], "settings": self.policy_line(zone, False),
                          "notify": notify if zone in ("nsec.example.", "optout.example.") else []})
        zones.append({"origin": INSECURE, "file": self.write(INSECURE + "zone", child_text(INSECURE))})
        zones.append({"origin": KNOT_ZONE, "primary": ("127.0.0.1", knot_port)})  # Knot DNS's, as it is
        self.zones = zones
        self.tern = self.run.tern(zones, extra=self.config_extra(), name="tern-signer")
        for z in zones:
            wait_serial_any(self.tern.port, z["origin"], who="tern")

    @staticmethod
    def policy_line(zone, turned):
        """`dnssec-policy` of a child: `on.example.` has none until `turned`."""
        if CHILDREN[zone].get("turn") == "on" and not turned:
            return ""
        return f'dnssec-policy = "{zone.split(".")[0]}"\n'

    def turn(self):
        """The configuration changed (the algorithm, signing off, signing on), then
        `ternctl reload`."""
        self.turned = True
        for z in self.zones:
            if z["origin"] in CHILDREN:
                z["settings"] = self.policy_line(z["origin"], True)
        servers.tern(self.tern.port, self.tern.work, self.run.tern_bin, self.zones, extra=self.config_extra(True))
        self.ctl("reload")

    # -- the parent's DS, as the children's CDS asks ------------------------------------

    def cds(self, zone):
        answer = dns.query.udp(dns.message.make_query(zone, "CDS"), "127.0.0.1", port=self.tern.port,
                               timeout=2)
        return sorted(rd.to_text() for rrset in answer.answer for rd in rrset
                      if rrset.rdtype == dns.rdatatype.CDS)

    def set_parent_ds(self, zone, texts, port=None):
        """Replaces `zone`'s DS RRset in the parent by an UPDATE (TTL parent-ds-ttl)."""
        update = dns.update.UpdateMessage(PARENT)
        rdatas = [dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.DS, t) for t in texts]
        if rdatas:
            update.replace(zone, TIMINGS["parent-ds-ttl"], *rdatas)
        else:
            update.delete(zone, "DS")
        answer = dns.query.tcp(update, "127.0.0.1", port=self.tern.port, timeout=5)
        check(answer.rcode() == dns.rcode.NOERROR,
              f"UPDATE of {zone}'s DS: {dns.rcode.to_text(answer.rcode())}\n{self.tern.log_tail()}")
        self.parent_ds[zone] = texts
        self.ds_log.setdefault(zone, []).append(int(time.time()))

    def sync_ds(self, zone):
        """When `zone`'s CDS differs from the DS in the parent, the parent takes it and the
        child is told (`zone-ksk-submitted`). True when something changed."""
        cds = self.cds(zone)
        delete = bool(cds) and all(t.startswith("0 0 0") for t in cds)  # RFC 8078 §4
        wanted = [] if delete else cds
        if not (cds and wanted != self.parent_ds.get(zone)):
            return False
        self.set_parent_ds(zone, wanted)
        said = self.ctl("zone-ksk-submitted", zone)
        print(f"      {stamp()} {zone} DS at the parent := {[t.split()[0] for t in wanted]} ({said.strip()})")
        return True

    def initial_ds(self):
        """Each child's first DS, as soon as its CDS appears (after RFC 7583's wait for
        a newly signed zone)."""
        deadline = time.monotonic() + 30
        pending = {z for z in CHILDREN if self.policy_line(z, False)}
        while pending and time.monotonic() < deadline:
            for zone in sorted(pending):
                if self.sync_ds(zone):
                    pending.discard(zone)
            time.sleep(0.2)
        check(not pending, f"no CDS from {sorted(pending)} within 30 s:\n{self.tern.log_tail()}")

    # -- resolvers ----------------------------------------------------------------------

    def sweep(self, zones, resolver_set):
        """Asks every kind of every zone of both resolvers once; notes what was wrong."""
        for zone in zones:
            for name, rtype, want, secure in queries(zone):
                for kind, server in resolver_set.items():
                    rcode, ad, records = resolvers.ask(server.port, name, rtype)
                    self.stats["queries"] += 1
                    bad = rcode != want or (secure and not ad)
                    if name.startswith("www.insecure"):
                        bad = rcode != "NOERROR" or ad or not records
                    if bad:
                        self.stats["bad"].append(f"{stamp()} {kind} {name} {rtype}: {rcode} ad={ad} {records}")


def stamp():
    return time.strftime("%H:%M:%S", time.gmtime())


def wait_serial_any(port, zone, timeout=30.0, who=""):
    deadline = time.monotonic() + timeout
    while soa_serial(port, zone) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    check(soa_serial(port, zone) is not None, f"{who} does not serve {zone}")


def axfr_file(port, zone, path):
    """Writes the zone as `port` gives it by AXFR (TSIG) to `path`, for the validators
    (the text as it came: base64 is not to be lowercased). A connection reset is tried
    again, twice at most (BIND resets one now and then right after taking an IXFR)."""
    for attempt in range(3):
        try:
            lines = [rrset.to_text() for message in dns.query.xfr(
                "127.0.0.1", zone, port=port, keyring=KEYRING, keyname=servers.KEY, relativize=False,
                lifetime=30) for rrset in message.answer]
            break
        except ConnectionError:
            check(attempt < 2, f"AXFR of {zone} from port {port}: connection reset three times")
            time.sleep(0.5)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def validators(path, zone, csk):
    """Runs ldns-verify-zone and dnssec-verify on a zone file; fails with their output."""
    out = subprocess.run(["ldns-verify-zone", path], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0 and "Zone is verified and complete" in out.stdout + out.stderr,
          f"ldns-verify-zone {path}:\n{out.stdout}{out.stderr}")
    args = ["dnssec-verify", *(["-z"] if csk else []), "-o", zone, path]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    check(out.returncode == 0 and "Zone fully signed" in out.stdout + out.stderr,
          f"dnssec-verify {path}:\n{out.stdout}{out.stderr}")


def signing(run):
    """The `signing` scenario (see the module docs)."""
    missing = [tool for tool in ("unbound", "kresd", "knotd", "nsd", "named", "ldns-verify-zone", "dnssec-verify")
               if shutil.which(tool) is None]
    check(not missing, f"missing {missing}: install unbound, knot-resolver, knot, nsd, bind9, ldnsutils"
          " and bind9-utils (scripts/test-all.sh does)")
    state = Signing(run)
    ports = {kind: peers.free_port() for kind in ("knot", "nsd", "bind")}
    state.knot = start_knot_signer(state)
    state.start_tern(ports.values(), state.knot.port)
    answer_kinds(state)
    secondaries(state, ports)
    rollovers(state)
    knot_signs(state)
    check(not state.stats["bad"], "bogus or wrong answers:\n" + "\n".join(state.stats["bad"][:30]))


def answer_kinds(state):
    """Part 1: the DS of every child into the parent, the resolvers started with the
    parent's key as anchor, every answer kind asked."""
    state.initial_ds()
    knot_ds(state)
    dnskeys = dns.query.udp(dns.message.make_query(PARENT, "DNSKEY"), "127.0.0.1",
                            port=state.tern.port, timeout=2)
    anchor = [f"{PARENT} DNSKEY {rd}" for rrset in dnskeys.answer for rd in rrset
              if rrset.rdtype == dns.rdatatype.DNSKEY and rd.flags & 1]
    check(len(anchor) == 1, f"the parent's DNSKEY RRset: {dnskeys}")
    # Every zone is a stub of its own: a resolver that learned a child's NS (127.0.0.1,
    # port 53) would otherwise ask there. unbound asks Knot DNS for its zone; kresd asks
    # the forwarder of a question for the whole chain above it too, so it asks Tern,
    # which serves Knot DNS's signed zone as a secondary, as Knot DNS signed it.
    tern_zones = [(z["origin"], state.tern.port) for z in state.zones]
    stubs = [z for z in tern_zones if z[0] != KNOT_ZONE] + [(KNOT_ZONE, state.knot.port)]
    state.resolvers = resolvers.start(state.run, anchor[0], stubs, tern_zones, (f"www.{PARENT}", "A"))
    before = state.stats["queries"]
    state.sweep(["nsec.example.", "optout.example."], state.resolvers)
    check(not state.stats["bad"], "answers not secure:\n" + "\n".join(state.stats["bad"][:30]))
    print(f"    {state.stats['queries'] - before} answers from unbound and kresd: every kind secure"
          " (NSEC and NSEC3 opt-out), the zone below the opt-out delegation insecure")


def start_knot_signer(state):
    """Part 4's Knot DNS, signing `knot.example.` (the children's unsigned zone) itself,
    and serving it to Tern (a secondary of it)."""
    path = state.write("knot.example.zone", child_text(KNOT_ZONE))

    def argv(port, work):
        conf = servers.knot_base(port, work) + f"""acl:
  - id: transfer
    address: 127.0.0.0/8
    key: {servers.KEY}
    action: transfer
policy:
  - id: auto
    algorithm: ecdsap256sha256
    cds-cdnskey-publish: always
    dnskey-ttl: 2
    zone-max-ttl: {TTL}
zone:
  - domain: {KNOT_ZONE}
    file: {path}
    storage: {work}
    dnssec-signing: on
    dnssec-policy: auto
    acl: [transfer]
"""
        with open(os.path.join(work, "knot.conf"), "w") as f:
            f.write(conf)
        return ["knotd", "-c", os.path.join(work, "knot.conf")]

    knot = state.run.start("knot", argv, name="knot-signer")
    wait_serial_any(knot.port, KNOT_ZONE, who="Knot DNS")
    return knot


def knot_ds(state):
    """Knot DNS's DS (from its CDS) into the parent; Tern, its secondary, has its zone."""
    knot = state.knot
    deadline, cds = time.monotonic() + 20, []
    while not cds and time.monotonic() < deadline:
        try:
            answer = dns.query.udp(dns.message.make_query(KNOT_ZONE, "CDS"), "127.0.0.1",
                                   port=knot.port, timeout=1)
            cds = sorted(rd.to_text() for rrset in answer.answer for rd in rrset
                         if rrset.rdtype == dns.rdatatype.CDS)
        except Exception:  # noqa: BLE001 (not up yet)
            pass
        time.sleep(0.2)
    check(cds, f"Knot DNS publishes no CDS for {KNOT_ZONE}:\n{knot.log_tail()}")
    state.set_parent_ds(KNOT_ZONE, cds)
    wait_serial(state.tern.port, KNOT_ZONE, soa_serial(knot.port, KNOT_ZONE), who="tern, Knot DNS's secondary")


def secondaries(state, ports):
    """Part 2: Knot DNS, NSD and BIND secondaries of the NSEC and the NSEC3 opt-out
    zone: first transfer, an UPDATE to Tern, IXFR; each copy verified twice."""
    zones = ["nsec.example.", "optout.example."]
    plan = [{"origin": z, "primary": ("127.0.0.1", state.tern.port)} for z in zones]
    builders = {"knot": servers.knot, "nsd": servers.nsd, "bind": servers.bind}
    for kind, port in ports.items():
        argv_for = lambda p, w, b=builders[kind]: b(p, w, plan)  # noqa: E731
        state.secondaries[kind] = state.run.start(kind, argv_for, port=port, name=f"{kind}-secondary")
    for zone in zones:
        for kind, server in state.secondaries.items():
            wait_serial(server.port, zone, soa_serial(state.tern.port, zone), who=kind)
    for zone in zones:
        update = dns.update.UpdateMessage(zone)
        update.add(f"added.{zone}", TTL, "A", "192.0.2.99")
        answer = dns.query.tcp(update, "127.0.0.1", port=state.tern.port, timeout=5)
        check(answer.rcode() == dns.rcode.NOERROR, f"UPDATE {zone}: {answer}")
    for zone in zones:
        serial = soa_serial(state.tern.port, zone)
        for kind, server in state.secondaries.items():
            wait_serial(server.port, zone, serial, timeout=20, who=kind)
            path = os.path.join(state.work, f"{kind}-{zone}axfr")
            axfr_file(server.port, zone, path)
            validators(path, zone, csk=zone == "optout.example.")
    ixfrs = log_of(state.tern).count('kind="IXFR"')
    check(ixfrs >= 6, f"{ixfrs} IXFRs out in Tern's log, want one per secondary and zone")
    print(f"    Knot DNS, NSD, BIND: AXFR, then the UPDATEs by IXFR ({ixfrs} IXFRs out); each copy"
          " passes ldns-verify-zone and dnssec-verify (NSEC, NSEC3 opt-out)")


# -- part 3: rollovers ------------------------------------------------------------------

KEY_LINE = re.compile(r"key (\d+) tag (\d+) (\S+) (\w+) created (\d+)(.*) ds (.*)$")


def parse_keys(text):
    """`ternctl zone-keys` as {id: {"tag", "alg", "role", step: epoch seconds, "ds"}}."""
    keys = {}
    for line in text.splitlines():
        m = KEY_LINE.search(line)
        if not m:
            continue
        key = {"tag": m[2], "alg": m[3], "role": m[4], "ds": m[7], "created": epoch(m[5])}
        steps = m[6].split()
        for step, at in zip(steps[::2], steps[1::2]):
            key[step] = epoch(at)
        ds = re.search(r"at: (\d+)", m[7])
        key["ds_at"] = int(ds[1]) if ds else None
        keys[int(m[1])] = key
    return keys


def epoch(text):
    return calendar.timegm(time.strptime(text, "%Y%m%d%H%M%S"))


class Tracker:
    """Each rolling child's keys as `zone-keys` lists them, polled: every key's last
    listing, the DS states it went through, and when it stopped being listed."""

    def __init__(self, state, zones):
        self.state = state
        self.seen = {z: {} for z in zones}
        self.gone = {z: {} for z in zones}
        self.ds_states = {z: {} for z in zones}
        self.first = {}
        self.poll()
        self.first = {z: dict(keys) for z, keys in self.seen.items()}

    def ds_changes(self, zone, origin):
        """When the test changed `zone`'s DS at the parent, in seconds from `origin`."""
        return [at - origin for at in self.state.ds_log.get(zone, [])]

    def poll(self):
        for zone, seen in self.seen.items():
            keys = parse_keys(self.state.ctl("zone-keys", zone))
            for kid, key in keys.items():
                seen[kid] = key
                name = key["ds"].split()[0]
                self.ds_states[zone].setdefault(kid, {}).setdefault(name, key["ds_at"])
            for kid in seen:
                if kid not in keys:
                    self.gone[zone].setdefault(kid, int(time.time()))

    def done(self, zone, roll):
        """True when the rollover `roll` of `zone` has run to its end: the first key
        of its role (or every first key, for an algorithm) no longer listed."""
        first = self.first[zone]
        if roll == "algorithm":
            return all(k in self.gone[zone] for k in first)
        return any(k in self.gone[zone] for k, v in first.items() if v["role"] == roll)


def rollovers(state):
    """Part 3 (see the module docs)."""
    rolling = {z: s["roll"] for z, s in CHILDREN.items() if "roll" in s}
    turning = [z for z, s in CHILDREN.items() if "turn" in s]
    tracker = Tracker(state, rolling)
    # The algorithm rollover and the turns start now: the configuration changed, reload.
    state.turn()
    wall_start = time.time()
    started, bad_before, asked_before = time.monotonic(), len(state.stats["bad"]), state.stats["queries"]
    print(f"    {stamp()} rollovers under way (ZSK, KSK, CSK every {LIFETIME} s; algorithm"
          f" ecdsap256sha256 → {NEW_ALGORITHM}); both resolvers asking all the time")
    sweeps, restarted = 0, False
    while time.monotonic() - started < ROLL_BUDGET:
        if not restarted and time.monotonic() - started > KILL_AFTER:
            restarted = True
            kill_and_restart(state)
        for zone in [*rolling, *turning]:
            state.sync_ds(zone)
        tracker.poll()
        state.sweep(["nsec.example.", "optout.example.", *rolling, *turning], state.resolvers)
        sweeps += 1
        if all(tracker.done(z, r) for z, r in rolling.items()) and all(turned(state, z) for z in turning):
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    unfinished = [z for z, r in rolling.items() if not tracker.done(z, r)]
    unfinished += [z for z in turning if not turned(state, z)]
    off = report_timings(tracker, rolling)
    bad = state.stats["bad"][bad_before:]
    print(f"    {sweeps} sweeps, {state.stats['queries'] - asked_before} answers in {elapsed:.0f} s,"
          f" {len(bad)} bogus or wrong")
    check(not unfinished, f"rollovers not ended within {ROLL_BUDGET} s: {unfinished}\n"
          + "\n".join(f"{z}: {tracker.seen[z]}" for z in unfinished))
    check(not bad, "answers during the rollovers:\n" + "\n".join(bad[:30]))
    check_turns(state, wall_start)
    check(not off, "steps not at RFC 7583's times:\n" + "\n".join(off))


def check_turns(state, wall_start):
    """After the turns: `off.example.` insecure and taking updates again, unsigned;
    `on.example.` secure; both resolvers agree."""
    for kind, server in state.resolvers.items():
        for zone, secure in (("off.example.", False), ("on.example.", True)):
            answer = resolvers.ask(server.port, f"www.{zone}", "A")
            check(answer[0] == "NOERROR" and answer[1] == secure and answer[2],
                  f"{kind}: www.{zone} after the turn: {answer}, want {'secure' if secure else 'insecure'}")
    update = dns.update.UpdateMessage("off.example.")
    update.add("later.off.example.", TTL, "A", "192.0.2.98")
    answer = dns.query.tcp(update, "127.0.0.1", port=state.tern.port, timeout=5)
    check(answer.rcode() == dns.rcode.NOERROR, f"UPDATE of the unsigned off.example.: {answer}")
    for kind, server in state.resolvers.items():
        answer = resolvers.ask(server.port, "later.off.example.", "A")
        check(answer[0] == "NOERROR" and not answer[1] and answer[2], f"{kind}: later.off.example.: {answer}")
    since = lambda zone: [round(at - wall_start) for at in state.ds_log.get(zone, [])]  # noqa: E731
    print(f"    signing turned off: off.example.'s DS changed at {since('off.example.')} s (removed last),"
          f" then its keys and DNSSEC records; on: on.example.'s DS added at {since('on.example.')} s;"
          " never bogus")


def turned(state, zone):
    """True when `zone`'s turn has ended: off — no DNSKEY served and no DS at the
    parent; on — its DS at the parent."""
    if CHILDREN[zone]["turn"] == "on":
        return bool(state.parent_ds.get(zone))
    answer = dns.query.udp(dns.message.make_query(zone, "DNSKEY"), "127.0.0.1", port=state.tern.port, timeout=2)
    return not answer.answer and state.parent_ds.get(zone) == []


def kill_and_restart(state):
    """SIGKILL in the middle of the rollovers, then a start on the same storage, keys
    and port: every rollover must go on from where it was (key state is durable)."""
    check(state.parent_ds.get("on.example."), "signing turned on by a reload: no CDS from on.example."
          f" {KILL_AFTER} s after:\n{state.tern.log_tail()}")
    before = state.tern
    os.kill(before.proc.pid, signal.SIGKILL)
    before.proc.wait(timeout=10)
    shutil.copy(before.log_path, before.log_path + ".before-kill")
    state.tern = state.run.tern(state.zones, extra=state.config_extra(state.turned), port=before.port,
                                name="tern-signer")
    for z in state.zones:
        wait_serial_any(state.tern.port, z["origin"], timeout=20, who="the restarted tern")
    print(f"    {stamp()} tern killed (SIGKILL) and started again on its storage")


def report_timings(tracker, rolling):
    """Prints each key's step times (seconds from the zone's first key) and returns the
    steps not taken at RFC 7583's times (see `off_steps`)."""
    off = []
    for zone, roll in rolling.items():
        keys = tracker.seen[zone]
        origin = min(k["created"] for k in keys.values())
        print(f"    {zone} ({roll}; Ipub {IPUB}, Iret {IRET}, IpubP {IPUB_PARENT}, Dsgn+Dprp+TTLsig"
              f" {SIGNATURE_INTERVAL} s); parent DS changes at {tracker.ds_changes(zone, origin)}:")
        for kid, key in sorted(keys.items()):
            steps = {s: key[s] - origin for s in ("published", "ready", "active", "retired") if s in key}
            gone = tracker.gone[zone].get(kid)
            ds = {name: (at - origin if at else None) for name, at in tracker.ds_states[zone][kid].items()}
            print(f"      key {kid} {key['alg']} {key['role']}: {steps}"
                  + (f" gone {gone - origin}" if gone else "") + f" ds {ds}")
        off += [f"{zone}: {e}" for e in off_steps(tracker, zone, roll)]
    return off


SIGNATURE_INTERVAL = DSGN + TIMINGS["propagation-delay"] + TTL


SLACK = 3  # seconds a step may come after its time: the timer, whole seconds, polling


def off_steps(tracker, zone, roll):
    """The steps of `zone`'s rollover not taken when RFC 7583 (RFC 6781 §4.1.4 for the
    algorithm) says: before their time (a bogus answer possible), or more than SLACK
    seconds after it. Times are whole seconds, as `zone-keys` shows them; a key's
    "gone" is when `zone-keys` stopped listing it (polled)."""
    keys, gone, first = tracker.seen[zone], tracker.gone[zone], tracker.first[zone]
    seen = lambda kid: tracker.ds_states[zone][kid].get("Seen")  # noqa: E731
    wrong = []
    plus = lambda t, d: None if t is None else t + d  # noqa: E731

    def at(what, observed, *due):
        if observed is None or any(d is None for d in due):
            return
        want = max(due)
        if not want <= observed <= want + SLACK:
            wrong.append(f"{what} {observed - want:+d} s from its time")

    for kid, key in keys.items():
        new, role = kid not in first, key["role"]
        published, active, retired = key.get("published"), key.get("active"), key.get("retired")
        if roll == "Zsk" and role == "Zsk":  # §3.2.1, pre-publication
            if new:
                at(f"ZSK {kid} signing (Ipub after its publication)", active, plus(published, IPUB))
            at(f"ZSK {kid} removed (Iret after its retirement)", gone.get(kid), plus(retired, IRET))
        if roll == "Ksk" and role == "Ksk":  # §3.3.2, double-DS
            if new:
                at(f"KSK {kid} in the DNSKEY RRset (IpubP after its DS)", active, plus(seen(kid), IPUB_PARENT))
            at(f"KSK {kid} forgotten (old DS out after Iret of the DNSKEY RRset)", gone.get(kid),
               plus(retired, IRET_DNSKEY))
        if roll == "Csk" and role == "Csk":  # §3.3.2 and §3.2.1 together
            if new:
                at(f"CSK {kid} signing (Ipub after publication, IpubP after its DS)", active,
                   plus(published, IPUB), plus(seen(kid), IPUB_PARENT))
            ds_gone = tracker.ds_states[zone][kid].get("Gone")
            at(f"CSK {kid} removed (Iret after retirement, IpubP after its DS left)", gone.get(kid),
               plus(retired, IRET), plus(ds_gone, IPUB_PARENT))
        if roll == "algorithm" and new:  # signatures, DNSKEYs, DS, old DNSKEYs, old signatures
            at(f"{role} {kid} published (Dsgn+Dprp+TTLsig after it signed)", published,
               plus(active, SIGNATURE_INTERVAL))
            if role == "Ksk":
                at(f"KSK {kid} DS seen (Ipub after publication, and the test's reaction)", seen(kid),
                   plus(published, IPUB))
                for old in first:
                    at(f"old key {old} gone (IpubP, then Iret of the DNSKEY RRset, after the DS)",
                       gone.get(old), plus(seen(kid), IPUB_PARENT + IRET_DNSKEY))
    return wrong


# -- part 4: Knot DNS signing the same zone --------------------------------------------

def knot_signs(state):
    """Part 4: Knot DNS's signed copy of the zone answers as Tern's, all secure."""
    differ = []
    asked = 0
    for (name, rtype, want, _), (kname, _, _, _) in zip(queries("nsec.example."), queries(KNOT_ZONE)):
        for kind, server in state.resolvers.items():
            ours = resolvers.ask(server.port, name, rtype)
            theirs = resolvers.ask(server.port, kname, rtype)
            asked += 2
            same = lambda r: [x.replace("nsec.example.", "Z.").replace(KNOT_ZONE, "Z.") for x in r]  # noqa: E731
            comparable = rtype not in ("DNSKEY", "DS")  # their keys are not ours
            if theirs[0] != ours[0] or not theirs[1] or not ours[1] \
                    or (comparable and same(ours[2]) != same(theirs[2])):
                differ.append(f"{kind} {rtype}: tern {name} {ours}; knot {kname} {theirs}")
    check(not differ, "Knot DNS's signed zone answers otherwise:\n" + "\n".join(differ))
    print(f"    Knot DNS signing the same zone: {asked} answers, the same as Tern's, all secure")
