#!/usr/bin/env python3
"""AF_XDP benchmark (issue 30): Tern XDP, Knot DNS XDP, Tern sockets and NSD sockets.

Two private network namespaces joined by a veth pair (made here, removed at the end):
the server in one, on 192.0.2.1, pinned to CPU 1 with one worker; `kxdpgun` (Knot DNS's
AF_XDP load generator) in the other, pinned to CPU 0, sending the peer harness's query
mix for its TLD-like zone (`datasets.prepare_unsigned`). Each round runs every server
in turn (interleaved: A B C D A B C D ...), and for each:

* `max`: kxdpgun offers far more than anyone answers (`--max-qps`): replies per second;
* `fixed`: a rate every server answers (`--fixed-qps`): CPU per reply at equal load.

Per run it records replies per second, the server's CPU time per reply (user + system
of its process tree, from /proc), CPU 1's busy time per reply (from /proc/stat: also
the softirq work the kernel does there for the server, which no process is charged for)
and the generator's CPU (kxdpgun's own, and CPU 0's busy share), so that a saturated
generator shows. Medians over the rounds are printed as a table.

On a veth pair the XDP program of the receiving side runs in the sender's softirq, on
the sender's CPU: the server's XDP program runs on CPU 0, and kxdpgun's on CPU 1. The
CPU 1 figure includes the latter; both XDP servers are measured the same way.

  sudo python3 bench/xdp_bench.py [--servers tern-xdp,knot-xdp,tern,nsd] [--repeats 3]
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402

SERVER_CPU, CLIENT_CPU = 1, 0
KINDS = ("tern-xdp", "knot-xdp", "tern", "nsd")
SRV, CLI = "ternbench-srv", "ternbench-cli"
SERVER_IP, CLIENT_IP, DEV = "192.0.2.1", "192.0.2.2", "veth0"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default=",".join(KINDS))
    p.add_argument("--size", default="100k", help="zone size (delegations)")
    p.add_argument("--duration", type=int, default=5, help="seconds per measurement")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--max-qps", type=int, default=5_000_000)
    p.add_argument("--fixed-qps", type=int, default=100_000)
    p.add_argument("--out", default=None, help="write the records as JSON here")
    bench.add_common_args(p)
    return p.parse_args()


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def netns_up():
    netns_down()
    sh("ip", "netns", "add", SRV)
    sh("ip", "netns", "add", CLI)
    sh("ip", "link", "add", "tbs0", "netns", SRV, "type", "veth", "peer", "name", "tbc0",
       "netns", CLI)
    for ns, old, ip in ((SRV, "tbs0", SERVER_IP), (CLI, "tbc0", CLIENT_IP)):
        sh("ip", "-n", ns, "link", "set", old, "name", DEV)
        sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", DEV)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", DEV, "up")
    # Both ends' neighbour entries, so that no ARP exchange falls into a measurement.
    sh("ip", "netns", "exec", CLI, "ping", "-c", "1", "-W", "2", SERVER_IP, check=False)


def netns_down():
    for ns in (SRV, CLI):
        sh("ip", "netns", "del", ns, check=False)


def detach_xdp():
    """Knot DNS leaves its program attached when it stops; Tern refuses to replace one."""
    for mode in ("xdp", "xdpgeneric"):
        sh("ip", "-n", SRV, "link", "set", DEV, mode, "off", check=False)


def server_argv(kind, zone, work, tern_bin):
    """The command (run inside the server namespace) that serves `zone` as `kind`."""
    if kind in ("tern", "tern-xdp"):
        xdp = f'[xdp]\ninterface = "{DEV}"\n' if kind == "tern-xdp" else ""
        conf = (f'[server]\nlisten = ["{SERVER_IP}:53"]\nudp-workers = 1\ntcp-workers = 1\n'
                f'storage = "{work}"\n[log]\nlevel = "info"\n{xdp}'
                f'[[zone]]\nname = "{zone.origin}"\nfile = "{zone.path}"\n')
        path = os.path.join(work, "ternd.toml")
        argv = [tern_bin, "--config", path]
    elif kind == "knot-xdp":
        conf = open_text(peers.command("knot", [zone], 53, work))
        conf = conf.replace("listen: 127.0.0.1@53", f"listen: {SERVER_IP}@53")
        conf = conf.replace("log:\n", f"xdp:\n  listen: {DEV}@53\nlog:\n", 1)
        path = os.path.join(work, "knot.conf")
        argv = ["knotd", "-c", path]
    elif kind == "nsd":
        conf = open_text(peers.command("nsd", [zone], 53, work))
        conf = conf.replace("ip-address: 127.0.0.1@53", f"ip-address: {SERVER_IP}@53")
        path = os.path.join(work, "nsd.conf")
        argv = ["nsd", "-d", "-c", path]
    else:
        raise ValueError(kind)
    with open(path, "w") as f:
        f.write(conf)
    return ["ip", "netns", "exec", SRV] + argv


def open_text(argv):
    """The configuration file a `peers.command` argv names (its last `-c` argument)."""
    with open(argv[argv.index("-c") + 1]) as f:
        return f.read()


def wait_answering(server, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.kind} exited:\n{server.log_tail()}")
        out = sh("ip", "netns", "exec", CLI, "kdig", f"@{SERVER_IP}", "tld.", "SOA",
                 "+timeout=1", "+retry=0", "+norecurse", check=False).stdout
        if "status: NOERROR" in out and re.search(r"Flags:[^;]* aa", out):
            server.keep_on_cpu()
            return
        time.sleep(0.2)
    raise RuntimeError(f"{server.kind} did not answer:\n{server.log_tail()}")


def cpu_busy(cpu):
    """Busy and total jiffies of `cpu` from /proc/stat."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                v = [int(x) for x in line.split()[1:]]
                idle = v[3] + v[4]
                return sum(v[:8]) - idle, sum(v[:8])
    return 0, 0


def gun(queries, qps, seconds):
    """Runs kxdpgun; returns (sent, replies, its CPU seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = sh("ip", "netns", "exec", CLI, "taskset", "-c", str(CLIENT_CPU), "kxdpgun",
             "-t", str(seconds), "-Q", str(qps), "-F", str(CLIENT_CPU), "-I", DEV,
             "-i", queries, SERVER_IP).stdout
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sent = re.search(r"total queries:\s+(\d+)", out)
    replies = re.search(r"total replies:\s+(\d+)", out)
    if not sent or not replies:
        raise RuntimeError(f"kxdpgun said:\n{out}")
    return int(sent.group(1)), int(replies.group(1)), cpu, wall


def measure(server, queries, qps, seconds):
    user, system = server.cpu_split()
    switches = server.context_switches()
    busy = [cpu_busy(c) for c in (SERVER_CPU, CLIENT_CPU)]
    sent, replies, gun_cpu, wall = gun(queries, qps, seconds)
    user_after, system_after = server.cpu_split()
    user, system = user_after - user, system_after - system
    usage = user + system
    switches = server.context_switches() - switches
    after = [cpu_busy(c) for c in (SERVER_CPU, CLIENT_CPU)]
    (sb, st), (cb, ct) = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, busy)]
    per = (lambda s: 1e6 * s / replies if replies else None)
    return {"sent_qps": sent / seconds, "replies_qps": replies / seconds,
            "answered": replies / sent if sent else 0,
            "cpu_us": per(usage), "user_us": per(user), "sys_us": per(system),
            "per_switch": replies / switches if switches else None,
            "core_us": per(sb / peers.CLK_TCK),
            "server_core_busy": sb / st if st else 0, "gun_core_busy": cb / ct if ct else 0,
            "gun_cpu_share": gun_cpu / wall if wall else 0}


def session(kind, data, args, tern_bin, repeat):
    work = os.path.join(args.work, "xdp-run", kind)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    zone = peers.Zone(data[0], data[1])
    argv = server_argv(kind, zone, work, tern_bin)
    detach_xdp()
    server = peers.Server(kind, [zone], 53, work, argv, SERVER_CPU)
    records = []
    try:
        wait_answering(server)
        time.sleep(0.5)
        for mode, qps in (("max", args.max_qps), ("fixed", args.fixed_qps)):
            r = dict(measure(server, data[2], qps, args.duration), server=kind, mode=mode,
                     repeat=repeat)
            records.append(r)
            print(f"  {kind:9} {mode:5} {r['replies_qps']:>10.0f} replies/s "
                  f"({100 * r['answered']:.0f}% of {r['sent_qps']:.0f}) "
                  f"{r['cpu_us'] or 0:6.2f} us/reply ({r['user_us'] or 0:.2f} user), "
                  f"{r['per_switch'] or 0:6.1f}/switch; CPU busy: server's "
                  f"{100 * r['server_core_busy']:.0f}%, generator's "
                  f"{100 * r['gun_core_busy']:.0f}% (kxdpgun itself "
                  f"{100 * r['gun_cpu_share']:.0f}%)", flush=True)
        if kind.endswith("xdp") and "XDP" not in "".join(open(server.log_path, errors="replace")):
            print(f"  {kind}: the log does not mention XDP", flush=True)
    finally:
        server.stop()
        detach_xdp()
    return records


def report(records, kinds):
    def med(kind, mode, key):
        values = [r[key] for r in records
                  if r["server"] == kind and r["mode"] == mode and r[key] is not None]
        return statistics.median(values) if values else None

    print("\nmedians | max: replies/s, server core % , gun core % | fixed: process us/reply,"
          " core us/reply")
    for kind in kinds:
        cells = [med(kind, "max", "replies_qps"), med(kind, "max", "server_core_busy"),
                 med(kind, "max", "gun_core_busy"), med(kind, "fixed", "cpu_us"),
                 med(kind, "fixed", "core_us"), med(kind, "max", "cpu_us")]
        if None in cells:
            print(f"{kind:9} no data")
            continue
        print(f"{kind:9} {cells[0]:>10.0f}  {100 * cells[1]:4.0f}%  {100 * cells[2]:4.0f}%"
              f" | {cells[3]:6.2f} {cells[4]:6.2f} | max-load process us/reply {cells[5]:.2f}")
    base = {k: (med(k, "max", "replies_qps"), med(k, "fixed", "cpu_us"),
                med(k, "fixed", "core_us")) for k in kinds}
    tern, knot = base.get("tern-xdp"), base.get("knot-xdp")
    if tern and knot and None not in tern + knot:
        print(f"Tern XDP / Knot XDP: replies/s {tern[0] / knot[0]:.2f}x, process CPU per "
              f"reply {tern[1] / knot[1]:.2f}x, core CPU per reply {tern[2] / knot[2]:.2f}x")


def main():
    args = parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, XDP)")
    for tool in ("kxdpgun", "knotd", "nsd", "kdig", "ip", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    tern_bin = os.path.abspath(args.tern or peers.default_ternd(os.path.dirname(HERE)))
    zone, queries = datasets.prepare_unsigned(bench.parse_size(args.size), args.work)
    data = (datasets.ORIGIN, zone, queries)
    records = []
    netns_up()
    try:
        for repeat in range(args.repeats):
            print(f"round {repeat + 1}/{args.repeats}", flush=True)
            for kind in kinds:
                records += session(kind, data, args, tern_bin, repeat)
    finally:
        netns_down()
    report(records, kinds)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
