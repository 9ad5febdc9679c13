#!/usr/bin/env python3
"""Rate limiting and cookies: what they cost when not triggered, and under a flood.

Every variant's server is started at once (each on CPU `--server-cpu`, 0 by default,
load on the other one), then measured in turn, a few seconds each, round after round in
a rotating order: on this shared machine, whose speed moves from minute to minute, the
variants then see the same conditions, and the ratio within a round is steadier than
any figure.

`quiet`: ternd variants under dnsperf on the peer benchmark's 100k zone and mix:
  base       an older build (`--base`), as configured before rate limiting existed
  off        this build, `[rrl]` off and `[cookies] enabled = false`
  on         this build, rate limiting on at rates the load never reaches, cookies on
  on+edns    `on`, dnsperf sending EDNS (no cookie)
  off+edns   `off`, dnsperf sending EDNS: what `on+edns` is compared with
  on+cookie  `on`, dnsperf sending a client cookie: every answer gets a server cookie
It prints CPU µs per answered query and each variant's ratio to `off`, round by round.

`instructions`: the `quiet` variants one after another under callgrind, dnsperf at
2,000 queries a second (`--qps`) for 15 s: the instructions of the UDP worker's loop
(`Worker::serve`: receiving, answering, rate limiting, sending; system calls' kernel
side not counted) per answered query, counted from when the server answers (the
counters are zeroed then: start-up and the harness's polls are left out).
Deterministic where CPU time on this machine is not.

`paired`: each `on…` variant beside the `off` it is compared with (`on` with `off`,
`on+edns` with `off+edns`, `on+cookie` with `off`), both servers on one CPU and loaded
at the same time, each by its own dnsperf at the same rate (`--qps`, 20,000 a second
by default; 0: as fast as answers come, the two servers then share the CPU). Server
CPU per answer is read from the scheduler's nanosecond accounting
(/proc/PID/task/TID/schedstat), not from 10 ms ticks. A pair sees the same moment of the
machine, so the ratio of a round is far steadier than when variants take turns (`quiet`):
the noise left is the two servers' own. Which dnsperf starts first alternates by round.
`on@base` is `on` run by the `--base` build, beside this build's `on`: two builds' rate
limiting compared.

`flood`: a reflection flood as the server sees it — one source (127.0.0.1) sending the
apex NS question (the zone's largest positive answer) at a fixed rate, never waiting
(`tools/udp-flood`) — at Tern and Knot DNS with RRL (20 answers a second, slip 2) and
without. It prints server CPU µs per query sent, and per query read (the queries sent
less those the kernel dropped at the server's full receive buffers, from
/proc/net/udp), and what came back.

    python3 bench/rrl_ab.py quiet --base OLD_TERND [--rounds 12] [--duration 3] [--qps N]
    python3 bench/rrl_ab.py instructions --base OLD_TERND
    python3 bench/rrl_ab.py paired [--variants on,on+edns] [--rounds 12] [--qps 20000]
    python3 bench/rrl_ab.py flood [--rate 100000] [--rounds 12] [--duration 3]
Run `bench/run.sh` once first (peers, data). Results: docs/benchmarks.md.
"""

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402

QUIET = ("base", "off", "on", "on+edns", "on+cookie")
FLOOD = ("tern-rrl", "knot-rrl", "tern", "knot")
CLIENT_COOKIE = "2464c4abcf10c957"
FLOOD_RATE_LIMIT = 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("quiet", "instructions", "flood", "paired"))
    p.add_argument("--base", default=None, help="the older ternd for `base` (quiet)")
    p.add_argument("--variants", default=None, help="comma-separated subset to run")
    p.add_argument("--size", default="100k")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--duration", type=float, default=3, help="seconds per measurement")
    p.add_argument("--qps", type=int, default=None,
                   help="quiet: offer at most this many queries a second (dnsperf -Q)")
    p.add_argument("--rate", type=int, default=100_000, help="flood: queries a second")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    p.add_argument("--rrl-extra", action="append", default=[],
                   help="a line added to the `on` variants' [rrl] section "
                        "(e.g. 'table-size = 8192'; repeatable)")
    p.add_argument("--server-cpu", type=int, choices=(0, 1), default=0,
                   help="the CPU servers are pinned to; load runs on the other")
    bench.add_common_args(p)
    return p.parse_args()


def tern_argv(tern_bin, work, port, data, extra):
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/storage"
[log]
level = "warn"
{extra}
[[zone]]
name = "{data.origin}"
file = "{data.zone}"
"""
    path = os.path.join(work, "ternd.toml")
    with open(path, "w") as f:
        f.write(conf)
    return [tern_bin, "--config", path]


def knot_argv(work, port, data, rrl):
    argv = peers.command("knot", [peers.Zone(data.origin, data.zone)], port, work)
    if rrl:
        path = argv[-1]
        with open(path) as f:
            conf = f.read()
        module = f"mod-rrl:\n  - id: flood\n    rate-limit: {FLOOD_RATE_LIMIT}\n    slip: 2\n"
        conf = conf.replace("template:\n  - id: default\n",
                            module + "template:\n  - id: default\n    global-module: mod-rrl/flood\n")
        with open(path, "w") as f:
            f.write(conf)
    return argv


def server_argv(variant, work, port, data, args):
    """The server kind and argv for `variant` (its configuration written), and extra
    dnsperf options."""
    this = args.tern or peers.default_ternd(REPO)
    # Every class far above what one client sends; `--rrl-extra` adds settings.
    limits = "[rrl]\nrate = 1000000\n" + "".join(f"{line}\n" for line in args.rrl_extra)
    flood_limits = f"[rrl]\nrate = {FLOOD_RATE_LIMIT}\nslip = 2\n"
    tern = lambda binary, extra: ("tern", tern_argv(binary, work, port, data, extra))  # noqa: E731
    builders = {
        "base": lambda: tern(args.base or this, ""),
        "off": lambda: tern(this, "[cookies]\nenabled = false\n"),
        "on": lambda: tern(this, limits),
        "on+edns": lambda: tern(this, limits),
        "off+edns": lambda: tern(this, "[cookies]\nenabled = false\n"),
        "on+cookie": lambda: tern(this, limits),
        "on@base": lambda: tern(args.base or this, limits),
        "tern-rrl": lambda: tern(this, flood_limits),
        "tern": lambda: tern(this, ""),
        "knot-rrl": lambda: ("knot", knot_argv(work, port, data, True)),
        "knot": lambda: ("knot", knot_argv(work, port, data, False)),
    }
    dnsperf_options = {"on+edns": ("-e",), "off+edns": ("-e",),
                       "on+cookie": ("-E", f"10:{CLIENT_COOKIE}")}
    kind, argv = builders[variant]()
    return kind, argv, dnsperf_options.get(variant, ())


def start(variant, data, args, wrap=()):
    """Starts `variant`'s server (its argv after `wrap`); returns it and the dnsperf
    options the variant asks with."""
    port = peers.free_port()
    work = os.path.join(args.work, "rrl-ab", variant.replace("+", "-"))
    os.makedirs(work, exist_ok=True)
    kind, argv, extra = server_argv(variant, work, port, data, args)
    zone = peers.Zone(data.origin, data.zone)
    server = peers.Server(kind, [zone], port, work, list(wrap) + argv, bench.SERVER_CPU)
    server.wait_answering(timeout=600)
    return server, extra


def instructions(variant, data, args):
    """Instructions of the UDP worker's loop per answered query, under callgrind."""
    out = os.path.join(args.work, "rrl-ab", f"callgrind.{variant.replace('+', '-')}")
    wrap = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            "--toggle-collect=*udp::Worker*::serve*"]
    server, extra = start(variant, data, args, wrap)
    try:
        # What the server did while starting (loading, the harness's SOA polls, as
        # many as the load took) is not counted.
        subprocess.run(["callgrind_control", "--zero", str(server.proc.pid)], check=True,
                       capture_output=True, timeout=120)
        answered, _, _, _ = bench.dnsperf(server.port, data.queries, 15, args,
                                           rate=args.qps or 2000, extra=extra)
    finally:
        server.stop()
    with open(out) as f:
        totals = [line for line in f if line.startswith(("totals:", "summary:"))]
    total = int(totals[-1].split()[1])
    return {"per_query": total / answered, "answered": answered}


def quiet(server, extra, data, args):
    before = server.usage()
    answered, qps, lost, _ = bench.dnsperf(server.port, data.queries, args.duration, args,
                                           rate=args.qps, extra=extra)
    after = server.usage()
    cpu = (after[0] - before[0]) + (after[1] - before[1])
    us = 1e6 * cpu / answered if answered else float("nan")
    return {"qps": qps, "lost": lost, "us": us, "cpu": cpu, "count": answered}


def dnsperf_start(port, data, args, extra):
    """A dnsperf at `--qps` (0: as fast as answers come) on the load CPU, not waited for."""
    argv = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", data.queries,
            "-l", str(args.duration), "-c", str(args.clients), "-q", str(args.outstanding)]
    argv += ["-Q", str(args.qps)] if args.qps else []
    argv += list(extra)
    return subprocess.Popen(bench.pinned(bench.CLIENT_CPU, argv), stdout=subprocess.PIPE,
                            text=True)


def dnsperf_answered(proc, args):
    out, _ = proc.communicate(timeout=args.duration + 60)
    for line in out.splitlines():
        if line.strip().startswith("Queries completed:"):
            return int(line.split()[2])
    raise RuntimeError(f"unexpected dnsperf output:\n{out}")


def paired_round(pair, servers, data, args, rnd):
    """One round of a pair: both loaded at once; CPU µs per answer of each."""
    order = pair if rnd % 2 else pair[::-1]
    before = {v: servers[v][0].schedstat_seconds() for v in order}
    procs = {v: dnsperf_start(servers[v][0].port, data, args, servers[v][1]) for v in order}
    answered = {v: dnsperf_answered(procs[v], args) for v in order}
    after = {v: servers[v][0].schedstat_seconds() for v in order}
    return {v: {"cpu": after[v] - before[v], "count": answered[v],
                "us": 1e6 * (after[v] - before[v]) / max(1, answered[v])} for v in pair}


def paired(variants, data, args):
    """`paired` mode: every `on…` variant beside its `off`, round after round."""
    if args.qps is None:
        args.qps = 20_000
    base_of = {"on": "off", "on+edns": "off+edns", "on+cookie": "off", "on@base": "on"}
    pairs = [(base_of[v], v) for v in variants if v in base_of]
    needed = sorted({v for pair in pairs for v in pair})
    servers = {}
    try:
        for v in needed:
            servers[v] = start(v, data, args)
        for pair in pairs:
            rounds = []
            for rnd in range(1, args.rounds + 1):
                for server, _ in servers.values():
                    server.keep_on_cpu()
                r = paired_round(pair, servers, data, args, rnd)
                rounds.append(r)
                print(f"round {rnd} {pair[1]:>9} / {pair[0]}: "
                      + " ".join(f"{v}={r[v]['us']:.3f}µs ({r[v]['count']})" for v in pair)
                      + f" ratio={r[pair[1]]['us'] / r[pair[0]]['us']:.3f}", flush=True)
            report_pair(pair, rounds)
    finally:
        for server, _ in servers.values():
            server.stop()


def report_pair(pair, rounds):
    """A pair's rounds: CPU per answer (median, pooled) and the ratio's median, pooled
    figure and spread."""
    base, variant = pair
    ratios = sorted(r[variant]["us"] / r[base]["us"] for r in rounds)
    pooled = {v: 1e6 * sum(r[v]["cpu"] for r in rounds) / sum(r[v]["count"] for r in rounds)
              for v in pair}
    quart = (ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4])
    print(f"\n| pair | {base} µs/answer | {variant} µs/answer | × pooled "
          "| × median of rounds | middle half of rounds | all rounds |")
    print("|---|---:|---:|---:|---:|---|---|")
    print(f"| {variant} / {base} | {pooled[base]:.3f} | {pooled[variant]:.3f} "
          f"| {pooled[variant] / pooled[base]:.3f} | {statistics.median(ratios):.3f} "
          f"| {quart[0]:.3f}–{quart[1]:.3f} | {ratios[0]:.3f}–{ratios[-1]:.3f} |\n", flush=True)


def udp_drops(port):
    """Datagrams the kernel dropped for want of room in the receive buffers of the UDP
    sockets bound to `port` (every socket of the port: a server may have several)."""
    total = 0
    for path in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(path) as f:
                rows = [line.split() for line in f][1:]
        except OSError:
            continue
        total += sum(int(row[-1]) for row in rows
                     if len(row) > 12 and int(row[1].rsplit(":", 1)[1], 16) == port)
    return total


def flood(server, tool, data, args):
    dropped = udp_drops(server.port)
    before = server.usage()
    argv = [tool, str(server.port), str(args.rate), str(args.duration),
            data.origin.rstrip("."), "2"]
    out = subprocess.run(bench.pinned(bench.CLIENT_CPU, argv), capture_output=True,
                         text=True, timeout=args.duration + 60).stdout
    after = server.usage()
    dropped = udp_drops(server.port) - dropped
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    sent = int(fields["sent"])
    cpu = (after[0] - before[0]) + (after[1] - before[1])
    read = sent - dropped
    return {"us": 1e6 * cpu / sent if sent else float("nan"), "cpu": cpu, "count": sent,
            "us_read": 1e6 * cpu / read if read > 0 else float("nan"),
            "kernel_dropped": dropped,
            "answered": int(fields["answered"]), "truncated": int(fields["truncated"])}


def report(mode, variants, results):
    """Per variant: the median of the rounds' CPU per query, the pooled figure (all the
    rounds' CPU over all their queries), and the ratios to the first variant (`off` in
    quiet mode), round by round and their median."""
    first = "off" if mode == "quiet" and "off" in variants else variants[0]
    unit = "µs/answer" if mode == "quiet" else "µs/query sent"
    pooled = {v: 1e6 * sum(r["cpu"] for r in rs) / max(1, sum(r["count"] for r in rs))
              for v, rs in results.items()}
    print(f"\n| variant | CPU {unit}, median | pooled | × {first}, pooled "
          f"| × {first}, median of rounds | rounds |")
    print("|---|---:|---:|---:|---:|---|")
    for v in variants:
        ratios = [r["us"] / f["us"] for r, f in zip(results[v], results[first])]
        print(f"| {v} | {statistics.median(r['us'] for r in results[v]):.3f} "
              f"| {pooled[v]:.3f} | {pooled[v] / pooled[first]:.3f} "
              f"| {statistics.median(ratios):.3f} | {min(ratios):.2f}–{max(ratios):.2f} |")


def report_reads(variants, results):
    """Flood mode: what each server read of the flood (the kernel drops what overflows
    its receive buffers) and its CPU per query read, medians of the rounds."""
    print("\n| variant | queries sent | dropped by the kernel | CPU µs/query read "
          "| answered | truncated |")
    print("|---|---:|---:|---:|---:|---:|")
    for v in variants:
        med = {k: statistics.median(r[k] for r in results[v])
               for k in ("count", "kernel_dropped", "us_read", "answered", "truncated")}
        print(f"| {v} | {med['count']:,.0f} | {med['kernel_dropped']:,.0f} "
              f"| {med['us_read']:.3f} | {med['answered']:,.0f} | {med['truncated']:,.0f} |")


def main():
    args = parse_args()
    bench.SERVER_CPU, bench.CLIENT_CPU = args.server_cpu, 1 - args.server_cpu
    os.sched_setaffinity(0, {bench.CLIENT_CPU})
    data = datasets.prepare(bench.parse_size(args.size), args.work)
    tool = datasets.build_tools(os.path.join(args.work, "tools"))["udp-flood"]
    variants = (args.variants.split(",") if args.variants
                else list(FLOOD if args.mode == "flood" else QUIET))
    if args.mode != "flood" and "base" in variants and not args.base:
        variants.remove("base")
    if args.mode == "paired":
        paired(variants, data, args)
        return
    if args.mode == "instructions":
        for v in variants:
            r = instructions(v, data, args)
            print(f"| {v} | {r['per_query']:,.0f} | {r['answered']} |", flush=True)
        return
    servers = {}
    try:
        for v in variants:
            servers[v] = start(v, data, args)
        results = {v: [] for v in variants}
        for rnd in range(1, args.rounds + 1):
            turn = (rnd - 1) % len(variants)  # no variant always follows the same one
            for v in variants[turn:] + variants[:turn]:
                server, extra = servers[v]
                server.keep_on_cpu()
                r = quiet(server, extra, data, args) if args.mode == "quiet" \
                    else flood(server, tool, data, args)
                results[v].append(r)
                shown = " ".join(f"{k}={x:.3f}" if isinstance(x, float) else f"{k}={x}"
                                 for k, x in r.items())
                print(f"round {rnd} {v:>10}: {shown}", flush=True)
    finally:
        for server, _ in servers.values():
            server.stop()
    report(args.mode, variants, results)
    if args.mode == "flood":
        report_reads(variants, results)


if __name__ == "__main__":
    main()
