#!/usr/bin/env python3
"""Queries while updates run, two ternd builds compared in paired windows (issue 28).

  python3 bench/update_ab.py --builds OLD_TERND,NEW_TERND [--sessions 3] [--pairs 4]
                             [--window 3] [--paced-rate 5000] [--server-cpu 0.5]

`bench/update_rate.py` measures idle queries, then queries with updates, phases 10 s and
more apart: on a shared machine the speed drifts between them by as much as the
updates take, so its ratio moves by ten points from run to run. This script measures a
build's ratio from adjacent windows instead: each session starts one build afresh
(the same zone, configuration and cgroup quota as `update_rate.py --server-cpu`),
then `--pairs` times runs dnsperf on the query mix for `--window` s idle and, right
after, for `--window` s while a second dnsperf -u sends `--paced-rate` updates a second
(one record each, as `update_rate.py`'s streams); builds alternate session by session.

Reported per build: every window pair's ratio (queries with updates / idle), their
median and mean, and the CPU the zone writer's threads took during the busy windows
(`ternd-ctl`, from `/proc/<pid>/task/*/schedstat`), as a share of one CPU: with the
server held to half a CPU, each 0.05 of it is 10% of the server's capacity.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402
import update_rate  # noqa: E402


def writer_cpu_s(pid):
    """CPU seconds of the process's control-plane threads (`ternd-ctl`) so far."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
        except OSError:
            continue  # the thread ended meanwhile
        if name.startswith("ternd-ctl"):
            total += ns
    return total / 1e9


def window_pair(server, queries, stream, args):
    """One idle window, then one with paced updates: (ratio, writer CPU share)."""
    idle = update_rate.query_phase(server, queries, args)["qps"]
    upd_argv = update_rate.dnsperf_argv(server.port, stream.path, args.window + 1, args,
                                        update=True, rate=args.paced_rate)
    thread, _ = update_rate.in_background(upd_argv, args.window + 1)
    time.sleep(0.5)
    before = writer_cpu_s(server.proc.pid)
    busy = update_rate.query_phase(server, queries, args)["qps"]
    share = (writer_cpu_s(server.proc.pid) - before) / args.window
    thread.join(timeout=args.window + 180)
    return busy / idle if idle else 0.0, share


def session(build, zone, queries, stream, args):
    """One build, fresh: `--pairs` window pairs."""
    port = peers.free_port()
    work = os.path.join(args.work, "update-ab-run")
    server = update_rate.start("tern", port, work, zone, False, build)
    cgroup = update_rate.cap_cpu(server, args.server_cpu)
    try:
        return [window_pair(server, queries, stream, args) for _ in range(args.pairs)]
    finally:
        server.stop()
        update_rate.uncap(cgroup)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--builds", required=True, help="two or more ternd binaries, comma-separated")
    p.add_argument("--sessions", type=int, default=3, help="sessions per build")
    p.add_argument("--pairs", type=int, default=4, help="window pairs per session")
    p.add_argument("--window", type=int, default=3, help="seconds per window")
    p.add_argument("--paced-rate", type=int, default=5000)
    p.add_argument("--server-cpu", type=float, default=0.5)
    p.add_argument("--size", type=bench.parse_size, default=1000, help="delegations in the zone")
    bench.add_common_args(p)
    args = p.parse_args()
    # What update_rate's helpers read from their own arguments.
    args.tsig, args.clients, args.outstanding = False, 4, 200
    args.query_duration = args.window
    return args


def main():
    args = parse_args()
    builds = [b for b in args.builds.split(",") if b]
    zone, queries = datasets.prepare_unsigned(args.size, args.work)
    stream = update_rate.Stream(args.work, "w", 400_000)
    print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {len(builds)} builds, "
          f"{args.sessions} sessions x {args.pairs} pairs of {args.window} s windows, "
          f"{args.paced_rate} updates/s, server held to {args.server_cpu:.0%} of a CPU", flush=True)
    pairs = {b: [] for b in builds}
    for n in range(args.sessions):
        for b in builds:
            got = session(b, zone, queries, stream, args)
            pairs[b].extend(got)
            print(f"session {n + 1} {b}: ratios " + " ".join(f"{r:.3f}" for r, _ in got)
                  + f", writer {statistics.median(s for _, s in got):.3f} CPU", flush=True)
    print("\n| build | queries with updates / idle: median | mean | pairs | writer CPU (median) |")
    print("|---|---:|---:|---:|---:|")
    for b in builds:
        ratios = [r for r, _ in pairs[b]]
        shares = [s for _, s in pairs[b]]
        print(f"| `{b}` | {statistics.median(ratios):.3f} | {statistics.mean(ratios):.3f} | "
              f"{len(ratios)} | {statistics.median(shares):.3f} |")


if __name__ == "__main__":
    main()
