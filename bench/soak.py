#!/usr/bin/env python3
"""Memory soak: one server under sustained load, its memory sampled as the load runs.

`ternd` (or a peer) serves the NSEC3-signed TLD zone of the peer benchmark, pinned to
CPU 1; dnsperf on CPU 0 sends the benchmark's query mix in back-to-back segments that
cycle through UDP DO=0, UDP DO=1 and pipelined TCP, for `--minutes` in all. After each
segment the script records the server's RSS and PSS (process tree), answered and lost
queries. It prints a markdown table and a verdict: memory is "stable" when the largest
RSS of the second half of the run exceeds the first sample after the warm-up segment by
no more than `--max-growth` percent (allocators keep freed pages; a leak keeps growing).

    bench/run.sh is the peer benchmark; this is run on its own:
    python3 bench/soak.py [--server tern] [--size 100k] [--minutes 5] [--segment 20]
Exit status: 0 stable and no lost queries, 1 otherwise.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402

MODES = ("udp", "do", "tcp")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="tern")
    p.add_argument("--size", default="100k")
    p.add_argument("--minutes", type=float, default=5)
    p.add_argument("--segment", type=float, default=20, help="seconds per dnsperf run")
    p.add_argument("--max-growth", type=float, default=5.0, help="percent")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    bench.add_common_args(p)
    return p.parse_args()


def rss_kb(server):
    total = 0
    for pid in server.pids():
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total


def soak(server, data, args):
    """Runs the segments; returns one row per segment."""
    rows, started, i = [], time.monotonic(), 0
    while time.monotonic() - started < args.minutes * 60:
        mode = MODES[i % len(MODES)]
        answered, qps, lost, _ = bench.dnsperf(server.port, data.queries, args.segment, args,
                                               dnssec=mode == "do", tcp=mode == "tcp")
        rows.append({"t": time.monotonic() - started, "mode": mode, "qps": qps,
                     "answered": answered, "lost": lost, "rss": rss_kb(server),
                     "pss": server.pss_kb()})
        r = rows[-1]
        print(f"  {r['t']:6.0f}s {mode:4} {qps:9.0f} qps lost {lost:.3f}% "
              f"rss {r['rss'] / 1024:7.1f} MiB pss {r['pss'] / 1024:7.1f} MiB", flush=True)
        i += 1
    return rows


def verdict(rows, max_growth):
    """(stable?, growth percent): second half's peak RSS against the post-warm-up sample."""
    base = rows[1]["rss"] if len(rows) > 1 else rows[0]["rss"]
    peak = max(r["rss"] for r in rows[len(rows) // 2:])
    growth = 100.0 * (peak - base) / max(1, base)
    return growth <= max_growth, growth


def main():
    args = parse_args()
    os.sched_setaffinity(0, {bench.CLIENT_CPU})
    data = datasets.prepare(bench.parse_size(args.size), args.work)
    tools = datasets.build_tools(os.path.join(args.work, "tools"))
    tern = args.tern or peers.default_ternd(bench.REPO)
    reason = peers.missing_reason(args.server, tern, tools["udp-floor"])
    if reason:
        sys.exit(f"{args.server}: {reason}")
    work = os.path.join(args.work, "soak", args.server)
    server = peers.start(args.server, [peers.Zone(data.origin, data.signed)],
                         peers.free_port(), work, cpu=bench.SERVER_CPU, tern_bin=tern)
    try:
        server.wait_answering(timeout=900)
        loaded = {"rss": rss_kb(server), "pss": server.pss_kb()}
        print(f"{args.server} serving {data.signed}: rss {loaded['rss'] / 1024:.1f} MiB "
              f"pss {loaded['pss'] / 1024:.1f} MiB after load", flush=True)
        rows = soak(server, data, args)
    finally:
        server.stop()
    stable, growth = verdict(rows, args.max_growth)
    lost = sum(r["lost"] * r["answered"] / 100 for r in rows)
    print("\n| t (s) | mode | qps | lost % | RSS MiB | PSS MiB |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['t']:.0f} | {r['mode']} | {r['qps']:.0f} | {r['lost']:.3f} "
              f"| {r['rss'] / 1024:.1f} | {r['pss'] / 1024:.1f} |")
    print(f"\nafter load {loaded['rss'] / 1024:.1f} MiB RSS; growth from the post-warm-up "
          f"sample to the second half's peak: {growth:+.2f}% "
          f"({'stable' if stable else 'NOT stable'}, limit {args.max_growth}%); "
          f"about {lost:.0f} queries lost in {sum(r['answered'] for r in rows)} answered")
    sys.exit(0 if stable and lost == 0 else 1)


if __name__ == "__main__":
    main()
