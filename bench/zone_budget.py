#!/usr/bin/env python3
"""Where each byte of an idle zone goes: ternd's heap per zone, by owner.

Issue #54's per-zone byte budget. ternd serves N hosting zones (`many.py`'s, 15 records
each) under heaptrack; once every zone answers, ternd is killed with SIGKILL so
that everything still allocated counts as "leaked", then each allocation's stack is given
to the first owner below that appears in it. Heap only: the binary, thread stacks and
allocator slack are outside it (compare `many.py`'s PSS).

With `--secondaries`, the zones are secondaries instead: a Tern primary (not measured)
serves them on loopback; ternd transfers each one (AXFR) and keeps it on disk, and is
then started again under heaptrack, serving each from its kept copy and waiting for its
SOA refresh, as a secondary does between refreshes.

    python3 bench/zone_budget.py [--zones 20000] [--secondaries] [--tern target/perf/ternd]

Prints a markdown table, bytes per zone by owner, largest first.
"""

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import many  # noqa: E402
import peers  # noqa: E402

# (a frame's text to look for, the owner it names): the first that matches a stack,
# in this order, takes the allocation.
OWNERS = [
    ("tokio::runtime::task::core::Cell", "writer: its tokio task (the writer's future)"),
    ("tern_control::inbox", "writer: its inbox"),
    ("tern_control::writer::Writer::new", "writer: its state (status, timers)"),
    ("take_journal", "writer: journal state"),
    ("Loading::wait", "start-up: load outcomes kept"),
    ("main_nodes", "zone data: node table (owners, RRsets)"),
    ("IndexBuilder", "zone data: name index"),
    ("publish_change", "zone data: the version (ZoneContents)"),
    ("tern_zone::", "zone data: other"),
    ("primary::build", "zone data: other"),
    ("tern_control::commit", "zone data: other"),
    ("xfr::resolve", "configuration: resolved zone settings"),
    ("tern_server::config", "configuration: zone tables as read"),
    ("tern_control::registry", "control plane: writers' map and entries (resting records)"),
    ("tern_control::timer_queue", "control plane: the timer queue of resting zones"),
    ("tern_control::dormant", "control plane: resting records' timers"),
    ("tern_control::plane::Control::apply", "control plane: plans and slots"),
    ("tern_control::plane", "control plane: writers' map, other"),
    ("tern_server::lifecycle", "data plane: zone set and access rules"),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zones", type=int, default=20_000)
    p.add_argument("--sample", type=int, default=500, help="probe every Nth zone")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--secondaries", action="store_true",
                   help="secondary zones of a Tern primary on loopback")
    bench.add_common_args(p)
    return p.parse_args()


def run(zones, args, tern, out):
    """ternd under heaptrack until the sampled zones answer, then SIGKILL."""
    wrapper = os.path.join(out, "ternd.sh")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec heaptrack -o {out}/heap "{tern}" "$@"\n')
    os.chmod(wrapper, 0o755)
    work = os.path.join(args.work, "run-budget")
    subprocess.run(["rm", "-rf", work], check=False)
    server = peers.start("tern", zones, peers.free_port(), work, tern_bin=wrapper)
    server.zones = zones[::args.sample] + zones[-1:]
    try:
        server.wait_answering(timeout=args.timeout)
        deadline = time.monotonic() + args.timeout
        while many.sweep(server.port, zones, give_up=1) and time.monotonic() < deadline:
            time.sleep(1)  # every zone answers before the heap is counted
        time.sleep(3)
        kill_ternd(server, tern)
        server.proc.wait(timeout=120)
    finally:
        server.stop()
    return [os.path.join(out, f) for f in os.listdir(out) if f.startswith("heap")][0]


def kill_ternd(server, tern):
    """SIGKILL to `tern` under heaptrack, not to heaptrack's own processes (its
    interpreter and compressor), which then write out what it has."""
    comm = os.path.basename(tern)[:15]  # as the kernel keeps a process's name
    for pid in server.pids()[1:]:
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == comm:
                    os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def primary_config(zones, port, work):
    """A Tern primary of `zones` on 127.0.0.1:`port` that gives transfers to loopback."""
    zone_lines = "".join(f'[[zone]]\nname = "{z.origin}"\nfile = "{z.path}"\nacl = ["xfr"]\n'
                         for z in zones)
    acl = '[[acl]]\nid = "xfr"\naddress = "127.0.0.0/8"\naction = "transfer"\n'
    return write_config(work, "primary", port, acl + zone_lines)


def secondary_config(zones, port, primary_port, work):
    """A Tern secondary of `zones` on 127.0.0.1:`port`, of the primary at `primary_port`."""
    zone_lines = "".join(f'[[zone]]\nname = "{z.origin}"\nprimary = "p"\n' for z in zones)
    rest = (f'[transfer]\nmax-incoming = 50\n[[remote]]\nid = "p"\n'
            f'address = "127.0.0.1:{primary_port}"\n')
    return write_config(work, "secondary", port, rest + zone_lines)


def write_config(work, role, port, body):
    """`work`/`role`.toml: one worker each way on 127.0.0.1:`port`, storage in
    `work`/`role`-data, warnings only, then `body`. Its path."""
    conf = (f'[server]\nlisten = ["127.0.0.1:{port}"]\nudp-workers = 1\ntcp-workers = 1\n'
            f'storage = "{work}/{role}-data"\n[log]\nlevel = "warn"\n{body}')
    path = os.path.join(work, f"{role}.toml")
    with open(path, "w") as f:
        f.write(conf)
    return path


def answering(server, port, zones, timeout):
    """Waits until every zone of `zones` answers at `server` (raises if it does not)."""
    server.wait_answering(timeout=timeout)
    deadline = time.monotonic() + timeout
    while many.sweep(port, zones, give_up=1):
        if time.monotonic() > deadline:
            raise RuntimeError(f"not every zone answers within {timeout}s:\n{server.log_tail()}")
        time.sleep(1)


def run_secondaries(zones, args, tern, out):
    """A Tern primary of `zones`; ternd as their secondary transfers each one and keeps
    it on disk (not measured), then is started again under heaptrack: it serves every
    zone from its kept copy and waits for the SOA refresh its kept timers say (two
    hours off), as a secondary does between refreshes. Once every zone answers and had
    time to rest, SIGKILL. (Transferring under heaptrack takes too long.)"""
    work = os.path.join(args.work, "run-budget-secondaries")
    subprocess.run(["rm", "-rf", work], check=False)
    for sub in ("primary", "transfers", "secondary"):
        os.makedirs(os.path.join(work, sub))
    primary_port, port = peers.free_port(), peers.free_port()
    sampled = zones[::args.sample] + zones[-1:]
    argv = [tern, "--config", primary_config(zones, primary_port, work)]
    primary = peers.Server("tern", sampled, primary_port, os.path.join(work, "primary"), argv, None)
    secondary = None
    try:
        primary.wait_answering(timeout=args.timeout)
        argv = [tern, "--config", secondary_config(zones, port, primary_port, work)]
        secondary = peers.Server("tern", sampled, port, os.path.join(work, "transfers"), argv, None)
        answering(secondary, port, zones, args.timeout)
        time.sleep(10)  # the last copies written
        secondary.stop()
        argv = ["heaptrack", "-o", f"{out}/heap"] + argv
        secondary = peers.Server("tern", sampled, port, os.path.join(work, "secondary"), argv, None)
        answering(secondary, port, zones, args.timeout)
        time.sleep(10)  # writers at rest
        kill_ternd(secondary, tern)
        secondary.proc.wait(timeout=900)
    finally:
        if secondary:
            secondary.stop()
        primary.stop()
    return [os.path.join(out, f) for f in os.listdir(out) if f.startswith("heap")][0]


def owners(heap, out):
    """Bytes still allocated, by owner."""
    stacks = os.path.join(out, "stacks.txt")
    subprocess.run(["heaptrack_print", "-f", heap, "--print-peaks", "0", "--print-allocators", "0",
                    "--print-temporary", "0", "--print-leaks", "0", "-F", stacks,
                    "--flamegraph-cost-type", "leaked"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    totals = collections.Counter()
    with open(stacks) as f:
        for line in f:
            stack, _, size = line.rstrip().rpartition(" ")
            owner = next((o for key, o in OWNERS if key in stack), "other (runtime, sockets, buffers)")
            totals[owner] += int(size)
    return totals


def main():
    args = parse_args()
    subprocess.run([os.path.join(HERE, "install-tools.sh"), "heaptrack:heaptrack"], check=True)
    zones = many.prepare(args.zones, args.work)
    tern = args.tern or peers.default_ternd(bench.REPO)
    with tempfile.TemporaryDirectory() as out:
        heap = run_secondaries(zones, args, tern, out) if args.secondaries \
            else run(zones, args, tern, out)
        totals = owners(heap, out)
    count = len(zones)
    kind = "secondary zones" if args.secondaries else "zones"
    print(f"#### Heap per idle zone, {count:,} {kind} of 15 records\n")
    print("| owner | bytes per zone |\n|---|---:|")
    for owner, size in totals.most_common():
        if size >= count:
            print(f"| {owner} | {size / count:,.0f} |")
    print(f"| **total** | **{sum(totals.values()) / count:,.0f}** |")


if __name__ == "__main__":
    main()
