#!/usr/bin/env python3
"""Zones added at run time: Tern (`ternctl zone-add`) beside Knot DNS (`knotc conf-set`).

Issue #29 item 4: 100,000 zones added to a running server, through its control
interface, in less time than Knot DNS takes, memory growing linearly, and no query lost
meanwhile. Each server starts serving one zone (`base.example`), pinned to CPU
`bench.SERVER_CPU`, one UDP and one TCP worker; then, in `--steps` equal steps, the
zones are added — small customer zones of 6 records, every one read from the same zone
file of relative names (a parked-domain shape):

* Tern: one `ternctl zone-add --from LIST --file TMPL` a step (it returns once the
  step's zones are loaded);
* Knot DNS: `knotc conf-begin`, `knotc conf-set zone.domain` with the step's names in
  chunks of 5,000, `knotc conf-commit` (the template gives the file; `zonefile-sync: -1`,
  `journal-content: none`); it loads them in the background after the commit.

A step's time runs from the first command until the SOA of every 1,000th zone of the
step and its last one answer authoritatively; the PSS of the server's processes is read
after each step. Then one more zone is added alone (the latency of a single addition to
a server holding them all), and every zone's SOA is asked once (zones that do not
answer: must be 0). Last, `--singles` times one zone is added and removed again, each
timed from the command until it returns and the zone answers (or no longer does):
the median of each is the cost of one change beside all the zones (Tern: `ternctl
zone-add NAME --file TMPL` and `zone-remove NAME`, which return once done; Knot DNS:
`conf-begin`, `conf-set` or `conf-unset`, `conf-commit`). Before each, a `zone-status`
of the first zone is timed the same way: the client's start and round trip alone, the
floor under each single (its median is printed). Meanwhile dnsperf (CPU `bench.CLIENT_CPU`) asks `www.base.example`
at `--rate` queries a second, from the server's start to the end; its lost queries
(no answer within 1 s) are reported.

    python3 bench/zone_add.py [--zones 100000] [--steps 4] [--servers tern,knot]
                              [--rounds 1] [--rate 2000] [--singles 5] [--ternd PATH]
                              [--work DIR]

Prints a markdown table; exit status 1 if a server failed, missed zones or lost queries.
"""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import many  # noqa: E402
import peers  # noqa: E402

ZONE = """@ 3600 SOA ns1 hostmaster 1 7200 3600 1209600 3600
@ 3600 NS ns1
@ 3600 NS ns2
ns1 3600 A 192.0.2.1
ns2 3600 A 192.0.2.2
www 3600 A 192.0.2.10
"""
KNOT_CHUNK = 5000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zones", type=int, default=100_000)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--servers", default="tern,knot")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--rate", type=int, default=2000, help="dnsperf queries a second")
    p.add_argument("--singles", type=int, default=5,
                   help="single zones added and removed again at the end, each timed")
    p.add_argument("--ternd", default=peers.default_ternd(REPO),
                   help="ternd binary, ternctl beside it (default: $TERND or <cargo target>/perf/ternd)")
    p.add_argument("--work", default=os.path.join(HERE, "out", "zone-add"), type=os.path.abspath)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--settle", type=float, default=0.0,
                   help="with --reuse: seconds to wait after the restart before the singles "
                        "(ternd trims and collapses its heap into huge pages on a thread of "
                        "its own then, seconds at 1M zones)")
    p.add_argument("--reuse", action="store_true",
                   help="restart on the zones a previous run left in --work (same --zones) and "
                        "time the singles only: no steps, no sweep")
    return p.parse_args()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def tern_server(work, port, args):
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
storage = "{work}/storage"
added-zone-dirs = ["{work}"]
udp-workers = 1
tcp-workers = 1
[log]
level = "warn"
[control]
socket = "{work}/ternd.sock"
[[zone]]
name = "base.example"
file = "{work}/zone.tmpl"
"""
    write(os.path.join(work, "ternd.toml"), conf)
    return [args.ternd, "-c", os.path.join(work, "ternd.toml")]


def knot_server(work, port, args):
    conf = f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
control:
  listen: {work}/knot.sock
log:
  - target: stderr
    any: warning
database:
  storage: {work}
template:
  - id: default
    storage: {work}
    file: {work}/zone.tmpl
    journal-content: none
    zonefile-sync: -1
    zonefile-load: whole
zone:
  - domain: base.example
"""
    write(os.path.join(work, "knot.conf"), conf)
    return ["knotd", "-c", os.path.join(work, "knot.conf")]


def run(argv, timeout):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}…: {done.stdout}{done.stderr}"[:800])
    return done.stdout


def ternctl_of(ternd):
    """ternctl beside `ternd` (cargo builds both into the same target directory)."""
    return os.path.join(os.path.dirname(ternd), "ternctl")


def add_tern(work, names, args):
    listing = os.path.join(work, "names")
    write(listing, "".join(n + "\n" for n in names))
    run([ternctl_of(args.ternd), "-s", f"{work}/ternd.sock", "-t", str(int(args.timeout)), "zone-add",
         "--from", listing, "--file", f"{work}/zone.tmpl"], args.timeout)


def add_knot(work, names, args):
    knotc = ["knotc", "-s", f"{work}/knot.sock", "-t", str(int(args.timeout))]
    run(knotc + ["conf-begin"], args.timeout)
    for i in range(0, len(names), KNOT_CHUNK):
        run(knotc + ["conf-set", "zone.domain"] + names[i:i + KNOT_CHUNK], args.timeout)
    run(knotc + ["conf-commit"], args.timeout)


def add_one_tern(work, name, args):
    run([ternctl_of(args.ternd), "-s", f"{work}/ternd.sock", "-t", str(int(args.timeout)), "zone-add",
         name, "--file", f"{work}/zone.tmpl"], args.timeout)


def remove_one_tern(work, name, args):
    run([ternctl_of(args.ternd), "-s", f"{work}/ternd.sock", "-t", str(int(args.timeout)),
         "zone-remove", name], args.timeout)


def remove_one_knot(work, name, args):
    knotc = ["knotc", "-s", f"{work}/knot.sock", "-t", str(int(args.timeout))]
    run(knotc + ["conf-begin"], args.timeout)
    run(knotc + ["conf-unset", f"zone[{name}]"], args.timeout)
    run(knotc + ["conf-commit"], args.timeout)


ADD = {"tern": add_tern, "knot": add_knot}
def status_tern(work, args):
    run([ternctl_of(args.ternd), "-s", f"{work}/ternd.sock", "-t", str(int(args.timeout)),
         "zone-status", "base.example"], args.timeout)


def status_knot(work, args):
    run(["knotc", "-s", f"{work}/knot.sock", "-t", str(int(args.timeout)), "zone-status",
         "base.example"], args.timeout)


ADD_ONE = {"tern": add_one_tern, "knot": lambda work, name, args: add_knot(work, [name], args)}
REMOVE_ONE = {"tern": remove_one_tern, "knot": remove_one_knot}
# A command that changes nothing: the client's start and round trip alone, the floor
# under every single's time.
STATUS = {"tern": status_tern, "knot": status_knot}


def wait_soa(port, name, answering, timeout):
    """Waits until `name`'s SOA gets an authoritative answer (`answering`) or no longer
    does, asking every millisecond."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.02)
        while peers._soa_ready(sock, port, name + ".", False) != answering:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: not {'answering' if answering else 'gone'} "
                                   f"{timeout} s after the command")
            time.sleep(0.001)


def singles(kind, work, port, args):
    """Adds and removes one zone `args.singles` times: the seconds of each, in lists."""
    added, removed, floor = [], [], []
    for i in range(args.singles):
        name = f"single{i}.{kind}.example"
        started = time.monotonic()
        STATUS[kind](work, args)
        floor.append(time.monotonic() - started)
        started = time.monotonic()
        ADD_ONE[kind](work, name, args)
        wait_soa(port, name, True, args.timeout)
        added.append(time.monotonic() - started)
        started = time.monotonic()
        REMOVE_ONE[kind](work, name, args)
        wait_soa(port, name, False, args.timeout)
        removed.append(time.monotonic() - started)
    print(f"  {kind}: singles, ms: add " + " ".join(f"{s * 1000:.1f}" for s in added)
          + " / remove " + " ".join(f"{s * 1000:.1f}" for s in removed)
          + f" / a zone-status (the client's floor), median {statistics.median(floor) * 1000:.1f}",
          flush=True)
    return added, removed
SERVER = {"tern": tern_server, "knot": knot_server}


def wait_sample(server, names, timeout):
    """Waits until every 1,000th of `names` and the last answer authoritatively."""
    server.zones = [peers.Zone(n + ".", "") for n in names[::1000] + names[-1:]]
    server.started = time.monotonic()
    server.wait_answering(timeout=timeout)


def dnsperf(port, work, args):
    queries = os.path.join(work, "queries")
    write(queries, "www.base.example A\n")
    argv = bench.pinned(bench.CLIENT_CPU, [
        "dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", queries, "-l", "3600",
        "-Q", str(args.rate), "-t", "1"])
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def lost(perf):
    perf.send_signal(signal.SIGINT)
    out, _ = perf.communicate(timeout=30)
    sent = dropped = None
    for line in out.splitlines():
        if "Queries sent:" in line:
            sent = int(line.split()[2])
        if "Queries lost:" in line:
            dropped = int(line.split()[2])
    return sent, dropped


def session(kind, args, round_no):
    work = os.path.join(args.work, f"{kind}-{round_no}")
    if args.reuse:
        return reused(kind, work, args)
    subprocess.run(["rm", "-rf", work], check=False)
    os.makedirs(work)
    write(os.path.join(work, "zone.tmpl"), ZONE)
    port = peers.free_port()
    argv = SERVER[kind](work, port, args)
    server = peers.Server(kind, [peers.Zone("base.example.", "")], port, work, argv,
                          bench.SERVER_CPU)
    record = {"server": kind, "round": round_no, "steps": []}
    perf = None
    try:
        server.wait_answering(timeout=30)
        perf = dnsperf(port, work, args)
        record["pss0"] = server.pss_kb()
        names = [f"z{i}.{kind}.example" for i in range(args.zones)]
        per = args.zones // args.steps
        for step in range(args.steps):
            batch = names[step * per:(step + 1) * per]
            started = time.monotonic()
            ADD[kind](work, batch, args)
            wait_sample(server, batch, args.timeout)
            record["steps"].append((time.monotonic() - started, server.pss_kb()))
            print(f"  {kind}: step {step + 1}: {len(batch)} zones in "
                  f"{record['steps'][-1][0]:.2f} s, PSS {record['steps'][-1][1] / 1024:.0f} MiB",
                  flush=True)
        started = time.monotonic()
        ADD[kind](work, [f"one.{kind}.example"], args)
        wait_sample(server, [f"one.{kind}.example"], args.timeout)
        record["one_s"] = time.monotonic() - started
        record["missing"] = many.sweep(port, [peers.Zone(n + ".", "") for n in names])
        if args.singles > 0:
            record["add_one"], record["remove_one"] = singles(kind, work, port, args)
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        failed(kind, record, err)
    finally:
        stopped(record, perf, server)
    return record


def failed(kind, record, err):
    """Notes a session's error in its record."""
    record["error"] = str(err)[:800]
    print(f"  {kind}: {record['error']}", flush=True)


def stopped(record, perf, server):
    """Ends a session: dnsperf's counts into its record, the server stopped."""
    if perf is not None:
        record["sent"], record["lost"] = lost(perf)
    server.stop()


def reused(kind, work, args):
    """`--reuse`: the server restarted on the zones a previous run added in `work`; once a
    sample of them answers, the singles only are timed (dnsperf runs meanwhile)."""
    port = peers.free_port()
    argv = SERVER[kind](work, port, args)
    server = peers.Server(kind, [peers.Zone("base.example.", "")], port, work, argv,
                          bench.SERVER_CPU)
    record = {"server": kind, "steps": [], "one_s": float("nan"), "missing": 0}
    perf = None
    try:
        names = [f"z{i}.{kind}.example" for i in range(args.zones)]
        started = time.monotonic()
        wait_sample(server, names, args.timeout)
        print(f"  {kind}: restarted on {args.zones:,} zones in "
              f"{time.monotonic() - started:.1f} s, PSS {server.pss_kb() / 1024:.0f} MiB", flush=True)
        perf = dnsperf(port, work, args)
        record["pss0"] = server.pss_kb()
        time.sleep(args.settle)  # the start's memory housekeeping, if asked
        record["add_one"], record["remove_one"] = singles(kind, work, port, args)
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        failed(kind, record, err)
    finally:
        stopped(record, perf, server)
    return record


def render(records, kinds, args):
    print(f"\n{args.zones:,} zones added in {args.steps} steps; medians over rounds\n")
    print("| server | total s | × Knot DNS | s per step | PSS MiB before → after each step | "
          "MiB per 1k zones | one more zone s | add one ms | remove one ms | queries sent | lost | "
          "zones not answering |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    totals = {}
    for kind in kinds:
        ok = [r for r in records if r["server"] == kind and "error" not in r]
        if ok:
            totals[kind] = statistics.median(sum(s for s, _ in r["steps"]) for r in ok)
    for kind in kinds:
        ok = [r for r in records if r["server"] == kind and "error" not in r]
        if ok and args.reuse:
            print(f"| {kind} | reused | | | | | | {median_ms(ok[0]['add_one'])} | "
                  f"{median_ms(ok[0]['remove_one'])} | {ok[0]['sent']:,} | {ok[0]['lost']} | |")
            continue
        if not ok:
            print(f"| {kind} | failed | | | | | | | | | | |")
            continue
        r = ok[len(ok) // 2]
        steps = " / ".join(f"{s:.2f}" for s, _ in r["steps"])
        pss = " → ".join(f"{p / 1024:.0f}" for p in [r["pss0"]] + [p for _, p in r["steps"]])
        per_k = (r["steps"][-1][1] - r["pss0"]) / 1024 / (args.zones / 1000)
        ratio = totals[kind] / totals["knot"] if "knot" in totals else float("nan")
        add_one = median_ms(r.get("add_one"))
        remove_one = median_ms(r.get("remove_one"))
        print(f"| {kind} | {totals[kind]:.2f} | {ratio:.2f} | {steps} | {pss} | {per_k:.2f} | "
              f"{r['one_s']:.3f} | {add_one} | {remove_one} | {r['sent']:,} | {r['lost']} | "
              f"{r['missing']} |")


def median_ms(times):
    """The median of `times` (seconds) in milliseconds, or empty when not measured."""
    return f"{statistics.median(times) * 1000:.1f}" if times else ""


def main():
    args = parse_args()
    kinds = args.servers.split(",")
    for kind in kinds:
        reason = peers.missing_reason(kind, tern_bin=args.ternd)
        if kind == "tern" and not reason and not os.access(ternctl_of(args.ternd), os.X_OK):
            reason = f"no ternctl beside {args.ternd} (build it: {peers.build_command(args.ternd, 'tern-ctl')})"
        if reason:
            sys.exit(f"{kind}: {reason}")
    records = []
    for round_no in range(args.rounds):
        order = kinds if round_no % 2 == 0 else kinds[::-1]
        for kind in order:
            print(f"round {round_no + 1}: {kind}", flush=True)
            records.append(session(kind, args, round_no))
    render(records, kinds, args)
    bad = [r for r in records if "error" in r or r.get("missing") or r.get("lost")]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
