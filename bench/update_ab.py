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
median and mean, the updates acknowledged a second meanwhile (a server that takes
fewer has less to do), and the CPU the zone writer's threads took during the busy
windows (`ternd-ctl`, from `/proc/<pid>/task/*/schedstat`), as a share of one CPU: with
the server held to half a CPU, each 0.05 of it is 10% of the server's capacity. And the
medians, idle and with updates, of the client CPU's busy share (`/proc/stat`: a share
near 1 means the load, not the server, may have set the figure) and of the time the
server's cgroup was held back by its quota (near 1 - `--server-cpu`: the server wanted
more than its share, so it was the one saturated).

`--client qload` sends both loads with `tools/qload` instead of dnsperf (queries from a
dnsperf query file, updates from the same dnsperf -u stream): on loopback about 5.5 µs
of CPU a query against dnsperf's 9.5, so the client keeps headroom against a server held
to more of a CPU (`--server-cpu 0.75`; against a whole one it does not). A build named
`knot` or `bind` runs that peer instead of a `ternd` (the same zone and configuration as
`update_rate.py`; no writer CPU).

`--alternate PERIOD` (with `--client qload`) measures within one run of each session
instead of in window pairs: the update stream sends only in the first half of every
PERIOD seconds of the monotonic clock, the query client counts its answers per 50 ms
of that clock, and a session's ratio is the mean rate of the buckets in updating halves
over that of the buckets in quiet halves (each half's first `SETTLE` s left out: the
writer's last batch, and the stream's restart). Halves a second apart share the
machine's speed, which drifts by more than the updates take between windows seconds
apart (single window pairs range over ±15%). Each session runs the query load for
`--pairs` × 2 × `--window` s; the writer's CPU is per updating second. `--control` adds,
for the first build, sessions where the second client sends queries instead of updates,
at the same pace: what any second load of that many messages a second costs the first
client on this machine (on loopback the server also pays for delivering its answers
into the second client's socket and waking it), so that the updates' own cost is the
difference.
"""

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402
import update_rate  # noqa: E402
import xdp_bench  # noqa: E402

PEERS = ("knot", "bind")  # builds run as that peer rather than as a ternd binary


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


def qload(args, port, seconds, data, update=False, rate=None, options=()):
    """Runs `tools/qload` on the client CPU (`options`: more of its flags); its figures
    (`qps`, `answered`, ..., see `parse_qload`)."""
    argv = on_client_cpu([args.qload, *options])
    argv += ["-u"] if update else []
    argv += ["-Q", str(rate)] if rate else []
    argv += [str(port), str(seconds), data, str(args.outstanding)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True,
                         timeout=seconds + 60).stdout
    return parse_qload(out)


def query_qps(server, queries, args):
    """Queries a second answered in one window, by `--client`."""
    if args.client == "qload":
        return qload(args, server.port, args.window, queries)["qps"]
    return update_rate.query_phase(server, queries, args)["qps"]


def updates_in_background(server, stream, args):
    """The paced update stream for one busy window (and a second more), on a thread;
    returns it and a function giving the updates acknowledged (NOERROR) a second once
    it has been joined."""
    seconds = args.window + 1
    if args.client == "qload":
        result = {}
        thread = threading.Thread(target=lambda: result.update(
            qload(args, server.port, seconds, stream.path, update=True, rate=args.paced_rate)))
        thread.start()
        return thread, lambda: result.get("noerror", 0) / result.get("seconds", seconds)
    argv = update_rate.dnsperf_argv(server.port, stream.path, seconds, args, update=True,
                                    rate=args.paced_rate)
    thread, result = update_rate.in_background(argv, seconds)
    return thread, lambda: (result.get("rcodes", {}).get("NOERROR", 0)
                            / (result.get("run_s") or seconds))


class Window:
    """The client CPU's busy share (`/proc/stat`) and the server cgroup's throttled
    share of one window, from `start()` to `stop()`."""

    def __init__(self, cgroup):
        self.cgroup = cgroup

    def start(self):
        self.cpu_at_start = xdp_bench.cpu_busy(update_rate.CLIENT_CPU)
        self.throttled_at_start = update_rate.throttled_s(self.cgroup) if self.cgroup else 0.0
        self.at = time.monotonic()

    def stop(self):
        busy, total = xdp_bench.cpu_busy(update_rate.CLIENT_CPU)
        start_busy, start_total = self.cpu_at_start
        self.client = (busy - start_busy) / max(1, total - start_total)
        self.throttled = 0.0
        if self.cgroup:
            took = time.monotonic() - self.at
            held = update_rate.throttled_s(self.cgroup) - self.throttled_at_start
            self.throttled = held / took
        return self


def window_pair(server, queries, stream, args, cgroup):
    """One idle window, then one with paced updates: (ratio, writer CPU share, the idle
    window, the busy one, updates acknowledged a second)."""
    idle_window, busy_window = Window(cgroup), Window(cgroup)
    idle_window.start()
    idle = query_qps(server, queries, args)
    idle_window.stop()
    thread, acknowledged = updates_in_background(server, stream, args)
    time.sleep(0.5)
    before = writer_cpu_s(server.proc.pid)
    busy_window.start()
    busy = query_qps(server, queries, args)
    busy_window.stop()
    share = (writer_cpu_s(server.proc.pid) - before) / args.window
    thread.join(timeout=args.window + 180)
    return busy / idle if idle else 0.0, share, idle_window, busy_window, acknowledged()


SETTLE = 0.2  # seconds of each half left out with --alternate
BUCKET_MS = 50


def alternating(server, queries, stream, args, control=False):
    """One `--alternate` run, as `window_pair` gives one pair: (ratio, writer CPU per
    updating second, None, None, updates acknowledged per updating second, their mean
    latency in ms). With `control`, the second client sends queries instead of updates,
    at the same pace."""
    seconds = args.pairs * 2 * args.window
    period = args.alternate
    result = {}
    thread = threading.Thread(target=lambda: result.update(qload(
        args, server.port, seconds + 2, queries if control else stream.path,
        update=not control, rate=args.paced_rate, options=["-O", str(period)])))
    thread.start()
    time.sleep(1)  # the update client reads its file
    before = writer_cpu_s(server.proc.pid)
    got = qload(args, server.port, seconds, queries, options=["-B", str(BUCKET_MS)])
    writer = writer_cpu_s(server.proc.pid) - before
    thread.join(timeout=seconds + 120)
    busy, quiet = split_halves(got, period)
    ratio = statistics.mean(busy) / statistics.mean(quiet) if busy and quiet else 0.0
    acknowledged = 0 if control else result.get("noerror", 0) / ((seconds + 2) / 2)
    share = max(0.0, writer) / (seconds / 2)  # a pool thread that ended took its CPU along
    if "latency_us" not in result:  # the paced client failed: its thread said why
        raise RuntimeError("the second qload client gave no figures")
    return ratio, share, None, None, acknowledged, result["latency_us"] / 1000


def on_client_cpu(argv):
    return ["taskset", "-c", str(update_rate.CLIENT_CPU)] + argv


def parse_qload(out):
    """qload's `key=value` fields, numbers but the bucket counts (a list)."""
    fields = dict(field.split("=", 1) for field in out.split())
    counts = fields.pop("counts", "")
    parsed = {k: float(v) for k, v in fields.items()}
    parsed["counts"] = [int(c) for c in counts.split(",") if c]
    return parsed


def split_halves(got, period):
    """The answer counts of the whole buckets in updating halves (after SETTLE) and in
    quiet ones (after SETTLE), leaving out the run's first and last second."""
    busy, quiet = [], []
    counts = got["counts"][int(1000 / BUCKET_MS):-int(1000 / BUCKET_MS) or None]
    first = int(got["first"]) + int(1000 / BUCKET_MS)
    for i, count in enumerate(counts):
        start = (first + i) * BUCKET_MS / 1000
        phase = start % period
        end = phase + BUCKET_MS / 1000
        if SETTLE <= phase and end <= period / 2 + 1e-9:
            busy.append(count)
        elif period / 2 + SETTLE <= phase and end <= period + 1e-9:
            quiet.append(count)
    return busy, quiet


def session(build, zone, queries, stream, args, control=False):
    """One build (or peer), fresh: `--pairs` window pairs, or one `--alternate` run
    (`control`: see `alternating`)."""
    port = peers.free_port()
    work = os.path.join(args.work, "update-ab-run")
    kind = build if build in PEERS else "tern"
    server = update_rate.start(kind, port, work, zone, False, build)
    cgroup = update_rate.cap_cpu(server, args.server_cpu) if args.server_cpu else None
    try:
        if args.alternate:
            return [alternating(server, queries, stream, args, control)]
        return [window_pair(server, queries, stream, args, cgroup) for _ in range(args.pairs)]
    finally:
        server.stop()
        if cgroup:
            update_rate.uncap(cgroup)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--builds", required=True, help="two or more ternd binaries, comma-separated")
    p.add_argument("--sessions", type=int, default=3, help="sessions per build")
    p.add_argument("--pairs", type=int, default=4, help="window pairs per session")
    p.add_argument("--window", type=int, default=3, help="seconds per window")
    p.add_argument("--paced-rate", type=int, default=5000)
    p.add_argument("--server-cpu", type=float, default=0.5, help="0: no cap")
    p.add_argument("--client", choices=("dnsperf", "qload"), default="dnsperf")
    p.add_argument("--outstanding", type=int, default=200,
                   help="queries (and updates) each client keeps in flight")
    p.add_argument("--size", type=bench.parse_size, default=1000, help="delegations in the zone")
    p.add_argument("--alternate", type=float, default=0,
                   help="seconds of an updating-then-quiet cycle in one run per session "
                   "(needs --client qload; 0: window pairs)")
    p.add_argument("--control", action="store_true",
                   help="with --alternate, also run the first build with a second client "
                   "sending queries at the update rate instead of updates")
    bench.add_common_args(p)
    args = p.parse_args()
    # What update_rate's helpers read from their own arguments.
    args.tsig, args.clients = False, 4
    args.query_duration = args.window
    if args.alternate and args.client != "qload":
        p.error("--alternate needs --client qload")
    if args.control and not args.alternate:
        p.error("--control needs --alternate")
    return args


def main():
    args = parse_args()
    builds = [b for b in args.builds.split(",") if b]
    zone, queries = datasets.prepare_unsigned(args.size, args.work)
    args.qload = datasets.build_tools(os.path.join(args.work, "tools"))["qload"]
    stream = update_rate.Stream(args.work, "w", 400_000)
    design = (f"one {args.pairs * 2 * args.window} s run alternating {args.alternate:g} s "
              "cycles" if args.alternate else f"{args.pairs} pairs of {args.window} s windows")
    print(f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {len(builds)} builds, "
          f"{args.sessions} sessions x {design}, {args.paced_rate} updates/s, server held "
          f"to {args.server_cpu or 1:.0%} of a CPU, load by {args.client}", flush=True)
    runs = [(b, b, False) for b in builds]
    if args.control:
        runs.insert(1, (f"{builds[0]} + {args.paced_rate} queries/s", builds[0], True))
    pairs = {label: [] for label, _, _ in runs}
    for n in range(args.sessions):
        for b, build, control in runs:
            got = session(build, zone, queries, stream, args, control)
            pairs[b].extend(got)
            print(f"session {n + 1} {b}: ratios " + " ".join(f"{g[0]:.3f}" for g in got)
                  + f", writer {statistics.median(g[1] for g in got):.3f} CPU", flush=True)
    if args.alternate:
        alternating_table(pairs)
    else:
        pairs_table(pairs)


def alternating_table(runs):
    print("\n| build | queries while updating / quiet: median | mean | sessions "
          "| writer CPU an updating second (median) | updates/s acknowledged (median) "
          "| latency, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for b, got in runs.items():
        ratios = [g[0] for g in got]
        print(f"| `{b}` | {statistics.median(ratios):.3f} | {statistics.mean(ratios):.3f} | "
              f"{len(ratios)} | {statistics.median(g[1] for g in got):.3f} | "
              f"{statistics.median(g[4] for g in got):,.0f} | "
              f"{statistics.median(g[5] for g in got):.1f} |")


def pairs_table(pairs):
    print("\n| build | queries with updates / idle: median | mean | pairs | writer CPU (median) "
          "| updates/s acknowledged (median) | client CPU busy, idle / with updates "
          "| server throttled, idle / with updates |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for b in pairs:
        ratios, shares = [g[0] for g in pairs[b]], [g[1] for g in pairs[b]]
        client = [statistics.median(g[i].client for g in pairs[b]) for i in (2, 3)]
        held = [statistics.median(g[i].throttled for g in pairs[b]) for i in (2, 3)]
        print(f"| `{b}` | {statistics.median(ratios):.3f} | {statistics.mean(ratios):.3f} | "
              f"{len(ratios)} | {statistics.median(shares):.3f} | "
              f"{statistics.median(g[4] for g in pairs[b]):,.0f} | "
              f"{client[0]:.2f} / {client[1]:.2f} | {held[0]:.2f} / {held[1]:.2f} |")


if __name__ == "__main__":
    main()
