#!/usr/bin/env python3
"""DNS over QUIC (RFC 9250) beside DNS over TLS: Tern's server CPU per query over both,
with one client shape, in one run.

  doq.py [--rounds 5] [--duration 8] [--connections 4] [--in-flight 100]
         [--tern target/release/ternd ...] [--client target/release/examples/doq_load]
         [--modes doq,dot] [--quic-streams 100]

One `ternd` (the peer benchmark's 100k zone, one UDP and one TCP worker, a DoT and a
DoQ listener, one certificate: ECDSA P-256, made here with openssl) on CPU 1, the
`doq_load` example of ternd on CPU 0: `--connections` persistent connections, each with
`--in-flight` queries outstanding (a stream per query over DoQ, pipelined over DoT),
the benchmark's query mix, for `--duration` seconds; `dnsperf-dot` is bench/tls.py's
persistent DoT load (dnsperf -m dot -c 4 -q 200), the shape of its DoT figure; `tcp` is
`doq_load`'s DoT load over plain TCP (the TCP port), for DoT/TCP with one client shape at
each one's full pace. Modes alternate within each round,
and the DoQ/DoT ratio is taken round by round. With several `--tern` builds (before and
after a change), each is started once, all on CPU 1, and measured in turn every round. Server CPU is user + system time of every
thread (/proc/PID/task/TID/stat, the scheduler's nanoseconds for the total) over the
client's run, divided by the answers it counted.

Needs: cargo build --release -p ternd --example doq_load (or --profile perf), and the
zone of bench/run.sh or bench/tls.py (bench/out/tld-100000-z1).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402

DATA = os.path.join(HERE, "out", "tld-100000-z1")
SERVER_CPU, CLIENT_CPU = 1, 0
HOST = "ns.bench.test"
TICK = os.sysconf("SC_CLK_TCK")


def certificate(work):
    """A self-signed ECDSA P-256 certificate for HOST (not a CA): (cert, key) paths."""
    cert, key = os.path.join(work, "server.pem"), os.path.join(work, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", f"/CN={HOST}", "-addext",
                    f"subjectAltName=DNS:{HOST}", "-addext",
                    "basicConstraints=critical,CA:FALSE"], check=True, capture_output=True)
    return cert, key


def config(work, port, cert, key, streams):
    """ternd.toml: UDP/TCP on `port`, DoT on port+1, DoQ on port+2."""
    path = os.path.join(work, "ternd.toml")
    with open(path, "w") as f:
        f.write(f"""[server]
listen = ["127.0.0.1:{port}"]
storage = "{os.path.join(work, 'storage')}"
udp-workers = 1
tcp-workers = 1
[log]
level = "warn"
[tls]
listen = ["127.0.0.1:{port + 1}"]
certificate = "{cert}"
key = "{key}"
[quic]
listen = ["127.0.0.1:{port + 2}"]
max-streams-per-connection = {streams}
[[zone]]
name = "tld."
file = "{os.path.join(DATA, 'zone.txt')}"
""")
    return path


def cpu(pid):
    """(user s, system s, total s) of every thread of `pid`; total from schedstat."""
    user = system = total = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0]) / 1e9
        except OSError:
            continue
        user += int(fields[11]) / TICK
        system += int(fields[12]) / TICK
    return user, system, total


def wait_ready(port, server):
    for _ in range(600):
        if server.poll() is not None:
            sys.exit("ternd ended before serving")
        out = subprocess.run(["dig", "+short", "+time=1", "+tries=1", "-p", str(port),
                              "@127.0.0.1", "tld.", "SOA"], capture_output=True, text=True)
        if out.stdout.strip() and not out.stdout.startswith(";"):
            return
        time.sleep(0.5)
    sys.exit("ternd did not answer")


def measure(args, pid, mode, port, cert, queries):
    """One client run of `mode`: a dict of the rate and the server's CPU per answer."""
    before = cpu(pid)
    if mode == "dnsperf-dot":
        shape = SimpleNamespace(clients=4, outstanding=200)
        text = queries.split(".tcp")[0] + ".txt"
        done, qps, lost, _ = bench.dnsperf(port, text, args.duration, shape, extra=("-m", "dot"))
        fields = {"qps": qps, "failed": round(lost)}
    else:
        argv = ["taskset", "-c", str(CLIENT_CPU), args.client, "-m", mode, "-p", str(port),
                "-f", queries, "--ca", cert, "-c", str(args.connections), "-q",
                str(args.in_flight), "-l", str(args.duration)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        fields = dict(kv.split("=") for kv in out.split())
        done = int(fields["completed"])
    after = cpu(pid)
    per = lambda i: (after[i] - before[i]) * 1e6 / done  # noqa: E731
    return {"mode": mode, "qps": float(fields["qps"]), "failed": int(fields["failed"]),
            "cpu_us": per(2), "user_us": per(0), "sys_us": per(1)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=float, default=8)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--in-flight", type=int, default=100)
    p.add_argument("--quic-streams", type=int, default=100)
    p.add_argument("--modes", default="doq,dot")
    p.add_argument("--tern", action="append",
                   help="a ternd build (repeat to compare builds in one run)")
    p.add_argument("--client", default=None)
    args = p.parse_args()
    args.tern = args.tern or [os.path.join(REPO, "target", "release", "ternd")]
    args.client = args.client or os.path.join(os.path.dirname(args.tern[-1]), "examples",
                                              "doq_load")
    queries = [f for f in os.listdir(DATA) if f.endswith(".bin") and ".tcp" in f]
    if not queries:
        sys.exit(f"no queries in {DATA}: run bench/run.sh or bench/tls.py first")
    queries = os.path.join(DATA, sorted(queries)[0])
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory(prefix="tern-doq-") as work:
        cert, key = certificate(work)
        servers = {}
        try:
            for n, tern in enumerate(args.tern):
                port = 20000 + (os.getpid() + 10 * n) % 20000
                os.makedirs(os.path.join(work, str(n)))
                path = config(os.path.join(work, str(n)), port, cert, key, args.quic_streams)
                servers[tern] = (subprocess.Popen(["taskset", "-c", str(SERVER_CPU), tern,
                                                   "--config", path]), port)
                wait_ready(port, servers[tern][0])
            records = rounds(args, servers, modes, cert, queries)
        finally:
            for server, _ in servers.values():
                server.terminate()
                server.wait()
    for tern in args.tern:
        print(f"\n{tern}:")
        report([r for r in records if r["tern"] == tern], modes)


def rounds(args, servers, modes, cert, queries):
    records = []
    for n in range(args.rounds):
        order = modes if n % 2 == 0 else modes[::-1]
        terns = list(servers) if n % 2 == 0 else list(servers)[::-1]
        for tern in terns:
            server, port = servers[tern]
            for mode in order:
                at = port + {"doq": 2, "tcp": 0}.get(mode, 1)
                r = measure(args, server.pid, mode, at, cert, queries)
                r.update(round=n, tern=tern)
                records.append(r)
                print(f"round {n} {tern} {mode}: {r['qps']:9.0f} q/s {r['cpu_us']:6.2f} "
                      f"us/query (user {r['user_us']:.2f}, sys {r['sys_us']:.2f}) failed "
                      f"{r['failed']}", flush=True)
    return records


def report(records, modes):
    print("\n| mode | queries/s | server CPU µs/query (user, system) |\n|---|---:|---:|")
    for mode in modes:
        rs = [r for r in records if r["mode"] == mode]
        med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
        print(f"| {mode} | {med('qps'):,.0f} | {med('cpu_us'):.2f} "
              f"({med('user_us'):.2f}, {med('sys_us'):.2f}) |")
    pairs = [("doq", m) for m in modes if m != "doq" and m != "tcp" and "doq" in modes]
    pairs += [(m, "tcp") for m in ("dot", "dnsperf-dot") if m in modes and "tcp" in modes]
    for top, bottom in pairs:
        ratios = []
        for n in sorted({r["round"] for r in records}):
            by = {r["mode"]: r["cpu_us"] for r in records if r["round"] == n}
            ratios.append(by[top] / by[bottom])
        print(f"\n{top}/{bottom} CPU per query: median {statistics.median(ratios):.2f} "
              f"(rounds {min(ratios):.2f}–{max(ratios):.2f})")

if __name__ == "__main__":
    main()
