#!/usr/bin/env python3
"""Zone load, A/B: `ternd` builds (and peers) loading the same zone in turn, interleaved.

Each round starts every server on the peer benchmark's zone (CPU 1), measures the time
from process start until the zone's SOA gets an authoritative answer (the harness's
start-to-answer probe), then the proportional set size 0.5 s later, and stops it. The
servers take turns round by round, so a change in the machine's speed reaches them all.

    python3 bench/load_ab.py --servers tern=OLD_TERND,tern=NEW_TERND[,knot] \\
        [--size 1m] [--signed] [--rounds 4]
A plain `tern` uses --tern (or the default build). Run `bench/run.sh` once first: it
installs the peers and builds (and signs) the zones this script reuses.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="tern,knot",
                   help="kinds; `tern=PATH` for a particular ternd build")
    p.add_argument("--size", default="1m")
    p.add_argument("--signed", action="store_true", help="the NSEC3-signed copy")
    p.add_argument("--rounds", type=int, default=4)
    bench.add_common_args(p)
    return p.parse_args()


def measure(spec, zone, data, args):
    """One load: (seconds until the zone answers, PSS in MiB half a second later)."""
    kind, _, path = spec.partition("=")
    work = os.path.join(args.work, "load-ab", kind)
    server = peers.start(kind, [peers.Zone(data.origin, zone)], peers.free_port(), work,
                         cpu=bench.SERVER_CPU,
                         tern_bin=path or args.tern or peers.default_ternd(REPO))
    try:
        seconds = server.wait_answering(timeout=900)
        time.sleep(0.5)
        return seconds, server.pss_kb() / 1024
    finally:
        server.stop()


def main():
    args = parse_args()
    data = datasets.prepare(bench.parse_size(args.size), args.work)
    zone = data.signed if args.signed else data.zone
    specs = args.servers.split(",")
    results = {spec: [] for spec in specs}
    for rnd in range(1, args.rounds + 1):
        for spec in specs:
            seconds, pss = measure(spec, zone, data, args)
            results[spec].append((seconds, pss))
            print(f"round {rnd} {spec:>32}: {seconds:6.2f} s  PSS {pss:7.1f} MiB", flush=True)
    print("\n| server | load s (median) | per round | PSS MiB (median) |")
    print("|---|---:|---|---:|")
    for spec, rows in results.items():
        per_round = " / ".join(f"{s:.2f}" for s, _ in rows)
        print(f"| {spec} | {statistics.median(s for s, _ in rows):.2f} | {per_round} "
              f"| {statistics.median(p for _, p in rows):.1f} |")


if __name__ == "__main__":
    main()
