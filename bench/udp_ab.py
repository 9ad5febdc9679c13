#!/usr/bin/env python3
"""UDP A/B: `ternd` builds (and peers) side by side, interleaved, with dnsperf.

The peer benchmark's UDP measurement in miniature, for telling whether a change moved
the server's CPU per query: each round serves the 100k TLD zone (or its signed copy,
with `--do`) with every server in turn (CPU 1) and runs dnsperf against it (CPU 0). It
prints each round's figures, the medians, and each later server's CPU per query over
the first one's, round by round (a ratio within a round is steadier than either figure
on this shared machine).

    python3 bench/udp_ab.py --servers tern=OLD_TERND,tern=NEW_TERND \\
        [--rounds 6] [--duration 8] [--do]
A plain `tern` uses --tern (or the default build); `floor` is the do-nothing responder.
Run `bench/run.sh` once first: it installs the peers and builds the data and the floor
this script reuses. With `--rate`, every server is offered the same load.
"""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="tern,knot,nsd",
                   help="kinds; `tern=PATH` for a particular ternd build")
    p.add_argument("--size", default="100k")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--duration", type=float, default=8, help="seconds per measurement")
    p.add_argument("--do", action="store_true", help="DO=1 queries on the signed zone")
    p.add_argument("--rate", type=int, default=None,
                   help="offer at most this many queries per second (dnsperf -Q): every "
                        "server then answers the same load")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    bench.add_common_args(p)
    return p.parse_args()


def measure(spec, data, args, default_tern):
    """One session: start the server, run dnsperf, stop it; returns a result dict."""
    kind, _, path = spec.partition("=")
    port = peers.free_port()
    work = os.path.join(args.work, "udp-ab", kind)
    zone = data.signed if args.do else data.zone
    floor = os.path.join(args.work, "tools", "udp-floor")  # built by bench/run.sh
    server = peers.start(kind, [peers.Zone(data.origin, zone)], port, work,
                         cpu=bench.SERVER_CPU, tern_bin=path or default_tern, floor_bin=floor)
    try:
        server.wait_answering(floor=kind == "floor")
        before = server.usage()
        answered, qps, lost, _ = bench.dnsperf(port, data.queries, args.duration, args,
                                               dnssec=args.do, rate=args.rate)
        usage = bench.per_query_usage(before, server.usage(), answered)
    finally:
        server.stop()
    nan = float("nan")  # nothing answered: no figure, and no division by zero later
    return {"qps": qps, "lost": lost, "us": usage["cpu_us"] or nan,
            "user_us": usage["user_us"] or nan, "per_switch": usage["per_switch"] or nan}


def report(specs, results):
    """The medians, then each server's CPU per query over the first one's, per round."""
    print("\n| server | qps (median) | CPU µs/query (median) | × first, round by round "
          "| × first (median) |")
    print("|---|---:|---:|---|---:|")
    first = results[specs[0]]
    for spec in specs:
        rows = results[spec]
        ratios = [r["us"] / f["us"] for r, f in zip(rows, first)]
        print(f"| {spec} | {statistics.median(r['qps'] for r in rows):,.0f} "
              f"| {statistics.median(r['us'] for r in rows):.2f} "
              f"| {', '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.3f} |")


def main():
    args = parse_args()
    data = datasets.prepare(bench.parse_size(args.size), args.work)
    default_tern = args.tern or peers.default_ternd(REPO)
    specs = args.servers.split(",")
    results = {spec: [] for spec in specs}
    for rnd in range(1, args.rounds + 1):
        # The order turns each round, so no server always follows the same one.
        turn = (rnd - 1) % len(specs)
        for spec in specs[turn:] + specs[:turn]:
            r = measure(spec, data, args, default_tern)
            results[spec].append(r)
            print(f"round {rnd} {spec:>40}: {r['qps']:8.0f} qps  {r['us']:5.2f} us/query "
                  f"({r['user_us']:.2f} user)  {r['per_switch']:5.1f} q/switch  "
                  f"lost {r['lost']:.2f}%", flush=True)
    report(specs, results)


if __name__ == "__main__":
    main()
