#!/usr/bin/env python3
"""Fresh TCP connections, A/B: `ternd` builds and peers side by side, interleaved.

Each round serves the 100k TLD zone of the peer benchmark with every server in turn
(CPU 1) and runs `tools/tcp-fresh` against it (CPU 0): a new connection per query. It
prints, per server and round, the rate, the server's CPU per connection and the
client's. On loopback the client's kernel also processes the server side of the
client's packets, so what a server does per connection shows in the client's CPU too,
and the rate is bounded by the client (see docs/benchmarks.md).

    python3 bench/fresh_ab.py --servers tern=OLD_TERND,tern=NEW_TERND,nsd,knot,bind \\
        [--rounds 5] [--duration 6] [--concurrency 8]
A plain `tern` uses --tern (or the default build). Run `bench/run.sh` once first: it
installs the peers and builds the data and tools this script reuses.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="tern,nsd,knot,bind",
                   help="kinds; `tern=PATH` for a particular ternd build")
    p.add_argument("--size", default="100k")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=float, default=6, help="seconds per measurement")
    p.add_argument("--concurrency", type=int, default=8, help="connections in flight")
    bench.add_common_args(p)
    return p.parse_args()


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(spec, data, tools, args):
    """One session: start the server, run tcp-fresh, stop it; returns a result dict."""
    kind, _, path = spec.partition("=")
    port = peers.free_port()
    work = os.path.join(args.work, "fresh-ab", kind)
    server = peers.start(kind, [peers.Zone(data.origin, data.zone)], port, work,
                         cpu=bench.SERVER_CPU, tern_bin=path or tools["ternd"])
    try:
        server.wait_answering()
        server_before, client_before = server.cpu_seconds(), children_cpu()
        argv = [tools["tcp-fresh"], "-p", str(port), "-f", data.queries_tcp,
                "-l", str(args.duration), "-c", str(args.concurrency)]
        out = subprocess.run(bench.pinned(bench.CLIENT_CPU, argv), capture_output=True,
                             text=True, timeout=args.duration + 60).stdout
        server_cpu = server.cpu_seconds() - server_before
        client_cpu = children_cpu() - client_before
    finally:
        server.stop()
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    done = max(1, int(fields["completed"]))
    return {"qps": float(fields["qps"]), "failed": int(fields["failed"]),
            "server_us": 1e6 * server_cpu / done, "client_us": 1e6 * client_cpu / done}


def main():
    args = parse_args()
    data = datasets.prepare(bench.parse_size(args.size), args.work)
    tools = datasets.build_tools(os.path.join(args.work, "tools"))
    tools["ternd"] = args.tern or peers.default_ternd(REPO)
    specs = args.servers.split(",")
    results = {spec: [] for spec in specs}
    for rnd in range(1, args.rounds + 1):
        for spec in specs:
            r = measure(spec, data, tools, args)
            results[spec].append(r)
            print(f"round {rnd} {spec:>32}: {r['qps']:8.0f} qps  server {r['server_us']:6.2f}"
                  f"  client {r['client_us']:6.2f} us/connection  failed {r['failed']}",
                  flush=True)
    print("\n| server | qps (median) | qps per round | server CPU µs/conn | client CPU µs/conn |")
    print("|---|---:|---|---:|---:|")
    for spec, rows in results.items():
        per_round = " / ".join(f"{r['qps'] / 1000:.1f}k" for r in rows)
        print(f"| {spec} | {statistics.median(r['qps'] for r in rows):,.0f} | {per_round} "
              f"| {statistics.median(r['server_us'] for r in rows):.2f} "
              f"| {statistics.median(r['client_us'] for r in rows):.2f} |")


if __name__ == "__main__":
    main()
