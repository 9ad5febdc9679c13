#!/usr/bin/env python3
"""The disk's own floor under a journaled change: one small append and `fdatasync`.

A change committed with a journal is appended and synced before it is published, so
its latency cannot be below what the disk takes to sync one small write. This times
exactly that, the way a journal does it (a record appended to a file opened once,
then `fdatasync`), so that `update_cost`'s "journal" rows can be read against it.

    python3 bench/sync_floor.py [--dir target] [--syncs 2000] [--rounds 4] [--bytes 150]

Prints the median, p99 and largest of each round, in microseconds. The file is made
in `--dir` (on the disk the journals use) and removed afterwards.
"""

import argparse
import os
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", default="target", help="a directory on the journals' disk")
    p.add_argument("--syncs", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--bytes", type=int, default=150, help="bytes appended per sync")
    return p.parse_args()


def percentile(sorted_values, share):
    """The value below which `share` of `sorted_values` lie (nearest rank)."""
    index = min(len(sorted_values) - 1, int(len(sorted_values) * share))
    return sorted_values[index]


def one_round(path, syncs, size):
    """Seconds each append-and-sync took, sorted."""
    record = b"x" * size
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    took = []
    try:
        for _ in range(syncs):
            started = time.perf_counter()
            os.write(fd, record)
            os.fdatasync(fd)
            took.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        os.unlink(path)
    return sorted(took)


def main():
    args = parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"sync-floor.{os.getpid()}")
    print("| round | median µs | p99 µs | largest µs |\n|---:|---:|---:|---:|")
    for n in range(1, args.rounds + 1):
        took = one_round(path, args.syncs, args.bytes)
        us = [t * 1e6 for t in (percentile(took, 0.5), percentile(took, 0.99), took[-1])]
        print(f"| {n} | {us[0]:,.0f} | {us[1]:,.0f} | {us[2]:,.0f} |")


if __name__ == "__main__":
    main()
