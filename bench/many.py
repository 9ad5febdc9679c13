#!/usr/bin/env python3
"""Many small zones: load time and memory of Tern, Knot DNS, NSD and BIND.

The other half of the zone-store targets (issue #3): N small customer zones
(`genzone.py hosting`, 15 records each, cached in `--work`), served by each server in
turn — pinned to CPU 1, one worker, the same configurations as `bench.py` — repeated
`--repeats` times interleaved. For each session it reports:

* load s: process start until every sampled zone (every `--sample`th, and the last one)
  gets an authoritative NOERROR answer to its SOA query;
* PSS: proportional set size summed over the process tree, 0.5 s later, and again
  `--settle` seconds after that (settled: a server may give back what its load freed
  only once the load is done);
* after the timing, a sweep asks every zone's SOA and counts those that do not answer
  authoritatively (must be 0; not part of the load time; counting stops at 100).

    python3 bench/many.py [--zones 100000] [--servers tern,knot,nsd,bind] [--repeats 3]

Prints a markdown table of medians; exit status 1 if a server failed or missed zones.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import peers  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zones", type=int, default=100_000)
    p.add_argument("--servers", default="tern,knot,nsd,bind")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sample", type=int, default=1000, help="probe every Nth zone")
    p.add_argument("--timeout", type=float, default=1200, help="seconds to wait for a load")
    p.add_argument("--settle", type=float, default=10,
                   help="seconds after the first PSS reading for the settled one")
    bench.add_common_args(p)
    return p.parse_args()


def prepare(count, work):
    """The cached hosting zones: a list of peers.Zone."""
    base = os.path.join(work, f"hosting-{count}-s5")
    listing = os.path.join(base, "zones.txt")
    if not os.path.exists(listing):
        print(f"generating {count} zones in {base}", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "genzone.py"), "hosting",
                        "--zones", str(count), "--out", base, "--seed", "5"],
                       check=True, timeout=3600, stdout=subprocess.DEVNULL)
    with open(listing) as f:
        origins = [line.strip() for line in f if line.strip()]
    return [peers.Zone(o, os.path.join(base, f"{o}zone")) for o in origins]


def warm(zones):
    """Reads every zone file once, so that the first server of the first round does not
    pay alone for reading them from disk (the page cache holds them for the others)."""
    for z in zones:
        with open(z.path, "rb") as f:
            f.read()


def sweep(port, zones, give_up=100):
    """How many of `zones` do not answer their SOA query authoritatively (counting
    stops at `give_up`)."""
    missing = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.5)
        for z in zones:
            tries = 3
            while tries and not peers._soa_ready(sock, port, z.origin, False):
                tries -= 1
            missing += tries == 0
            if missing >= give_up:
                break
    return missing


def session(kind, zones, args, tern):
    """Starts `kind` with every zone; returns a record dict."""
    work = os.path.join(args.work, "run-many", kind)
    subprocess.run(["rm", "-rf", work], check=False)
    sample = zones[::args.sample] + zones[-1:]
    server = peers.start(kind, zones, peers.free_port(), work, cpu=bench.SERVER_CPU,
                         tern_bin=tern)
    server.zones = sample  # wait_answering probes these
    try:
        load_s = server.wait_answering(timeout=args.timeout)
        time.sleep(0.5)
        pss_kb = server.pss_kb()
        time.sleep(args.settle)
        record = {"server": kind, "load_s": load_s, "pss_kb": pss_kb,
                  "settled_kb": server.pss_kb(), "missing": sweep(server.port, zones)}
    except RuntimeError as err:
        record = {"server": kind, "error": str(err)[:500]}
    finally:
        server.stop()
    return record


def render(records, kinds, count):
    rows = [f"#### {count:,} small zones: load time and memory", "",
            "| server | load s (median) | load × Knot | PSS MiB (median) | PSS × Knot "
            "| PSS MiB settled | settled × Knot | zones not answering |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    med = {}
    for kind in kinds:
        ok = [r for r in records if r["server"] == kind and "error" not in r]
        if ok:
            med[kind] = (statistics.median(r["load_s"] for r in ok),
                         statistics.median(r["pss_kb"] for r in ok) / 1024,
                         statistics.median(r["settled_kb"] for r in ok) / 1024,
                         max(r["missing"] for r in ok))
    knot = med.get("knot")
    for kind, (load, pss, settled, missing) in med.items():
        load_ratio = f"{load / knot[0]:.2f}" if knot else "—"
        pss_ratio = f"{pss / knot[1]:.2f}" if knot else "—"
        settled_ratio = f"{settled / knot[2]:.2f}" if knot else "—"
        rows.append(f"| {kind} | {load:.2f} | {load_ratio} | {pss:,.1f} | {pss_ratio} "
                    f"| {settled:,.1f} | {settled_ratio} | {missing} |")
    return "\n".join(rows)


def main():
    args = parse_args()
    os.sched_setaffinity(0, {bench.CLIENT_CPU})
    zones = prepare(args.zones, args.work)
    warm(zones)
    tern = args.tern or peers.default_ternd(bench.REPO)
    kinds = []
    for kind in [k.strip() for k in args.servers.split(",") if k.strip()]:
        reason = peers.missing_reason(kind, tern, None)
        print(f"{kind}: SKIPPED — {reason}" if reason else "", end="\n" if reason else "")
        if not reason:
            kinds.append(kind)
    records = []
    for repeat in range(args.repeats):
        print(f"== {len(zones)} zones, round {repeat + 1}/{args.repeats}", flush=True)
        for kind in kinds:
            records.append(session(kind, zones, args, tern))
            r = records[-1]
            print(f"  {kind:5} " + (f"FAILED: {r['error']}" if "error" in r else
                  f"load {r['load_s']:.2f}s pss {r['pss_kb'] / 1024:.1f} MiB "
                  f"settled {r['settled_kb'] / 1024:.1f} MiB missing {r['missing']}"), flush=True)
    print()
    print(render(records, kinds, len(zones)))
    bad = any("error" in r or r.get("missing") for r in records)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
