#!/usr/bin/env python3
"""AXFR in, Tern builds side by side: which build receives the zone faster.

  xfr_ab.py --builds A,B [--rounds 6] [--delegations 1000000] [--tunables N=TUNABLES]

One Knot DNS primary (CPU 0) serves the TLD-like zone of `bench/xfr.py`; each round
starts every build in turn as an empty secondary (CPU 1) and times it from its start
until it answers the zone's serial, with its user and system CPU time and its peak
resident set. Builds alternate round by round, so that a machine that changes speed
during the run moves every build alike; medians are printed. `--tunables N=…` runs the
Nth build (from 0) with `GLIBC_TUNABLES` set, for allocator experiments: e.g. the same
binary given twice and `--tunables 1=glibc.malloc.arena_max=1`.

`bench/xfr.py` compares Tern with the other servers; this compares Tern with itself,
which the other servers' spread (a quarter from run to run) would hide.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "interop"))

import peers  # noqa: E402
import xfr  # noqa: E402


def one_round(build, tunables, primary_port, serial, work, zone):
    """Starts `build` as a secondary of the primary; (seconds, user, system, peak MB)."""
    env_before = os.environ.get("GLIBC_TUNABLES")
    if tunables:
        os.environ["GLIBC_TUNABLES"] = tunables
    else:
        os.environ.pop("GLIBC_TUNABLES", None)
    try:
        port = peers.free_port()
        argv = xfr.argv_for("tern", port, work, zone, build, primary_port)
        server = xfr.launch("tern", port, work, argv, xfr.SERVER_CPU)
    finally:
        if env_before is None:
            os.environ.pop("GLIBC_TUNABLES", None)
        else:
            os.environ["GLIBC_TUNABLES"] = env_before
    try:
        xfr.wait_serial(port, serial)
        seconds = time.monotonic() - server.started
        user, system = server.cpu_split()
        return seconds, user, system, xfr.peak_kb(server) / 1024
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--builds", required=True, help="ternd binaries, comma-separated")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--delegations", type=int, default=1_000_000)
    parser.add_argument("--tunables", action="append", default=[], help="N=GLIBC_TUNABLES")
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "tern-xfr-ab"))
    args = parser.parse_args()
    builds = args.builds.split(",")
    tunables = dict(t.split("=", 1) for t in args.tunables)
    zone = xfr.zone_file(os.path.join(tempfile.gettempdir(), "tern-xfr-bench"), args.delegations)
    primary_port = peers.free_port()
    primary_work = xfr.fresh(os.path.join(args.work, "primary"))
    argv = xfr.argv_for("knot", primary_port, primary_work, zone, builds[0])
    primary = xfr.launch("knot", primary_port, primary_work, argv, xfr.CLIENT_CPU)
    results = {i: [] for i in range(len(builds))}
    try:
        serial = xfr.wait_serial(primary_port)
        for r in range(args.rounds):
            for i, build in enumerate(builds):
                work = os.path.join(args.work, f"secondary-{i}")
                got = one_round(build, tunables.get(str(i)), primary_port, serial, work, zone)
                results[i].append(got)
                print(f"round {r + 1} build {i}: {got[0]:.2f} s, user {got[1]:.2f}, "
                      f"system {got[2]:.2f}, peak {got[3]:.0f} MB", flush=True)
    finally:
        primary.stop()
    print("\n| build | start to serving s | user s | system s | peak MB |\n|---|---:|---:|---:|---:|")
    for i, build in enumerate(builds):
        med = [statistics.median(x[k] for x in results[i]) for k in range(4)]
        print(f"| {build} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {med[3]:.0f} |")


if __name__ == "__main__":
    main()
