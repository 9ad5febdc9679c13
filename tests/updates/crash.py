#!/usr/bin/env python3
"""Dynamic updates survive SIGKILL, and a torn journal is cut cleanly (issue 28).

Run by tests/updates/run.sh (and so by scripts/test-all.sh); on its own:

  crash.py [--tern PATH] [--seed N] [--updates 10000] [--kills 5] [--threads 6]
           [--cuts 8] [--zonefile-sync 1s|never] [--ixfr-history N]
           [--ixfr-history-size BYTES] [--keep]

**Crash test.** `ternd` serves the primary zone `crash.test.` from a file, keeps its
journal in a temporary storage directory, and lets the TSIG key `crash.key.` update
and transfer the zone from loopback. Client threads (UDP, TCP on a kept connection,
TCP with a connection per update) send `--updates` updates, several in flight. Update
`u` adds 1-5 records, each at its own name `r<i>.u<u>` (so every record says which
update it belongs to and each update touches several nodes); about a third also delete
every record of one earlier update known to be applied (as single records, as RRsets
or as whole names), some of them behind a prerequisite. Which updates were answered
NOERROR (acknowledged) is recorded. `--kills` times, at a random point of the run,
ternd is SIGKILLed and started again; after every restart (and at the end, live and
after a clean restart) the zone is read by AXFR and checked:

* every acknowledged update is there (unless a later applied update deleted it);
* every update is all or nothing — its additions and its deletion together; an
  update whose answer was lost in the kill is either wholly applied or not at all;
* nothing else changed: no record of an update that was not applied, the zone
  file's own records intact;
* the SOA serial rose once per committed batch of updates (`serial-policy =
  "increment"`): above the zone file's once an update was applied, at most the zone
  file's plus the number of applied updates; and never lower than any serial served
  before the kill (a thread polls the SOA while updates run).

**Journal test.** A fresh server takes a few hundred updates one at a time (so the
order they were acknowledged in is the order they were committed in), with
`zonefile-sync` long enough that the zone file stays as it was; it is SIGKILLed and
its journal copied. ternd must start on it as it is, zeros written ahead included,
and drop nothing. The copy's frames are cut at `--cuts` random byte offsets (and at
their end, and right after the header); for each cut ternd starts on the cut journal and the
untouched zone file, and must serve exactly the zone file plus the updates whose
frames are whole before the cut, in order, log how many bytes it dropped (the
journal's "bytes after the last intact changeset dropped" message, exact count), cut
the file there, then take one more update that survives another SIGKILL.

The seed (printed) fixes the updates, the kill points and the cuts; the exact moments
of the kills depend on timing. The server runs on CPU 0, this client on CPU 1.
With `--zonefile-sync never` (issue #53, item 2) the crash test runs on a zone whose
file is never written — the journal alone keeps the updates, compacted into one change
from the file (a small `--ixfr-history-size` makes that happen often) — and checks, besides
the above, that the zone file is byte for byte as it was; the journal test is not run.

Exit status 1 on any failure, with what was wrong.
"""

import argparse
import base64
import os
import random
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import dns.exception  # noqa: E402
import dns.message  # noqa: E402
import dns.name  # noqa: E402
import dns.query  # noqa: E402
import dns.rcode  # noqa: E402
import dns.rdata  # noqa: E402
import dns.rdataclass  # noqa: E402
import dns.rdatatype  # noqa: E402
import dns.tsigkeyring  # noqa: E402
import dns.update  # noqa: E402
import dns.zone  # noqa: E402

import peers  # noqa: E402

HOST = "127.0.0.1"
ZONE = "crash.test."
ORIGIN = dns.name.from_text(ZONE)
KEY = "crash.key."
SECRET = base64.b64encode(b"tern crash test update key, 32 b").decode()
KEYRING = dns.tsigkeyring.from_text({KEY: ("hmac-sha256", SECRET)})
BASE_SERIAL = 1
TYPES = ("TXT", "A", "AAAA", "MX", "TXT")
DROP_MESSAGE = "bytes after the last intact changeset dropped"
JOURNAL_HEADER = 16
TRANSPORTS = ("udp", "tcp-kept", "udp", "tcp-fresh", "udp", "tcp-kept")


class Failure(Exception):
    """A check that did not hold."""


# ---------------------------------------------------------------- the updates


@dataclass
class Update:
    """One planned update and, once sent, what became of it."""

    uid: int
    records: frozenset  # {(owner relative to the zone, type, rdata text)}
    deletes: bool  # also deletes every record of an earlier applied update
    form: str  # how: "rr" (each record), "rrset" (each RRset), "name" (each name)
    prereq: bool  # with the prerequisite "the target's first name is in use"
    target: int | None = None
    target_records: frozenset = frozenset()  # the journal test's model
    # unsent | inflight | acked | unknown (answer lost) | applied | dropped | rcode text
    status: str = "unsent"

    def applied(self):
        return self.status in ("acked", "applied")


def canonical(rtype, text):
    """The presentation form dnspython gives RDATA (as AXFR shows it)."""
    return dns.rdata.from_text(dns.rdataclass.IN, rtype, text, origin=ORIGIN).to_text()


def record(uid, i, n):
    """Record `i` of the `n` that update `uid` adds: its name tells whose it is."""
    rtype = TYPES[i]
    text = {
        "TXT": f'"u{uid} {i}/{n}"',
        "A": f"10.{uid >> 8 & 255}.{uid & 255}.{i}",
        "AAAA": f"2001:db8::{uid >> 16:x}:{uid & 0xffff:x}:{i}",
        "MX": f"{i} mx{uid}.example.net.",
    }[rtype]
    return (f"r{i}.u{uid}", rtype, canonical(rtype, text))


def plan_updates(rng, count, first_uid=0):
    """`count` updates from `first_uid` on: records, whether and how they delete."""
    out = []
    for uid in range(first_uid, first_uid + count):
        n = rng.randint(1, 5)
        out.append(Update(
            uid=uid,
            records=frozenset(record(uid, i, n) for i in range(n)),
            deletes=rng.random() < 0.35,
            form=rng.choice(("rr", "rrset", "name")),
            prereq=rng.random() < 0.5,
        ))
    return out


def message(update, target):
    """The signed UPDATE for `update` (deleting `target`'s records when given)."""
    msg = dns.update.UpdateMessage(ZONE, keyring=KEYRING, keyname=dns.name.from_text(KEY))
    if target is not None:
        first = min(target.records)
        if update.prereq:
            msg.present(first[0])
        for owner, rtype, text in sorted(target.records):
            if update.form == "rr":
                msg.delete(owner, rtype, text)
            elif update.form == "rrset":
                msg.delete(owner, rtype)
            else:
                msg.delete(owner)
    for owner, rtype, text in sorted(update.records):
        msg.add(owner, 300, rtype, text)
    return msg


# ---------------------------------------------------------------- the ledger


class Ledger:
    """The updates and their fates, shared by the client threads."""

    def __init__(self, updates, seed):
        self.updates = updates
        self.seed = seed
        self.lock = threading.Lock()
        self.next = 0
        self.pool = []  # applied updates no update targets yet
        self.deleted_by = {}  # target uid -> the uid of the update deleting it
        self.stop = threading.Event()
        self.rcodes = {}
        self.max_serial = BASE_SERIAL

    def take(self):
        """The next update to send (its target chosen), or None when done or stopped."""
        with self.lock:
            if self.stop.is_set() or self.next >= len(self.updates):
                return None, None
            update = self.updates[self.next]
            self.next += 1
            target = self._target_for(update)
            update.status = "inflight"
            return update, target

    def _target_for(self, update):
        if not update.deletes or not self.pool:
            return None
        pick = random.Random(self.seed * 1_000_003 + update.uid).randrange(len(self.pool))
        self.pool[pick], self.pool[-1] = self.pool[-1], self.pool[pick]
        target = self.updates[self.pool.pop()]
        update.target = target.uid
        self.deleted_by[target.uid] = update.uid
        return target

    def settle(self, update, rcode):
        """Records the answer (`None`: no answer, the outcome is unknown)."""
        with self.lock:
            if rcode is None:
                update.status = "unknown"
                return
            self.rcodes[rcode] = self.rcodes.get(rcode, 0) + 1
            update.status = "acked" if rcode == "NOERROR" else rcode
            if update.applied():
                self.pool.append(update.uid)

    def saw_serial(self, serial):
        with self.lock:
            self.max_serial = max(self.max_serial, serial)

    def sent(self):
        return self.updates[:self.next]

    def count(self, status):
        return sum(1 for u in self.sent() if u.status == status)


# ---------------------------------------------------------------- the client


class Client:
    """One thread's way of sending: UDP, TCP on a kept connection, or TCP fresh."""

    def __init__(self, port, transport):
        self.port, self.transport = port, transport
        self.sock = None

    def send(self, msg, timeout):
        if self.transport == "udp":
            return dns.query.udp(msg, HOST, timeout=timeout, port=self.port)
        if self.transport == "tcp-fresh":
            return dns.query.tcp(msg, HOST, timeout=timeout, port=self.port)
        if self.sock is None:
            self.sock = socket.create_connection((HOST, self.port), timeout=timeout)
            self.sock.setblocking(False)
        return dns.query.tcp(msg, HOST, timeout=timeout, sock=self.sock)

    def drop(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def send_update(client, ledger, update, target, tries=3, timeout=3.0):
    """The answer's RCODE, or None when the outcome is unknown: no answer came (the
    server died, or it timed out `tries` times), or a retry was refused. The same update
    again changes nothing once applied, but its prerequisite may no longer hold (the
    first try deleted what it asks for): a refusal after a try without an answer says
    nothing of that try, which may have been applied before a kill."""
    unanswered = False
    for _ in range(tries):
        try:
            answer = client.send(message(update, target), timeout)
            rcode = dns.rcode.to_text(answer.rcode())
            return None if unanswered and rcode != "NOERROR" else rcode
        except (dns.exception.DNSException, OSError, EOFError):
            unanswered = True
            client.drop()
            if ledger.stop.is_set():
                return None
    return None


def worker(ledger, port, transport):
    client = Client(port, transport)
    try:
        while True:
            update, target = ledger.take()
            if update is None:
                return
            ledger.settle(update, send_update(client, ledger, update, target))
    finally:
        client.drop()


def soa_serial(port, timeout=0.5):
    answer = dns.query.udp(dns.message.make_query(ZONE, "SOA"), HOST, timeout=timeout, port=port)
    if answer.rcode() != dns.rcode.NOERROR or not answer.answer:
        return None
    return answer.answer[0][0].serial


def sampler(ledger, port):
    """Polls the served SOA serial while updates run (the highest seen must survive)."""
    while not ledger.stop.wait(0.02):
        try:
            serial = soa_serial(port)
        except (dns.exception.DNSException, OSError):
            continue
        if serial is not None:
            ledger.saw_serial(serial)


# ---------------------------------------------------------------- the server


class Run:
    """The work directory, the zone file and the ternd processes of one test."""

    def __init__(self, tern_bin, keep):
        self.tern_bin, self.keep = tern_bin, keep
        self.root = tempfile.mkdtemp(prefix="tern-updates-")
        self.starts = 0
        self.server = None

    def directory(self, name, zone_text, extra=""):
        """A directory with the zone file and a configuration; returns its config path."""
        work = os.path.join(self.root, name)
        os.makedirs(os.path.join(work, "data"), exist_ok=True)
        write(os.path.join(work, "crash.test.zone"), zone_text)
        write(os.path.join(work, "ternd.toml"), config(work, extra))
        return work

    def start(self, work, port):
        """Starts ternd on `work`'s configuration and waits until the zone answers."""
        self.starts += 1
        argv = [self.tern_bin, "--config", os.path.join(work, "ternd.toml")]
        zones = [peers.Zone(ZONE, os.path.join(work, "crash.test.zone"))]
        self.server = peers.Server(f"ternd-{self.starts}", zones, port, work, argv, server_cpu())
        self.server.wait_answering(timeout=30)
        return self.server

    def kill(self):
        self.server.proc.kill()
        self.server.proc.wait(timeout=10)

    def log(self):
        with open(self.server.log_path, errors="replace") as f:
            return f.read()

    def close(self, failed):
        if self.server is not None:
            self.server.stop()
        if self.keep or failed:
            print(f"  work kept in {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def server_cpu():
    return 0 if len(os.sched_getaffinity(0)) > 1 else None


def config(work, extra):
    """ternd's configuration: the zone updatable and transferable with the key."""
    return f"""[server]
listen = ["{HOST}:{{port}}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[log]
level = "info"
[[key]]
name = "{KEY}"
algorithm = "hmac-sha256"
secret = "{SECRET}"
[[acl]]
id = "u"
address = "{HOST}"
key = "{KEY}"
action = ["update", "transfer"]
[[zone]]
name = "{ZONE}"
file = "{work}/crash.test.zone"
acl = ["u"]
serial-policy = "increment"
{extra}"""


def zone_text():
    """The zone file: SOA, NS and a few records no update touches."""
    lines = [f"$ORIGIN {ZONE}", "$TTL 300",
             f"@ SOA ns.{ZONE} hostmaster.{ZONE} {BASE_SERIAL} 3600 600 86400 300",
             "@ NS ns", "ns A 192.0.2.1"]
    lines += [f"base{i} TXT \"base {i}\"" for i in range(20)]
    return "\n".join(lines) + "\n"


def configure(work, port):
    """Puts the port into `work`'s configuration (it is chosen when first started)."""
    path = os.path.join(work, "ternd.toml")
    with open(path) as f:
        text = f.read()
    write(path, text.replace("{port}", str(port)))


# ---------------------------------------------------------------- checks


def axfr(port):
    """(serial, {(owner, type, rdata)} without the SOA) as the server transfers it."""
    records, serial = set(), None
    for msg in dns.query.xfr(HOST, ZONE, port=port, keyring=KEYRING, keyname=KEY,
                             timeout=10, lifetime=60):
        for rrset in msg.answer:
            owner = rrset.name.to_text()
            for rd in rrset:
                if rrset.rdtype == dns.rdatatype.SOA:
                    serial = rd.serial
                else:
                    records.add((owner, dns.rdatatype.to_text(rrset.rdtype), rd.to_text()))
    return serial, records


def split(records):
    """The zone's own records, and the updates' records by update."""
    base, by_uid = set(), {}
    for rec in records:
        labels = rec[0].split(".")
        if len(labels) == 2 and labels[0].startswith("r") and labels[1].startswith("u"):
            by_uid.setdefault(int(labels[1][1:]), set()).add(rec)
        else:
            base.add(rec)
    return base, by_uid


def base_records():
    _, records = zone_records(zone_text())
    return records


def zone_records(text):
    """(serial, records) of a zone file's text, as `axfr` gives them."""
    zone = dns.zone.from_text(text, ZONE, relativize=True)
    records, serial = set(), None
    for name, rdataset in zone.iterate_rdatasets():
        for rd in rdataset:
            if rdataset.rdtype == dns.rdatatype.SOA:
                serial = rd.serial
            else:
                records.add((name.to_text(), dns.rdatatype.to_text(rdataset.rdtype), rd.to_text()))
    return serial, records


def resolve_unknown(ledger, by_uid, problems):
    """Updates whose answer was lost: wholly there (applied) or wholly absent."""
    for update in ledger.sent():
        if update.status != "unknown":
            continue
        got = by_uid.get(update.uid, set())
        if got == update.records:
            update.status = "applied"
            ledger.pool.append(update.uid)
        elif not got:
            update.status = "dropped"
        else:
            update.status = "half"
            problems.append(f"update {update.uid} (answer lost in the kill) is half applied: "
                            f"{len(got)} of its {len(update.records)} records")


def expected_records(ledger, update):
    """What of `update`'s records should be served, and why."""
    if not update.applied():
        return set(), f"not applied ({update.status})"
    deleter = ledger.deleted_by.get(update.uid)
    if deleter is not None and ledger.updates[deleter].applied():
        return set(), f"deleted by applied update {deleter}"
    return set(update.records), f"{update.status}" + (
        f", its deleter {deleter} not applied" if deleter is not None else "")


def check_updates(ledger, by_uid, problems):
    """Every sent update against what is served (see the module docstring)."""
    for update in ledger.sent():
        want, why = expected_records(ledger, update)
        got = by_uid.pop(update.uid, set())
        if got == want:
            continue
        if want and not got:
            problems.append(f"update {update.uid} ({why}) is missing")
        elif not want:
            problems.append(f"update {update.uid} ({why}) has {len(got)} records served")
        else:
            problems.append(f"update {update.uid} ({why}) is half there: {len(got)} of {len(want)}")
    for uid, got in sorted(by_uid.items()):
        problems.append(f"records of update {uid}, never sent or not applied, are served: {sorted(got)[:2]}")


def verify(ledger, port, label, previous_serial):
    """Checks the served zone against the ledger; returns its serial."""
    serial, records = axfr(port)
    base, by_uid = split(records)
    problems = []
    if base != base_records():
        problems.append(f"the zone file's records changed: lost {sorted(base_records() - base)[:3]}, "
                        f"gained {sorted(base - base_records())[:3]}")
    resolve_unknown(ledger, by_uid, problems)
    check_updates(ledger, by_uid, problems)
    applied = sum(1 for u in ledger.sent() if u.applied())
    low, high = (BASE_SERIAL + 1, BASE_SERIAL + applied) if applied else (BASE_SERIAL, BASE_SERIAL)
    if serial is None or not low <= serial <= high:
        problems.append(f"serial {serial}, expected {low}..{high}: one rise per committed batch "
                        f"of the {applied} applied updates")
    floor = max(previous_serial, ledger.max_serial)
    if serial is None or serial < floor:
        problems.append(f"the serial went back: {serial} after {floor} was served")
    if problems:
        shown = "\n    ".join(problems[:15])
        raise Failure(f"{label}: {len(problems)} problems:\n    {shown}")
    ledger.saw_serial(serial)
    return serial


# ---------------------------------------------------------------- the crash test


def run_phase(run, ledger, port, threads, kill_at, rng, deadline):
    """Sends updates until `kill_at` were taken (then SIGKILL at a random moment just
    after) or until all are sent (`kill_at` None)."""
    ledger.stop.clear()
    workers = [threading.Thread(target=worker, args=(ledger, port, TRANSPORTS[i % len(TRANSPORTS)]))
               for i in range(threads)]
    watcher = threading.Thread(target=sampler, args=(ledger, port))
    for t in workers + [watcher]:
        t.start()
    try:
        if kill_at is None:
            join_all(workers, deadline, "the last phase")
            return
        wait_for(lambda: ledger.next >= kill_at or run.server.proc.poll() is not None, deadline,
                 f"{kill_at} updates taken")
        if run.server.proc.poll() is not None:
            raise Failure(f"ternd exited by itself ({run.server.proc.returncode}):\n{run.server.log_tail()}")
        time.sleep(rng.uniform(0.0, 0.05))
        run.kill()
    finally:
        ledger.stop.set()
        join_all(workers + [watcher], time.monotonic() + 30, "the client threads")


def wait_for(condition, deadline, what):
    while not condition():
        if time.monotonic() > deadline:
            raise Failure(f"timed out waiting for {what}")
        time.sleep(0.001)


def join_all(threads, deadline, what):
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            raise Failure(f"timed out waiting for {what}")


def crash_test(run, args, rng, deadline):
    """The crash test; returns (acknowledged, kills, checks)."""
    extra = f'zonefile-sync = "{args.zonefile_sync}"\n'
    if args.ixfr_history is not None:
        extra += f"ixfr-history = {args.ixfr_history}\n"
    if args.ixfr_history_size is not None:
        extra += f"ixfr-history-size = {args.ixfr_history_size}\n"
    work = run.directory("crash", zone_text(), extra)
    port = peers.free_port()
    configure(work, port)
    ledger = Ledger(plan_updates(rng, args.updates), args.seed)
    kill_points = sorted(rng.sample(range(args.updates // 20, args.updates * 19 // 20), args.kills))
    run.start(work, port)
    serial, checks = verify(ledger, port, "at the start", BASE_SERIAL), 1
    for n, kill_at in enumerate(kill_points + [None], 1):
        run_phase(run, ledger, port, args.threads, kill_at, rng, deadline)
        if kill_at is not None:
            lost = [u for u in ledger.sent() if u.status == "unknown"]
            run.start(work, port)
            serial = verify(ledger, port, f"after kill {n}", serial)
            applied = sum(1 for u in lost if u.applied())
            print(f"  kill {n} after {ledger.next} updates taken: restarted at serial {serial}; "
                  f"of {len(lost)} answers lost, {applied} applied, {len(lost) - applied} not",
                  flush=True)
            checks += 1
    serial = verify(ledger, port, "at the end", serial)
    run.server.stop()
    run.start(work, port)
    serial = verify(ledger, port, "after a clean restart", serial)
    checks += 2
    run.server.stop()
    if args.zonefile_sync == "never":
        with open(os.path.join(work, "crash.test.zone")) as f:
            if f.read() != zone_text():
                raise Failure('zonefile-sync = "never", yet the zone file was written')
        compactions = 0
        for name in (n for n in os.listdir(work) if n.endswith(".log")):
            with open(os.path.join(work, name), errors="replace") as f:
                compactions += f.read().count("journal compacted")
        print(f"  zone file untouched; {compactions} journal compactions", flush=True)
        checks += 1
    report_rcodes(ledger)
    return ledger.count("acked"), len(kill_points), checks


def report_rcodes(ledger):
    bad = {k: v for k, v in ledger.rcodes.items() if k != "NOERROR"}
    if bad:
        raise Failure(f"updates answered other than NOERROR: {bad} (all were to be accepted)")


# ---------------------------------------------------------------- the journal test


def frame_ends(data):
    """Where each whole frame of a journal ends (its length prefix walked, up to the
    zeros written ahead of the next append, if any)."""
    ends, at = [], JOURNAL_HEADER
    while at + 8 <= len(data):
        if data[at:at + 8] == bytes(8):
            break  # zeros written ahead
        (length,) = struct.unpack_from("!I", data, at)
        if at + 8 + length > len(data):
            break
        at += 8 + length
        ends.append(at)
    return ends


def state_after(updates, count):
    """The updates' records served after the first `count` of `updates` (in order)."""
    state = set()
    for update in updates[:count]:
        if update.target is not None:
            state -= update.target_records
        state |= update.records
    return state


def sequential(port, updates, rng):
    """Sends `updates` one at a time, each deleting an earlier one now and then; all
    must be acknowledged."""
    ledger = Ledger(updates, 0)
    clients = [Client(port, t) for t in ("udp", "tcp-kept", "tcp-fresh")]
    live = []
    for update in updates:
        target = None
        if update.deletes and live:
            target = live.pop(rng.randrange(len(live)))
            update.target = target.uid
        update.target_records = target.records if target else frozenset()
        rcode = send_update(clients[update.uid % 3], ledger, update, target)
        if rcode != "NOERROR":
            raise Failure(f"journal run: update {update.uid} answered {rcode}")
        live.append(update)
    for c in clients:
        c.drop()


def journal_run(run, count, rng):
    """Writes a journal of `count` updates on the untouched zone file; returns its bytes
    and the updates in order."""
    work = run.directory("journal-source", zone_text(), 'zonefile-sync = "1h"\nixfr-history = 100000\n')
    port = peers.free_port()
    configure(work, port)
    run.start(work, port)
    updates = plan_updates(rng, count, first_uid=100_000)
    sequential(port, updates, rng)
    run.kill()
    with open(os.path.join(work, "data", f"{ZONE}journal"), "rb") as f:
        data = f.read()
    with open(os.path.join(work, "crash.test.zone")) as f:
        if f.read() != zone_text():
            raise Failure("journal run: the zone file was written; the test needs it as it was")
    return data, updates


def check_served(port, updates, count, label):
    serial, records = axfr(port)
    base, by_uid = split(records)
    served = set().union(*by_uid.values()) if by_uid else set()
    want = state_after(updates, count)
    if base != base_records() or served != want or serial != BASE_SERIAL + count:
        raise Failure(f"{label}: serves serial {serial} and {len(served)} update records, expected "
                      f"serial {BASE_SERIAL + count} and {len(want)} (the first {count} updates); "
                      f"missing {sorted(want - served)[:3]}, extra {sorted(served - want)[:3]}")


def check_cut_log(log, dropped, label):
    lines = [line for line in log.splitlines() if DROP_MESSAGE in line]
    if dropped == 0 and lines:
        raise Failure(f"{label}: nothing was torn, yet the log says: {lines[0]}")
    if dropped and not any(f"journal: {dropped} {DROP_MESSAGE}" in line for line in lines):
        raise Failure(f"{label}: no log line says {dropped} bytes were dropped:\n{log[-1500:]}")


def one_cut(run, data, updates, ends, offset, n, spare=0):
    """ternd on the journal cut at `offset`: the whole frames before the cut served,
    the tail dropped and said, then one more update that survives a SIGKILL. With
    `spare`, the last that many bytes before the cut are zeros written ahead: kept,
    not dropped."""
    whole = sum(1 for e in ends if e <= offset)
    kept = ends[whole - 1] if whole else JOURNAL_HEADER
    label = f"journal cut at byte {offset} of {len(data)}"
    work = run.directory(f"cut-{n}", zone_text(), 'zonefile-sync = "1h"\nixfr-history = 100000\n')
    journal = os.path.join(work, "data", f"{ZONE}journal")
    with open(journal, "wb") as f:
        f.write(data[:offset])
    port = peers.free_port()
    configure(work, port)
    run.start(work, port)
    check_served(port, updates, whole, label)
    check_cut_log(run.log(), offset - kept - spare, label)
    if os.path.getsize(journal) != kept + spare:
        raise Failure(f"{label}: the journal is {os.path.getsize(journal)} bytes, not cut to {kept + spare}")
    extra = plan_updates(random.Random(offset), 1, first_uid=200_000 + n)[0]
    extra.deletes, extra.target_records = False, frozenset()
    if send_update(Client(port, "udp"), Ledger([], 0), extra, None) != "NOERROR":
        raise Failure(f"{label}: an update after the cut was not acknowledged")
    run.kill()
    run.start(work, port)
    check_served(port, updates[:whole] + [extra], whole + 1, f"{label}, one more update, SIGKILL")
    run.server.stop()
    return whole, offset - kept - spare


def journal_test(run, count, cuts, rng):
    """The journal test; returns the number of cuts checked."""
    data, updates = journal_run(run, count, rng)
    ends = frame_ends(data)
    if len(ends) != count or any(data[ends[-1]:]):
        raise Failure(f"the journal holds {len(ends)} whole frames ending at {ends[-1:]} "
                      f"of {len(data)} bytes, expected one per update ({count}), then zeros")
    spare = len(data) - ends[-1]
    if spare:  # as written: every update served, the zeros ahead kept, nothing dropped
        whole, dropped = one_cut(run, data, updates, ends, len(data), cuts + 2, spare)
        print(f"  as written ({spare} bytes of zeros ahead): {whole} of {count} updates served, "
              f"{dropped} bytes dropped", flush=True)
    data = data[:ends[-1]]  # the cuts are of the frames
    offsets = sorted(rng.sample(range(JOURNAL_HEADER + 1, len(data)), cuts))
    for n, offset in enumerate(offsets + [len(data), JOURNAL_HEADER]):
        whole, dropped = one_cut(run, data, updates, ends, offset, n)
        print(f"  cut at byte {offset}: {whole} of {count} updates served, {dropped} bytes dropped",
              flush=True)
    return len(offsets) + 2 + bool(spare)


# ---------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tern", default=peers.default_ternd(REPO, "release"))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--journal-updates", type=int, default=300)
    parser.add_argument("--cuts", type=int, default=8)
    parser.add_argument("--zonefile-sync", default="1s", help='the zone\'s zonefile-sync ("never": the journal test is not run)')
    parser.add_argument("--ixfr-history", type=int, default=None, help="the zone's ixfr-history (compactions)")
    parser.add_argument("--ixfr-history-size", type=int, default=None, help="the zone's ixfr-history-size in bytes")
    parser.add_argument("--budget", type=float, default=600, help="seconds before giving up")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    if not os.access(args.tern, os.X_OK):
        print(f"no ternd at {args.tern}: build it (cargo build --release -p ternd)")
        return 2
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    print(f"seed {args.seed} (rerun: {sys.argv[0]} --seed {args.seed})", flush=True)
    if server_cpu() is not None:
        os.sched_setaffinity(0, {1})
    rng = random.Random(args.seed)
    run, failed, started = Run(args.tern, args.keep), True, time.monotonic()
    try:
        acked, kills, checks = crash_test(run, args, rng, started + args.budget)
        cuts = journal_test(run, args.journal_updates, args.cuts, rng) if args.zonefile_sync != "never" else 0
        failed = False
    except Failure as e:
        print(f"FAIL: {e}")
        if run.server is not None:
            print(f"  --- {run.server.log_path}:\n{run.server.log_tail(10)}")
        return 1
    finally:
        run.close(failed)
    print(f"updates: {args.updates} sent, {acked} acknowledged, {kills} kills, {checks} crash checks "
          f"passed; {cuts} journal cuts passed ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
