#!/usr/bin/env python3
"""Dynamic-update benchmark (`dnsperf -u`): Tern beside Knot DNS and BIND (issue 28).

  python3 bench/update_rate.py [--servers tern,knot,bind] [--size 1000] [--rounds 3]
  (`tern=PATH` names a particular ternd build: two builds side by side in one run)
                           [--duration 15] [--query-duration 10] [--paced-rate 5000]
                           [--server-cpu 0.5] [--tsig] [--signed] [--work DIR]

Each server serves the peer benchmark's TLD-like zone (`--size` delegations, made and
cached by `bench/datasets.py`) as a primary from a copy of the zone file, with a
durable journal, and lets 127.0.0.1 update it (unsigned, or with a TSIG key,
hmac-sha256, with `--tsig`):

* Tern: `storage` in its work directory; every batch of updates (up to 256) is
  appended to the journal with one `fdatasync` before it is published and answered;
  defaults otherwise (`zonefile-sync` 60 s, `ixfr-history` 100: the zone file is
  written whenever the journal holds twice the history, i.e. every ~200 updates).
* Knot DNS: its default journal (LMDB, `journal-db-mode: robust`: synced at every
  commit; updates are committed in batches), `zonefile-sync: 60` as Tern's default.
* BIND: its default journal (`<zone file>.jnl`; `dns_journal_commit` fsyncs the
  transaction, then the header: twice per update), its default zone-file dump delay.

With `--signed` (issue 51; Tern and Knot DNS) each server signs the zone itself and every
update on commit: one CSK, ECDSAP256SHA256, NSEC (Tern: a `[[policy]]` with `scheme =
"csk"` and the zone's `dnssec-policy`; Knot DNS: `dnssec-signing: on` with a policy of
`single-type-signing: on`), defaults otherwise (signatures valid 14 days). A round waits
until the SOA comes with its RRSIG (DO=1); the zone checks then also ask that every
sampled answer comes signed (an RRSIG with the A record, an NSEC with the NXDOMAIN).

Every server has one worker (Tern `udp-workers = tcp-workers = 1`, Knot DNS one UDP,
one TCP and one background worker, BIND `-n 1 -U 1`), logs warnings only, and runs
pinned to CPU 0 (every thread put back there once the zone answers); dnsperf runs on
CPU 1. A round starts every server afresh, in turn (A B C A B C ...), and runs:

1. `updates`: dnsperf -u for `--duration` s at full rate (`-c 4 -q 200`), each update
   one record: add `u<j>.tld. A`, and from the 500th on also delete the A record added
   500 updates before (`updates-*.txt`, written once). Then the zone is checked by
   queries: a sample of the names whose add was acknowledged well before the end (and
   not deleted) must answer their address, the deleted ones and those never sent
   NXDOMAIN (a margin of dnsperf's outstanding updates is left at the end).
2. `queries idle`: dnsperf on the query mix for `--query-duration` s.
3. `queries + paced updates`: the same queries while another dnsperf -u sends updates
   at `--paced-rate` a second (5,000 by default, the same for every server; other
   names, checked the same way); both dnsperf on CPU 1. This is the fair form of
   "do updates slow the answers": every server is asked the same work.
4. `queries + updates`: the same, updates at full rate. A server that takes more
   updates then also leaves its dnsperf less of CPU 1 to send queries with, so this
   ratio favours servers that take fewer updates.

With `--server-cpu F`, each server (every thread of it) is held to F of one CPU by a
cgroup quota (v1 `cpu` controller, 10 ms periods; needs root). On two CPUs dnsperf
alone cannot saturate a fast server (CPU 1 was 98–100% busy while Tern's CPU 0 was
not), so the query ratios then measure the client as much as the server; held to half
a CPU, the server is what saturates, dnsperf keeps headroom on CPU 1, and the ratio
says how much of the server's own capacity the updates take. The table's CPU rows show
whether that held.

Reported: acknowledged updates per second (dnsperf's figure; every answer must be
NOERROR), server CPU per update, update latency, and the query rate while updating
against idle (paced and at full rate). Medians over rounds; every raw figure goes to
`<work>/updates-results-<time>.json`, and the markdown table is printed.
"""

import argparse
import base64
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import dns.exception  # noqa: E402
import dns.message  # noqa: E402
import dns.query  # noqa: E402
import dns.rcode  # noqa: E402
import dns.rdatatype  # noqa: E402

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402

SERVER_CPU, CLIENT_CPU = 0, 1
ORIGIN = datasets.ORIGIN
LAG = 500  # an update deletes the record added this many updates before
KEY = "upd.bench."
SECRET = base64.b64encode(b"tern update benchmark key 32 by!").decode()
KINDS = ("tern", "knot", "bind")


# ---------------------------------------------------------------- update streams


class Stream:
    """A dnsperf -u input: add `<prefix><j>`, and from LAG on delete `<prefix><j-LAG>`.

    Operation k adds or deletes one name; `add_at(j)`/`delete_at(j)` say which k."""

    def __init__(self, work, prefix, names):
        self.prefix, self.names = prefix, names
        self.path = os.path.join(work, f"updates-{prefix}-{names}.txt")
        self.ops = names + max(0, names - LAG)
        if not os.path.exists(self.path):
            self._write()

    @staticmethod
    def address(j):
        return f"10.{j >> 16 & 255}.{j >> 8 & 255}.{j & 255}"

    def owner(self, j):
        return f"{self.prefix}{j}.{ORIGIN}"

    def add_at(self, j):
        return j if j < LAG else LAG + 2 * (j - LAG)

    def delete_at(self, j):
        """The operation deleting name j (None when the stream never does)."""
        return self.add_at(j + LAG) + 1 if j + LAG < self.names else None

    def _write(self):
        zone = ORIGIN.rstrip(".")
        with open(self.path + ".tmp", "w") as f:
            for j in range(self.names):
                f.write(f"{zone}\nadd {self.owner(j)} 300 A {self.address(j)}\nsend\n")
                if j >= LAG:
                    k = j - LAG
                    f.write(f"{zone}\ndelete {self.owner(k)} A {self.address(k)}\nsend\n")
        os.replace(self.path + ".tmp", self.path)


def expectations(stream, sent, margin, rng, sample=400):
    """Names whose state after `sent` operations is certain, sampled: (present, absent).

    Present: added before `sent - margin`, not deleted before `sent + margin`. Absent:
    deleted before `sent - margin`, or added at or after `sent` (never sent)."""
    present, absent, unsent = [], [], []
    for j in range(stream.names):
        added, deleted = stream.add_at(j), stream.delete_at(j)
        if added >= sent:
            unsent.append(j)
            if len(unsent) >= sample:
                break
        elif added < sent - margin and (deleted is None or deleted >= sent + margin):
            present.append(j)
        elif deleted is not None and deleted < sent - margin:
            absent.append(j)
    pick = lambda names: rng.sample(names, min(sample, len(names)))  # noqa: E731
    return pick(present), pick(absent) + unsent


def check_zone(port, stream, sent, margin, rng, signed=False):
    """Queries the sampled names; returns (checked, problems)."""
    present, absent = expectations(stream, sent, margin, rng)
    problems = []
    for j, want in [(j, True) for j in present] + [(j, False) for j in absent]:
        got = lookup(port, stream.owner(j), signed)
        if want and got != stream.address(j):
            problems.append(f"{stream.owner(j)}: added (op {stream.add_at(j)} of {sent}) but {got}")
        if not want and got is not None:
            problems.append(f"{stream.owner(j)}: deleted or never sent, yet answers {got}")
    return len(present) + len(absent), problems


def lookup(port, name, signed=False):
    """The A address served for `name`, None for NXDOMAIN, or the RCODE's name; with
    `signed`, "unsigned" when the answer lacks its RRSIG (or the NXDOMAIN its NSEC)."""
    query = dns.message.make_query(name, "A", want_dnssec=signed)
    for _ in range(3):
        try:
            answer = dns.query.udp(query, "127.0.0.1", port=port, timeout=2)
            break
        except dns.exception.Timeout:
            continue
    else:
        return "timeout"
    if signed and not proven(answer):
        return "unsigned"
    if answer.rcode() == dns.rcode.NXDOMAIN:
        return None
    if answer.rcode() != dns.rcode.NOERROR or not answer.answer:
        return dns.rcode.to_text(answer.rcode())
    return next(r for r in answer.answer if r.rdtype == dns.rdatatype.A)[0].address


def proven(answer):
    """True when a DO=1 answer is signed: the A RRset with its RRSIG, or an NXDOMAIN
    with NSEC records and their RRSIGs (RFC 4035 §3.1.1, §3.1.3.2)."""
    def types(section):
        return {(r.rdtype, r.covers) for r in section}
    A, NSEC, RRSIG = dns.rdatatype.A, dns.rdatatype.NSEC, dns.rdatatype.RRSIG
    if answer.rcode() == dns.rcode.NXDOMAIN:
        held = types(answer.authority)
        return (NSEC, dns.rdatatype.NONE) in held and (RRSIG, NSEC) in held
    return (RRSIG, A) in types(answer.answer)


def wait_signed(port, timeout=300.0):
    """Waits until the SOA comes with its RRSIG (the server has signed the zone)."""
    query = dns.message.make_query(ORIGIN, "SOA", want_dnssec=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            answer = dns.query.udp(query, "127.0.0.1", port=port, timeout=1)
            if any(r.rdtype == dns.rdatatype.RRSIG for r in answer.answer):
                return
        except dns.exception.Timeout:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the zone was not signed within {timeout:.0f} s")


# ---------------------------------------------------------------- servers


def tern_conf(port, work, zone, tsig, signed=False, policy=""):
    """ternd's configuration; with `signed`, a CSK `[[policy]]` (`policy`: more of its
    lines) signs the zone."""
    key = f'[[key]]\nname = "{KEY}"\nalgorithm = "hmac-sha256"\nsecret = "{SECRET}"\n' if tsig else ""
    acl_key = f'key = "{KEY}"\n' if tsig else ""
    text = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[log]
level = "warn"
{key}[[acl]]
id = "update"
address = "127.0.0.1"
{acl_key}action = "update"
[[zone]]
name = "{ORIGIN}"
file = "{zone}"
acl = ["update"]
"""
    if signed:
        text += f'dnssec-policy = "bench"\n[[policy]]\nid = "bench"\nscheme = "csk"\n{policy}'
    return write_conf(work, "ternd.toml", text), ["--config"]


def knot_conf(port, work, zone, tsig, signed=False):
    key = f"key:\n  - id: {KEY}\n    algorithm: hmac-sha256\n    secret: {SECRET}\n" if tsig else ""
    acl_key = f"    key: {KEY}\n" if tsig else ""
    text = f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: stderr
    any: warning
database:
  storage: {work}
{key}acl:
  - id: update
    address: 127.0.0.1
{acl_key}    action: update
template:
  - id: default
    storage: {work}
    zonefile-sync: 60
zone:
  - domain: {ORIGIN}
    file: {zone}
    acl: update
"""
    if signed:
        text = text.replace("template:\n", "policy:\n  - id: bench\n    algorithm: ecdsap256sha256\n"
                            "    single-type-signing: on\ntemplate:\n")
        text += "    dnssec-signing: on\n    dnssec-policy: bench\n"
    return write_conf(work, "knot.conf", text), ["-c"]


def bind_conf(port, work, zone, tsig, signed=False):
    if signed:
        raise ValueError("--signed: Tern and Knot DNS only")
    key = f'key "{KEY}" {{ algorithm hmac-sha256; secret "{SECRET}"; }};\n' if tsig else ""
    allow = f'key "{KEY}";' if tsig else "127.0.0.1;"
    text = f"""{key}options {{
  directory "{work}";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  pid-file "{work}/named.pid";
  session-keyfile "{work}/session.key";
  check-names primary ignore;
}};
logging {{
  channel out {{ stderr; severity warning; print-time yes; }};
  category default {{ out; }};
  category update {{ out; }};
  category update-security {{ out; }};
}};
controls {{ }};
zone "{ORIGIN}" {{ type primary; file "{zone}"; allow-update {{ {allow} }}; notify no; }};
"""
    return write_conf(work, "named.conf", text), ["-f", "-n", "1", "-U", "1", "-c"]


def write_conf(work, name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def start(kind, port, work, zone_src, tsig, tern_bin, signed=False):
    """A fresh `kind` in `work` (emptied), serving a copy of `zone_src` (signed by the
    server itself with `signed`, once it answers signed)."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "data"))
    zone = os.path.join(work, "zone.txt")
    shutil.copyfile(zone_src, zone)
    conf, flags = {"tern": tern_conf, "knot": knot_conf, "bind": bind_conf}[kind](
        port, work, zone, tsig, signed)
    program = {"tern": tern_bin, "knot": "knotd", "bind": "named"}[kind]
    server = peers.Server(kind, [peers.Zone(ORIGIN, zone)], port, work,
                          [program, *flags, conf], SERVER_CPU)
    server.wait_answering(timeout=900)
    if signed:
        wait_signed(port)
    return server


# ---------------------------------------------------------------- dnsperf


def dnsperf_argv(port, data, seconds, args, update, rate=None):
    argv = ["taskset", "-c", str(CLIENT_CPU), "dnsperf", "-s", "127.0.0.1", "-p", str(port),
            "-d", data, "-l", str(seconds), "-c", str(args.clients), "-q", str(args.outstanding)]
    if rate:
        argv += ["-Q", str(rate)]
    if update:
        argv += ["-u", "-n", "1"]
        if args.tsig:
            argv += ["-y", f"hmac-sha256:{KEY}:{SECRET}"]
    return argv


def parse_dnsperf(out):
    """dnsperf's figures: sent, completed, lost, per_second, latency, run_s, rcodes."""
    fields = {}
    patterns = {
        "sent": r"(?:Queries|Updates) sent:\s+(\d+)",
        "completed": r"(?:Queries|Updates) completed:\s+(\d+)",
        "lost": r"(?:Queries|Updates) lost:\s+(\d+)",
        "per_second": r"(?:Queries|Updates) per second:\s+([\d.]+)",
        "latency": r"Average Latency \(s\):\s+([\d.]+)",
        "run_s": r"Run time \(s\):\s+([\d.]+)",
    }
    for field, pattern in patterns.items():
        match = re.search(pattern, out)
        if not match:
            raise RuntimeError(f"unexpected dnsperf output (no {field}):\n{out}")
        fields[field] = float(match.group(1))
    codes = re.search(r"Response codes:\s+(.*)", out)
    fields["rcodes"] = dict((m[0], int(m[1])) for m in re.findall(r"([A-Z]+) (\d+) \(", codes.group(1))) if codes else {}
    fields["end_of_file"] = "end of file" in out
    return fields


def run_dnsperf(argv, seconds):
    """Runs dnsperf; its figures, and the CPU seconds it used (`client_cpu_s`)."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + seconds + 120
        while (done := os.wait4(proc.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"dnsperf did not end: {argv}")
            time.sleep(0.05)
        proc.returncode = done[1]
        out.seek(0)
        fields = parse_dnsperf(out.read())
    fields["client_cpu_s"] = done[2].ru_utime + done[2].ru_stime
    return fields


def in_background(argv, seconds):
    """Runs dnsperf on a thread; returns (thread, result dict filled when done)."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(run_dnsperf(argv, seconds)))
    thread.start()
    return thread, result


# ---------------------------------------------------------------- a round


def timed(server, work):
    """Runs `work()` and returns (its result, server CPU seconds it took)."""
    before = server.cpu_seconds()
    result = work()
    return result, server.cpu_seconds() - before


def update_phase(server, stream, args, rng):
    argv = dnsperf_argv(server.port, stream.path, args.duration, args, update=True)
    perf, cpu = timed(server, lambda: run_dnsperf(argv, args.duration))
    return summarize_updates(server, stream, perf, cpu, args, rng)


def summarize_updates(server, stream, perf, cpu, args, rng):
    """Checks the zone after an update run; returns its figures."""
    margin = args.outstanding + int(perf["lost"]) + 10
    checked, problems = check_zone(server.port, stream, int(perf["sent"]), margin, rng,
                                   args.signed)
    # A lost update (no answer: dropped, or timed out) may or may not have been applied,
    # wherever it was in the stream; each can make one name differ.
    unexplained = max(0, len(problems) - int(perf["lost"]))
    noerror = perf["rcodes"].get("NOERROR", 0)
    return {
        "updates_per_s": perf["per_second"], "acknowledged": noerror,
        "acknowledged_per_s": noerror / perf["run_s"] if perf["run_s"] else 0.0,
        "sent": perf["sent"], "lost": perf["lost"], "rcodes": perf["rcodes"],
        "latency_ms": perf["latency"] * 1000, "run_s": perf["run_s"],
        "end_of_file": perf["end_of_file"],
        "cpu_us_per_update": cpu / max(1, perf["completed"]) * 1e6,
        "checked_names": checked, "problems": problems[:10], "problem_count": len(problems),
        "unexplained": unexplained, "client_cpu_s": perf["client_cpu_s"],
    }


def query_phase(server, queries, args):
    argv = dnsperf_argv(server.port, queries, args.query_duration, args, update=False)
    perf, cpu = timed(server, lambda: run_dnsperf(argv, args.query_duration))
    return {"qps": perf["per_second"], "lost": perf["lost"], "run_s": perf["run_s"],
            "client_cpu_s": perf["client_cpu_s"], "server_cpu_s": cpu,
            "cpu_us_per_query": cpu / max(1, perf["completed"]) * 1e6}


def mixed_phase(server, queries, stream, args, rng, rate=None):
    """Queries at full rate while updates run at full rate (or at `rate` a second)."""
    upd_argv = dnsperf_argv(server.port, stream.path, args.query_duration + 1, args, update=True,
                            rate=rate)
    before = server.cpu_seconds()
    thread, upd = in_background(upd_argv, args.query_duration + 1)
    time.sleep(0.5)
    query = query_phase(server, queries, args)
    thread.join(timeout=args.query_duration + 180)
    if not upd:
        raise RuntimeError("the update dnsperf of the mixed phase gave no figures")
    updates = summarize_updates(server, stream, upd, server.cpu_seconds() - before, args, rng)
    return query, updates


CGROUP_V1 = "/sys/fs/cgroup/cpu"
CAP_PERIOD_US = 10_000


def cap_cpu(server, fraction):
    """Holds the server's processes (every thread, and those started later) to `fraction`
    of one CPU: a `cpu` cgroup (v1) of their own with a quota every 10 ms. Returns its
    path."""
    if not os.path.exists(os.path.join(CGROUP_V1, "cpu.cfs_quota_us")):
        raise RuntimeError(f"--server-cpu needs the cgroup v1 cpu controller at {CGROUP_V1}")
    path = os.path.join(CGROUP_V1, f"tern-bench-{server.kind}-{server.proc.pid}")
    os.makedirs(path)
    for name, value in (("cpu.cfs_period_us", CAP_PERIOD_US),
                        ("cpu.cfs_quota_us", int(fraction * CAP_PERIOD_US))):
        with open(os.path.join(path, name), "w") as f:
            f.write(str(value))
    for pid in server.pids():
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(pid))
    return path


def throttled_s(cgroup):
    """Seconds the cgroup's threads spent held back by the quota (`throttled_time`)."""
    with open(os.path.join(cgroup, "cpu.stat")) as f:
        stat = dict(line.split() for line in f)
    return int(stat.get("throttled_time", 0)) / 1e9


def uncap(cgroup):
    """Removes the cgroup once its server is gone (what is left goes back to the root)."""
    with open(os.path.join(cgroup, "cgroup.procs")) as f:
        left = f.read().split()
    for pid in left:
        with open(os.path.join(CGROUP_V1, "cgroup.procs"), "w") as f:
            f.write(pid)
    os.rmdir(cgroup)


def split_kind(kind, default_tern):
    """`tern=PATH` → ("tern", PATH): a particular ternd build beside another; a bare
    kind → (kind, `default_tern` for "tern", else None)."""
    base, _, path = kind.partition("=")
    if base == "tern":
        return base, path or default_tern
    return base, None


def session(kind, zone, queries, streams, args, rng):
    """One server, fresh: the three phases; returns their figures."""
    base, binary = split_kind(kind, args.tern)
    label = re.sub(r"[^A-Za-z0-9._-]", "_", kind)
    work = os.path.join(args.work, "updates-run", label)
    port = peers.free_port()
    server = start(base, port, work, zone, args.tsig, binary, args.signed)
    cgroup = cap_cpu(server, args.server_cpu) if args.server_cpu else None
    try:
        alone = update_phase(server, streams[0], args, rng)
        idle = query_phase(server, queries, args)
        paced, paced_during = (mixed_phase(server, queries, streams[2], args, rng, args.paced_rate)
                               if args.paced_rate else (None, None))
        busy, during = mixed_phase(server, queries, streams[1], args, rng)
        throttled = throttled_s(cgroup) if cgroup else None
    finally:
        server.stop()
        if cgroup:
            uncap(cgroup)
    result = {"updates": alone, "idle": idle, "busy": busy, "mixed_updates": during,
              "server_cpu_cap": args.server_cpu or None, "throttled_s": throttled,
              "paced": paced, "paced_updates": paced_during,
              "loadavg_1m_after": os.getloadavg()[0],
              "query_ratio": busy["qps"] / idle["qps"] if idle["qps"] else 0.0,
              "paced_ratio": paced["qps"] / idle["qps"] if paced and idle["qps"] else None}
    say(kind, result)
    return result


def update_runs(r):
    """The update runs of a round's result (alone, at full rate, paced)."""
    return [p for p in (r["updates"], r["mixed_updates"], r.get("paced_updates")) if p]


def say(kind, r):
    u, m = r["updates"], r["mixed_updates"]
    bad = sum(p["unexplained"] for p in update_runs(r))
    paced = (f"; {r['paced']['qps']:,.0f} with updates at {r['paced_updates']['acknowledged_per_s']:,.0f}/s"
             f" = {r['paced_ratio']:.0%}" if r.get("paced") else "")
    print(f"  {kind:5} {u['acknowledged_per_s']:9,.0f} updates/s acknowledged "
          f"({u['cpu_us_per_update']:.0f} µs CPU each, {u['latency_ms']:.1f} ms), "
          f"queries {r['busy']['qps']:,.0f} while updating ({m['acknowledged_per_s']:,.0f}/s) "
          f"vs {r['idle']['qps']:,.0f} idle = {r['query_ratio']:.0%}{paced}"
          + (f"; {bad} ZONE CHECK PROBLEMS beyond the lost updates: "
             f"{[x for p in update_runs(r) for x in p['problems']][:2]}" if bad else ""),
          flush=True)


# ---------------------------------------------------------------- report


def medians(results, kind):
    rounds = [r for r in results if r["kind"] == kind]
    pick = lambda f: statistics.median(f(r) for r in rounds)  # noqa: E731
    spread = lambda f: (min(f(r) for r in rounds), max(f(r) for r in rounds))  # noqa: E731
    return {
        "acked": pick(lambda r: r["updates"]["acknowledged_per_s"]),
        "acked_range": spread(lambda r: r["updates"]["acknowledged_per_s"]),
        "cpu": pick(lambda r: r["updates"]["cpu_us_per_update"]),
        "latency": pick(lambda r: r["updates"]["latency_ms"]),
        "idle": pick(lambda r: r["idle"]["qps"]),
        "busy": pick(lambda r: r["busy"]["qps"]),
        "mixed_acked": pick(lambda r: r["mixed_updates"]["acknowledged_per_s"]),
        "ratio": pick(lambda r: r["query_ratio"]),
        "ratio_range": spread(lambda r: r["query_ratio"]),
        "checked": sum(p["checked_names"] for r in rounds for p in update_runs(r)),
        "differ": sum(p["problem_count"] for r in rounds for p in update_runs(r)),
        "problems": sum(p["unexplained"] for r in rounds for p in update_runs(r)),
        "lost": sum(p["lost"] for r in rounds for p in update_runs(r)),
        "not_noerror": sum(sum(v for k, v in p["rcodes"].items() if k != "NOERROR")
                           for r in rounds for p in update_runs(r)),
        "rounds": len(rounds),
        **(paced_medians(rounds) if all(r.get("paced") for r in rounds) else {}),
        "idle_server": pick(lambda r: r["idle"]["server_cpu_s"] / r["idle"]["run_s"]),
        "busy_server": pick(lambda r: r["busy"]["server_cpu_s"] / r["busy"]["run_s"]),
        "idle_client": pick(lambda r: r["idle"]["client_cpu_s"] / r["idle"]["run_s"]),
        "busy_client": pick(lambda r: (r["busy"]["client_cpu_s"] + r["mixed_updates"]["client_cpu_s"])
                            / r["mixed_updates"]["run_s"]),
    }


def paced_medians(rounds):
    pick = lambda f: statistics.median(f(r) for r in rounds)  # noqa: E731
    return {
        "paced_busy": pick(lambda r: r["paced"]["qps"]),
        "paced_acked": pick(lambda r: r["paced_updates"]["acknowledged_per_s"]),
        "paced_latency": pick(lambda r: r["paced_updates"]["latency_ms"]),
        "paced_cpu": pick(lambda r: r["paced"]["server_cpu_s"] / r["paced"]["run_s"]),
        "paced_ratio": pick(lambda r: r["paced_ratio"]),
        "paced_range": (min(r["paced_ratio"] for r in rounds), max(r["paced_ratio"] for r in rounds)),
    }


def paced_markdown(results, kinds):
    rows = [(k, medians(results, k)) for k in kinds]
    if not all("paced_ratio" in m for _, m in rows):
        return []
    lines = ["", "| server | queries/s idle | queries/s, updates paced | updates/s acknowledged meanwhile | "
             "update latency ms | CPU 0 (server) busy | queries / idle (min–max) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, m in rows:
        lo, hi = m["paced_range"]
        lines.append(f"| {kind} | {m['idle']:,.0f} | {m['paced_busy']:,.0f} | {m['paced_acked']:,.0f} | "
                     f"{m['paced_latency']:.1f} | {m['paced_cpu']:.0%} | {m['paced_ratio']:.0%} ({lo:.0%}–{hi:.0%}) |")
    return lines


def markdown(results, kinds):
    lines = ["| server | updates/s acknowledged (median) | min–max | server CPU µs/update | "
             "update latency ms | queries/s idle | queries/s while updating | updates/s meanwhile | "
             "queries while updating / idle (min–max) | zone checks |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for kind in kinds:
        m = medians(results, kind)
        lo, hi = m["acked_range"]
        rlo, rhi = m["ratio_range"]
        check = (f"{m['checked']:,} names, {m['differ']} differ ({m['lost']:.0f} updates lost), "
                 f"{m['not_noerror']} not NOERROR")
        lines.append(f"| {kind} | {m['acked']:,.0f} | {lo:,.0f}–{hi:,.0f} | {m['cpu']:.1f} | "
                     f"{m['latency']:.1f} | {m['idle']:,.0f} | {m['busy']:,.0f} | {m['mixed_acked']:,.0f} | "
                     f"{m['ratio']:.0%} ({rlo:.0%}–{rhi:.0%}) | {check} |")
    lines += ["", "| server | CPU 0 (server) busy, idle queries | while updating | CPU 1 (dnsperf) busy, idle "
              "queries | while updating (both dnsperf) |", "|---|---:|---:|---:|---:|"]
    for kind in kinds:
        m = medians(results, kind)
        lines.append(f"| {kind} | {m['idle_server']:.0%} | {m['busy_server']:.0%} | "
                     f"{m['idle_client']:.0%} | {m['busy_client']:.0%} |")
    return "\n".join(lines + paced_markdown(results, kinds))


def targets(results, kinds):
    terns = [k for k in kinds if k.partition("=")[0] == "tern"]
    others = [k for k in kinds if k not in terns]
    if not terns or not others:
        return ""
    peers_best = max(medians(results, k)["acked"] for k in others)
    lines = []
    for kind in terns:
        tern = medians(results, kind)
        paced = (f", {tern['paced_ratio']:.0%} with updates paced at {tern['paced_acked']:,.0f}/s"
                 if "paced_ratio" in tern else "")
        lines.append(f"{kind}: {tern['acked']:,.0f} acknowledged updates/s = "
                     f"{tern['acked'] / peers_best:.2f}× the best peer's {peers_best:,.0f} "
                     f"(target ≥ 2×); queries while updating {tern['ratio']:.0%} of idle at full "
                     f"rate{paced} (target ≥ 90%)")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers", default=",".join(KINDS))
    p.add_argument("--size", type=bench.parse_size, default=1000, help="delegations in the zone")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=15, help="seconds of updates alone")
    p.add_argument("--query-duration", type=int, default=10, help="seconds of queries, idle and busy")
    p.add_argument("--stream-names", type=int, default=400_000,
                   help="names per update stream (must outlast --duration at full rate)")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    p.add_argument("--paced-rate", type=int, default=5000,
                   help="updates/s of the paced mixed phase, the same for every server (0: none)")
    p.add_argument("--server-cpu", type=float, default=0,
                   help="hold each server to this fraction of one CPU (cgroup quota), so that "
                        "dnsperf on the other CPU can saturate it (0: no cap)")
    p.add_argument("--tsig", action="store_true", help="sign updates (hmac-sha256)")
    p.add_argument("--signed", action="store_true",
                   help="the servers sign the zone and every update (CSK, ECDSAP256SHA256, NSEC)")
    p.add_argument("--seed", type=int, default=1, help="for the sampled zone checks")
    bench.add_common_args(p)
    args = p.parse_args()
    args.tern = args.tern or peers.default_ternd(REPO)
    return args


def main():
    args = parse_args()
    kinds = [k for k in args.servers.split(",") if k]
    for kind in kinds:
        why = peers.missing_reason(*split_kind(kind, args.tern))
        if why:
            sys.exit(f"{kind}: {why}")
    zone, queries = datasets.prepare_unsigned(args.size, args.work)
    streams = [Stream(args.work, p, args.stream_names) for p in ("u", "v", "w")]
    rng = random.Random(args.seed)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    cap = f", each server held to {args.server_cpu:.0%} of CPU 0" if args.server_cpu else ""
    print(f"{stamp} UTC, ternd {bench.git_head()}, zone {args.size:,} delegations, "
          f"{'TSIG' if args.tsig else 'unsigned'} updates{', zone signed by the server' if args.signed else ''}"
          f"{cap}, load average {os.getloadavg()[0]:.1f}", flush=True)
    results = []
    for n in range(1, args.rounds + 1):
        print(f"round {n}", flush=True)
        for kind in kinds:
            results.append({"kind": kind, "round": n,
                            **session(kind, zone, queries, streams, args, rng)})
    report(args, kinds, results, stamp)
    return 1 if any(medians(results, k)["problems"] for k in kinds) else 0


def report(args, kinds, results, stamp):
    text = markdown(results, kinds)
    summary = targets(results, kinds)
    print("\n" + text + "\n\n" + summary)
    path = os.path.join(args.work, f"updates-results-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"args": vars(args), "commit": bench.git_head(), "machine": bench.machine_notes(),
                   "results": results, "table": text, "summary": summary}, f, indent=1)
    print(f"raw figures: {path}")


if __name__ == "__main__":
    sys.exit(main())
