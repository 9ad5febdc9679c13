#!/usr/bin/env python3
"""Query CPU while signatures are refreshed in the background (issue 51).

  python3 bench/sign_refresh.py [--size 100k] [--rounds 3] [--duration 10]
                                [--validity 60s] [--refresh 50s] [--work DIR] [--tern PATH]

Tern serves the peer benchmark's TLD-like zone (`--size` delegations, `bench/datasets.py`)
signed by itself (a `[[policy]]`: CSK, ECDSAP256SHA256, NSEC), in two forms started
afresh by turns (idle, refreshing, idle, refreshing, ...):

* `idle`: the default signature lifetimes (valid 14 days, refreshed 7 days before they
  expire): after the first signing nothing is signed again;
* `refreshing`: `signature-validity = --validity`, `signature-refresh = --refresh`: the
  signer wakes every tenth of the refresh window and makes again every signature that
  expires within it, so with 60 s and 50 s the whole zone is signed again about every
  10 s, in slices of at most 2,000 signatures, each committed (journaled, published)
  like an update.

Each form is started (one UDP and one TCP worker, the whole process pinned to CPU 0),
waited for until it answers signed, left `--settle` s (the refreshing form's first
refresh passes begin), then loaded by dnsperf (`-D`, DO=1, the query mix of the peer
benchmark, on CPU 1) for `--duration` s. Reported per form, medians over rounds:
queries/s, **CPU of the UDP worker thread per query** (the scheduler's nanosecond
accounting, /proc/PID/task/TID/schedstat, of the `ternd-udp-*` threads), the whole
process's CPU per query (signing included; /proc/PID/stat, 10 ms ticks), and how far the SOA serial rose during the
load (each refresh slice raises it: the proof that the refreshing form was refreshing).
The target: the UDP worker's CPU per query while refreshing within 5% of idle's.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import dns.message  # noqa: E402
import dns.query  # noqa: E402

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402
import update_rate  # noqa: E402

SERVER_CPU, CLIENT_CPU = 0, 1
ORIGIN = datasets.ORIGIN
FORMS = ("idle", "refreshing")


def conf(port, work, zone, form, args):
    """ternd's configuration for `form` (see the module comment): one UDP and one TCP
    worker, the zone signed by a CSK policy."""
    lifetimes = (f'signature-validity = "{args.validity}"\nsignature-refresh = "{args.refresh}"\n'
                 if form == "refreshing" else "")
    return update_rate.tern_conf(port, work, zone, False, signed=True, policy=lifetimes)[0]


def start(form, zone_src, args):
    """A fresh ternd of `form`, answering signed."""
    work = os.path.join(args.work, "sign-refresh-run", form)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "data"))
    zone = os.path.join(work, "zone.txt")
    shutil.copyfile(zone_src, zone)
    port = peers.free_port()
    argv = [args.tern, "--config", conf(port, work, zone, form, args)]
    server = peers.Server("tern", [peers.Zone(ORIGIN, zone)], port, work, argv, SERVER_CPU)
    server.wait_answering(timeout=900)
    update_rate.wait_signed(port)
    return server


def udp_worker_seconds(server):
    """CPU seconds of the server's UDP worker threads (`ternd-udp-*`), nanosecond
    accounting."""
    total = 0
    for pid in server.pids():
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if not f.read().startswith("ternd-udp"):
                        continue
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total / 1e9


def serial(port):
    """The SOA serial served."""
    answer = dns.query.udp(dns.message.make_query(ORIGIN, "SOA"), "127.0.0.1", port=port, timeout=2)
    return answer.answer[0][0].serial


def load(server, queries, args):
    """dnsperf (DO=1) on the server for `--duration` s: its figures and the server's."""
    argv = ["taskset", "-c", str(CLIENT_CPU), "dnsperf", "-s", "127.0.0.1", "-p",
            str(server.port), "-d", queries, "-l", str(args.duration), "-D",
            "-c", str(args.clients), "-q", str(args.outstanding)]
    serial_before, worker_before = serial(server.port), udp_worker_seconds(server)
    process_before = server.cpu_seconds()
    with tempfile.TemporaryFile("w+") as out:
        subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=True,
                       timeout=args.duration + 120)
        out.seek(0)
        perf = update_rate.parse_dnsperf(out.read())
    worker = udp_worker_seconds(server) - worker_before
    # /proc/PID/stat, which keeps the time of threads that ended (the blocking threads
    # that signed the zone first end during the load): summing the live threads' would not.
    process = server.cpu_seconds() - process_before
    queries_done = max(1, perf["completed"])
    return {"qps": perf["per_second"], "completed": perf["completed"], "lost": perf["lost"],
            "worker_cpu_s": worker, "process_cpu_s": process,
            "worker_us_per_query": worker / queries_done * 1e6,
            "process_us_per_query": process / queries_done * 1e6,
            "serials": (serial(server.port) - serial_before) % 2**32,
            "loadavg_1m": os.getloadavg()[0]}


def session(form, zone, queries, args):
    server = start(form, zone, args)
    try:
        time.sleep(args.settle)
        result = load(server, queries, args)
    finally:
        server.stop()
    print(f"  {form:10} {result['qps']:9,.0f} q/s, UDP worker {result['worker_us_per_query']:.3f} µs/query,"
          f" process {result['process_us_per_query']:.3f} µs/query, serial +{result['serials']},"
          f" load {result['loadavg_1m']:.1f}", flush=True)
    return result


def summary(results):
    """Medians per form, and refreshing over idle (worker CPU per query) by round."""
    med = {f: {k: statistics.median(r[k] for r in results[f]) for k in
               ("qps", "worker_us_per_query", "process_us_per_query", "serials", "loadavg_1m")}
           for f in FORMS}
    ratios = [r["worker_us_per_query"] / i["worker_us_per_query"]
              for i, r in zip(results["idle"], results["refreshing"])]
    lines = ["| form | queries/s | UDP worker CPU µs/query | process CPU µs/query | serial rises during the load | load average |",
             "|---|---:|---:|---:|---:|---:|"]
    for f in FORMS:
        m = med[f]
        lines.append(f"| {f} | {m['qps']:,.0f} | {m['worker_us_per_query']:.3f} | "
                     f"{m['process_us_per_query']:.3f} | {m['serials']:.0f} | {m['loadavg_1m']:.1f} |")
    ratio = statistics.median(ratios)
    lines.append("")
    lines.append(f"UDP worker CPU per query, refreshing / idle: {ratio:.3f} (rounds "
                 f"{', '.join(f'{x:.3f}' for x in ratios)}; target ≤ 1.05)")
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=bench.parse_size, default=100_000, help="delegations in the zone")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=10, help="seconds of queries a session")
    p.add_argument("--settle", type=float, default=5, help="seconds between signed and the load")
    p.add_argument("--validity", default="60s", help="signature-validity of the refreshing form")
    p.add_argument("--refresh", default="50s", help="signature-refresh of the refreshing form")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    bench.add_common_args(p)
    args = p.parse_args(argv)
    args.tern = args.tern or peers.default_ternd(REPO)
    return args


def main():
    args = parse_args()
    zone, queries = datasets.prepare_unsigned(args.size, args.work)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    print(f"{stamp} UTC, ternd {bench.git_head()} ({args.tern}), {args.size:,} delegations, "
          f"refreshing: validity {args.validity}, refresh {args.refresh}; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    results = {f: [] for f in FORMS}
    for n in range(1, args.rounds + 1):
        print(f"round {n}", flush=True)
        for form in FORMS:
            results[form].append(session(form, zone, queries, args))
    text = summary(results)
    print("\n" + text)
    path = os.path.join(args.work, f"sign-refresh-results-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"args": vars(args), "commit": bench.git_head(), "results": results,
                   "summary": text}, f, indent=1)
    print(f"raw figures: {path}")


if __name__ == "__main__":
    sys.exit(main())
