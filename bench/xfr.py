#!/usr/bin/env python3
"""Zone transfer benchmark: Tern beside Knot DNS and NSD, on the TLD-like zone.

  xfr.py [--delegations 1000000] [--rounds 3] [--only out,in,change] [--tern PATH]

* out: each server as primary (pinned to CPU 1) sends the zone by AXFR (TSIG-signed) to
  a client on CPU 0 that only reads the messages and counts their records (no parsing,
  so it is not the bottleneck: its CPU is shown). Wall time from the query to the last
  record, and the server's CPU time for it.
* in: Knot DNS is the primary (CPU 0), warmed by one transfer to the counting client;
  each secondary (CPU 1) starts empty and is timed from its start until it answers the
  zone's serial; its CPU time and peak memory (the high-water mark of its resident set,
  summed over its processes) are reported.
* change: Tern primary and Tern secondary, both holding the zone; one record is changed
  on the primary (edit, SIGHUP). Timed from the moment the primary answers the new
  serial (published) until the secondary does (NOTIFY, SOA query, IXFR, publish),
  polling both every 0.5 ms at nice 19 (elsewhere every 5 ms, not to take CPU from the
  server).

Rounds are interleaved (every server once per round); medians are printed as Markdown
tables for docs/benchmarks.md.
"""

import argparse
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "interop"))

import dns.message  # noqa: E402
import dns.query  # noqa: E402
import dns.tsigkeyring  # noqa: E402

import peers  # noqa: E402
import servers  # noqa: E402

ORIGIN = "tld."
KEYRING = dns.tsigkeyring.from_text({servers.KEY: ("hmac-sha256", servers.SECRET)})
SERVER_CPU, CLIENT_CPU = 1, 0


def zone_file(work, delegations):
    path = os.path.join(work, f"tld-{delegations}.zone")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "genzone.py"), "zone", "--delegations",
                        str(delegations), "--origin", ORIGIN, "--out", path], check=True)
    return path


def count_records(path):
    """Records in the zone file (one per line that is not a directive or comment), +1 for
    the closing SOA of a transfer."""
    n = 0
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith(("$", ";")):
                n += 1
    return n + 1


def fresh(work):
    """An empty work directory (a secondary must not find a copy kept by an earlier run)."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return work


def argv_for(kind, port, work, zone, tern_bin, secondary_of=None):
    fresh(work)
    entry = {"origin": ORIGIN, "primary": ("127.0.0.1", secondary_of)} if secondary_of else {"origin": ORIGIN, "file": zone}
    if kind == "tern":
        return servers.tern(port, work, tern_bin, [entry])
    return {"knot": servers.knot, "nsd": servers.nsd, "bind": servers.bind}[kind](port, work, [entry])


def launch(kind, port, work, argv, cpu):
    os.makedirs(work, exist_ok=True)
    return peers.Server(kind, [peers.Zone(ORIGIN, "")], port, work, argv, cpu)


def wait_serial(port, serial=None, timeout=600, every=0.005):
    """Polls `port` for the zone's SOA every `every` seconds (a tighter loop would take
    CPU from the server it watches) until it answers `serial` (any, when None)."""
    query = dns.message.make_query(ORIGIN, "SOA")
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.002)
        wire = query.to_wire()
        while time.monotonic() < deadline:
            try:
                sock.sendto(wire, ("127.0.0.1", port))
                data, _ = sock.recvfrom(4096)
                answer = dns.message.from_wire(data)
                if answer.rcode() == 0 and answer.answer:
                    got = answer.answer[0][0].serial
                    if serial is None or got == serial:
                        return got
            except (OSError, Exception):
                pass
            time.sleep(every)
    raise RuntimeError(f"port {port}: serial {serial} not served within {timeout}s")


def axfr_count(port, expected, tls=None, hostname=None):
    """Reads an AXFR (TSIG-signed request) until `expected` answer records have come;
    returns (seconds, bytes, client CPU seconds). With `tls` (an `ssl.SSLContext`) the
    transfer is over TLS (RFC 9103) to a server certified for `hostname`, its handshake
    timed with it."""
    query = dns.message.make_query(ORIGIN, "AXFR")
    query.use_tsig(KEYRING, keyname=servers.KEY)
    wire = query.to_wire()
    cpu0 = time.process_time()
    started = time.monotonic()
    with _connect(port, tls, hostname) as sock:
        sock.sendall(struct.pack("!H", len(wire)) + wire)
        buf = bytearray(65535 + 2)
        view = memoryview(buf)
        records, total = 0, 0
        while records < expected:
            got = _recv_exact(sock, view, 2)
            length = struct.unpack("!H", got)[0]
            body = _recv_exact(sock, view[2:], length)
            records += struct.unpack("!H", body[6:8])[0]
            total += length
    return time.monotonic() - started, total, time.process_time() - cpu0


def _connect(port, tls, hostname):
    sock = socket.create_connection(("127.0.0.1", port))
    return tls.wrap_socket(sock, server_hostname=hostname) if tls else sock


def _recv_exact(sock, view, n):
    got = 0
    while got < n:
        k = sock.recv_into(view[got:n])
        if k == 0:
            raise RuntimeError("connection closed early")
        got += k
    return bytes(view[:n])


def pin(cpu):
    os.sched_setaffinity(0, {cpu})


def bench_out(args, work, zone, kinds):
    expected = count_records(zone)
    running = {}
    for kind in kinds:
        port = peers.free_port()
        w = os.path.join(work, f"out-{kind}")
        running[kind] = launch(kind, port, w, argv_for(kind, port, w, zone, args.tern), SERVER_CPU)
    try:
        for server in running.values():
            wait_serial(server.port)
            server.keep_on_cpu()
        results = {k: [] for k in kinds}
        for _ in range(args.rounds):
            for kind, server in running.items():
                cpu_before = server.cpu_seconds()
                seconds, size, client_cpu = axfr_count(server.port, expected)
                time.sleep(0.2)  # let the server finish its bookkeeping
                results[kind].append((seconds, server.cpu_seconds() - cpu_before, client_cpu, size))
        return results
    finally:
        for server in running.values():
            server.stop()


def peak_kb(server):
    total = 0
    for pid in server.pids():
        try:
            with open(f"/proc/{pid}/status") as f:
                m = re.search(r"VmHWM:\s+(\d+)", f.read())
                total += int(m.group(1)) if m else 0
        except OSError:
            pass
    return total


def bench_in(args, work, zone, kinds):
    primary_port = peers.free_port()
    pw = os.path.join(work, "in-primary")
    primary = launch("knot", primary_port, pw, argv_for("knot", primary_port, pw, zone, args.tern), CLIENT_CPU)
    serial = wait_serial(primary_port)
    results = {k: [] for k in kinds}
    try:
        # One transfer first, read by the counting client: Knot DNS's first AXFR after
        # its start is slower, and it would fall on whichever secondary goes first.
        axfr_count(primary_port, count_records(zone))
        for r in range(args.rounds):
            for kind in kinds:
                port = peers.free_port()
                w = os.path.join(work, f"in-{kind}-{r}")
                server = launch(kind, port, w, argv_for(kind, port, w, zone, args.tern, primary_port), SERVER_CPU)
                try:
                    wait_serial(port, serial)
                    seconds = time.monotonic() - server.started
                    results[kind].append((seconds, server.cpu_seconds(), peak_kb(server)))
                finally:
                    server.stop()
    finally:
        primary.stop()
    return results


def bench_change(args, work, zone):
    """Tern → Tern: one record changed on the primary, until the secondary serves it."""
    primary_port, secondary_port = peers.free_port(), peers.free_port()
    own = os.path.join(work, "change-zone")
    os.makedirs(own, exist_ok=True)
    path = os.path.join(own, "tld.zone")
    with open(zone) as src, open(path, "w") as dst:
        dst.write(src.read())
    pw, sw = fresh(os.path.join(work, "change-primary")), fresh(os.path.join(work, "change-secondary"))
    entry = {"origin": ORIGIN, "file": path, "notify": [("127.0.0.1", secondary_port)]}
    primary = launch("tern", primary_port, pw, servers.tern(primary_port, pw, args.tern, [entry]), SERVER_CPU)
    secondary = None
    results = []
    try:
        serial = wait_serial(primary_port)
        sec_entry = {"origin": ORIGIN, "primary": ("127.0.0.1", primary_port)}
        secondary = launch("tern", secondary_port, sw, servers.tern(secondary_port, sw, args.tern, [sec_entry]), CLIENT_CPU)
        wait_serial(secondary_port, serial)
        # From here on the poller, a measuring tool, yields to both servers (the servers
        # run their control planes at nice 10, which a poller at nice 0 sharing their
        # CPU would slow down ten times over); the servers are started already. The nice
        # value stays with the process: `main` runs this phase last.
        os.nice(19)
        time.sleep(5)  # the secondary writes its copy to disk after the first transfer
        for r in range(args.rounds):
            serial += 1
            with open(path) as f:
                text = f.read()
            text = re.sub(r"(SOA\s+\S+\s+\S+\s+)(\d+)", lambda m: m.group(1) + str(serial), text, count=1)
            with open(path, "w") as f:
                f.write(text + f"change{r} 300 IN A 192.0.2.{r % 250 + 1}\n")
            os.kill(primary.proc.pid, signal.SIGHUP)
            wait_serial(primary_port, serial, every=0.0005)
            published = time.monotonic()
            wait_serial(secondary_port, serial, timeout=60, every=0.0005)
            results.append(time.monotonic() - published)
            time.sleep(8)  # the primary's diff and the secondary's disk copy settle
    finally:
        primary.stop()
        if secondary:
            secondary.stop()
    return results


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delegations", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="out,in,change")
    parser.add_argument("--tern", default=peers.default_ternd(REPO))
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "tern-xfr-bench"))
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    pin(CLIENT_CPU)
    zone = zone_file(args.work, args.delegations)
    print(f"zone: {args.delegations} delegations, {count_records(zone) - 1} records ({zone})")
    kinds = ["tern", "knot", "nsd"]
    if "out" in args.only:
        out = bench_out(args, args.work, zone, kinds)
        print("\n### AXFR out (server on CPU 1, reading client on CPU 0), medians of", args.rounds)
        print("| primary | wall s | server CPU s | client CPU s | MB sent |\n|---|---|---|---|---|")
        for kind, rows in out.items():
            print(f"| {kind} | {median([r[0] for r in rows]):.2f} | {median([r[1] for r in rows]):.2f} | "
                  f"{median([r[2] for r in rows]):.2f} | {median([r[3] for r in rows]) / 1e6:.1f} |")
    if "in" in args.only:
        results = bench_in(args, args.work, zone, kinds)
        print("\n### AXFR in from Knot DNS (secondary on CPU 1), medians of", args.rounds)
        print("| secondary | start to serving s | rounds s | CPU s | peak RSS MB |\n|---|---|---|---|---|")
        for kind, rows in results.items():
            rounds = ", ".join(f"{r[0]:.2f}" for r in rows)
            print(f"| {kind} | {median([r[0] for r in rows]):.2f} | {rounds} | {median([r[1] for r in rows]):.2f} | "
                  f"{median([r[2] for r in rows]) / 1024:.0f} |")
        best = min((k for k in results if k != "tern"), key=lambda k: median([r[0] for r in results[k]]))
        ratios = [t[0] / b[0] for t, b in zip(results["tern"], results[best])]
        print(f"\nTern ÷ {best} (the best peer), round by round: "
              + ", ".join(f"{x:.2f}" for x in ratios) + f"; of the medians "
              f"{median([r[0] for r in results['tern']]) / median([r[0] for r in results[best]]):.2f}")
    if "change" in args.only:
        times = bench_change(args, args.work, zone)
        print("\n### One-record change, Tern → Tern (publish on the primary to served by the secondary)")
        print(f"rounds: {', '.join(f'{t * 1000:.1f}' for t in times)} ms; median {median(times) * 1000:.1f} ms")
    print(f"\nclient rusage: {resource.getrusage(resource.RUSAGE_SELF).ru_utime:.1f} s user")


if __name__ == "__main__":
    main()
