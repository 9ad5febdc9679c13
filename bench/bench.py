#!/usr/bin/env python3
"""Peer benchmark: Tern, Knot DNS, NSD, BIND and the floor responder on one machine.

For each zone size it generates (once, cached) a TLD-like zone, its NSEC3 opt-out
signed copy and a query mix, then serves the zone with each server in turn — server
pinned to CPU 1 with one worker, load generator pinned to CPU 0 — repeating the round
`--repeats` times interleaved (A B C D A B C D ...) and reporting medians of:

* load time: process start until the zone's SOA gets an authoritative answer;
* memory: PSS summed over the server's process tree, right after the load;
* per mode: answered queries per second, server CPU time (user + system, all threads)
  per answered query, and lost queries. Modes: `udp` (DO=0), `do` (DO=1 on the signed
  zone), `tcp` (dnsperf over persistent pipelined connections), `fresh` (a new TCP
  connection per query, `tools/tcp-fresh`).

The floor (`tools/udp-floor`) answers without doing DNS work: the socket path's limit.
See `bench/run.sh` for the entry point and `docs/benchmarks.md` for results.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import datasets  # noqa: E402
import peers  # noqa: E402
import table  # noqa: E402

SERVER_CPU, CLIENT_CPU = 1, 0
MODES = ("udp", "do", "tcp", "fresh")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="tern,knot,nsd,bind,floor")
    p.add_argument("--sizes", default="100k", help="zone sizes measured fully (e.g. 100k,1m)")
    p.add_argument("--load-sizes", default="1m",
                   help="zone sizes measured for load time and memory only")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--duration", type=float, default=10, help="seconds per measurement")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    p.add_argument("--fresh-concurrency", type=int, default=8)
    add_common_args(p)
    return p.parse_args()


def add_common_args(p):
    """The options every script of the harness shares: where data is cached, which ternd."""
    # Absolute, because servers get paths into it in their configurations and resolve a
    # relative one against their own directories (Knot DNS then never loads the zone).
    p.add_argument("--work", default=os.path.join(HERE, "out"), type=os.path.abspath,
                   help="cache of zones, signed zones, tools and results")
    p.add_argument("--tern", default=None, help="ternd binary (default: $TERND or "
                   "<cargo target>/perf/ternd, the fully optimised build: "
                   "cargo build --profile perf -p ternd)")


def parse_size(text):
    text = text.strip().lower()
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(text.rstrip("km")) * factor


def pinned(cpu, argv):
    return ["taskset", "-c", str(cpu)] + argv


def dnsperf(port, data, seconds, args, dnssec=False, tcp=False, rate=None, extra=()):
    """Runs dnsperf on CLIENT_CPU, sending as fast as answers allow or at most `rate`
    queries per second (`extra`: more dnsperf options); returns (answered, qps, lost
    percent, rcode mix)."""
    argv = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", data, "-l", str(seconds),
            "-c", str(args.clients), "-q", str(args.outstanding)]
    argv += ["-Q", str(rate)] if rate else []
    argv += ["-D"] if dnssec else []
    argv += ["-m", "tcp"] if tcp else []
    argv += list(extra)
    out = subprocess.run(pinned(CLIENT_CPU, argv), capture_output=True, text=True,
                         timeout=seconds + 60).stdout
    fields = {}
    for line in out.splitlines():
        words = line.split()
        if line.strip().startswith("Queries completed:"):
            fields["answered"] = int(words[2])
        elif line.strip().startswith("Queries lost:"):
            fields["lost"] = float(words[3].strip("()%"))
        elif line.strip().startswith("Queries per second:"):
            fields["qps"] = float(words[3])
        elif line.strip().startswith("Response codes:"):
            fields["rcodes"] = _rcode_mix(line.split(":", 1)[1])
    if len(fields) != 4:
        raise RuntimeError(f"unexpected dnsperf output:\n{out}")
    return fields["answered"], fields["qps"], fields["lost"], fields["rcodes"]


def _rcode_mix(text):
    """'NOERROR 11833 (59.17%), NXDOMAIN 8167 (40.83%)' -> 'NOERROR 59%, NXDOMAIN 41%'."""
    parts = []
    for item in text.split(","):
        words = item.split()
        if len(words) == 3:
            parts.append(f"{words[0]} {float(words[2].strip('()%')):.0f}%")
    return ", ".join(parts)


def fresh(tool, port, data, seconds, concurrency):
    """Runs tcp-fresh on CLIENT_CPU; returns (answered, qps, failed percent)."""
    argv = [tool, "-p", str(port), "-f", data, "-l", str(seconds), "-c", str(concurrency)]
    out = subprocess.run(pinned(CLIENT_CPU, argv), capture_output=True, text=True,
                         timeout=seconds + 60).stdout
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    answered, failed = int(fields["completed"]), int(fields["failed"])
    lost = 100.0 * failed / max(1, answered + failed)
    return answered, float(fields["qps"]), lost


def load_generator(mode, server, data, args, tools):
    """Runs one mode against a started server; returns a measurement dict."""
    before = server.usage()
    if mode == "fresh":
        answered, qps, lost = fresh(tools["tcp-fresh"], server.port, data.queries_tcp,
                                    args.duration, args.fresh_concurrency)
        rcodes = None
    else:
        answered, qps, lost, rcodes = dnsperf(server.port, data.queries, args.duration, args,
                                              dnssec=mode == "do", tcp=mode == "tcp")
    return {"mode": mode, "qps": qps, "answered": answered, "lost": lost, "rcodes": rcodes,
            **per_query_usage(before, server.usage(), answered)}


def per_query_usage(before, after, answered):
    """CPU µs per answered query (`cpu_us`), split into user and kernel time, and the
    queries answered per context switch, from two `Server.usage()` snapshots.

    A server that sleeps between small batches pays the kernel's wake-up and system-call
    costs more often per query than a busy one: `per_switch` shows which it was."""
    user, system, switches = (b - a for a, b in zip(before, after))

    def per_query(seconds):
        return 1e6 * seconds / answered if answered else None

    return {"cpu_us": per_query(user + system), "user_us": per_query(user),
            "sys_us": per_query(system), "per_switch": answered / switches if switches else None}


def session(kind, data, signed, modes, args, tools, repeat):
    """Starts `kind` on one zone variant, measures load, memory and `modes`; stops it."""
    zone = peers.Zone(data.origin, data.signed if signed else data.zone)
    work = os.path.join(args.work, "run", kind)
    shutil.rmtree(work, ignore_errors=True)  # every session starts from nothing
    server = peers.start(kind, [zone], peers.free_port(), work, cpu=SERVER_CPU,
                         tern_bin=tools.get("ternd"), floor_bin=tools["udp-floor"])
    base = {"server": kind, "size": data.size, "zone": "signed" if signed else "unsigned",
            "repeat": repeat}
    records = []
    try:
        load_s = server.wait_answering(timeout=900, floor=kind == "floor")
        time.sleep(0.5)
        if kind != "floor":
            records.append(dict(base, mode="load", load_s=load_s, pss_kb=server.pss_kb()))
        for mode in modes:
            r = load_generator(mode, server, data, args, tools)
            records.append(dict(base, **r))
            print(f"  {kind:5} {data.size:>8} {mode:5} {r['qps']:>10.0f} qps "
                  f"{r['cpu_us'] or 0:7.2f} us/q ({r['user_us'] or 0:.2f} user) "
                  f"{r['per_switch'] or 0:6.1f} q/switch lost {r['lost']:.2f}%", flush=True)
    except (RuntimeError, subprocess.SubprocessError, KeyError, ValueError) as err:
        print(f"  {kind}: FAILED: {err}", flush=True)
        records.append(dict(base, mode="error", error=str(err)[:2000]))
    finally:
        server.stop()
    if records and records[0].get("mode") == "load":
        r = records[0]
        print(f"  {kind:5} {data.size:>8} {base['zone']:8} load {r['load_s']:.2f}s "
              f"pss {r['pss_kb'] / 1024:.1f} MiB", flush=True)
    return records


def rounds(kind, data, modes, full):
    """The (signed?, modes) sessions of one server for one dataset."""
    udp_modes = [m for m in modes if m != "do"] if full else []
    if kind == "floor":
        return [(False, [m for m in modes if m in ("udp", "do")])] if full else []
    sessions = [(False, udp_modes)]
    if "do" in modes or not full:
        sessions.append((True, ["do"] if full and "do" in modes else []))
    return sessions


def run_all(args, kinds, tools):
    records = []
    plan = [(parse_size(s), True) for s in args.sizes.split(",") if s.strip()]
    plan += [(parse_size(s), False) for s in args.load_sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for size, full in plan:
        data = datasets.prepare(size, args.work)
        for repeat in range(args.repeats):
            print(f"== {size} delegations, round {repeat + 1}/{args.repeats}", flush=True)
            for kind in kinds:
                for signed, session_modes in rounds(kind, data, modes, full):
                    records += session(kind, data, signed, session_modes, args, tools, repeat)
    return records


def main():
    args = parse_args()
    os.sched_setaffinity(0, {CLIENT_CPU})
    os.makedirs(args.work, exist_ok=True)
    tools = datasets.build_tools(os.path.join(args.work, "tools"))
    tools["ternd"] = args.tern or peers.default_ternd(REPO)
    kinds = []
    for kind in [k.strip() for k in args.servers.split(",") if k.strip()]:
        reason = peers.missing_reason(kind, tools["ternd"], tools["udp-floor"])
        if reason:
            print(f"{kind}: SKIPPED — {reason}")
        else:
            kinds.append(kind)
    started = time.time()
    records = run_all(args, kinds, tools)
    meta = {"command": " ".join(["bench/run.sh"] + sys.argv[1:]), "started": time.strftime(
        "%Y-%m-%d %H:%M UTC", time.gmtime(started)), "minutes": (time.time() - started) / 60,
        "machine": machine_notes(), "args": vars(args),
        "ternd": f"{tools['ternd']} (tree at {git_head()})" if "tern" in kinds else None}
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started))
    with open(os.path.join(args.work, f"results-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    text = table.render(records, meta)
    with open(os.path.join(args.work, f"table-{stamp}.md"), "w") as f:
        f.write(text)
    print(text)


def git_head():
    try:
        return subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine_notes():
    def version(cmd, needle=""):
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return "?"
        lines = [l for l in (run.stdout + run.stderr).splitlines() if needle in l]
        return lines[0].strip() if lines else "?"
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": f"{cpu}, {os.cpu_count()} CPUs", "kernel": platform.release(),
        "knot": version(["knotd", "-V"]), "nsd": version(["nsd", "-v"], "NSD"),
        "bind": version(["named", "-v"]), "dnsperf": version(["dnsperf", "-h"], "Version"),
    }


if __name__ == "__main__":
    main()
