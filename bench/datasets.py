"""Benchmark inputs, made once and cached under the work directory.

* `prepare(size, work)`: the TLD-like zone with `size` delegations (`genzone.py`), its
  signed copy (NSEC3, opt-out, no salt, 0 iterations, ECDSA P-256, signatures valid until
  2045 — `dnssec-signzone`, which takes minutes for a million delegations, hence the
  cache), the query mix for dnsperf and the same queries in TCP framing for tcp-fresh.
  Cache directories are named by every parameter that shapes the files.
* `prepare_unsigned(size, work)`: the zone and the query mix alone (the dynamic-update
  benchmark needs no signed copy).
* `signed_zone(dataset, denial)`: the same zone signed with another proof of
  non-existence (`DENIALS`), for the conformance suite's at-scale check; cached beside it.
* `build_tools(dir)`: compiles the C load tools and the floor responder.
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import dns.message

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN = "tld."
ZONE_SEED, QUERY_SEED, QUERY_COUNT, NX_SHARE = 1, 3, 200_000, 0.4
TCP_QUERY_COUNT = 20_000

# Proofs of non-existence a signed copy can use: dnssec-signzone options. The harness
# serves NSEC3 opt-out with no salt and 0 iterations, as TLDs do (RFC 9276 §3.1); the
# others are for conformance: plain NSEC (RFC 4034), and NSEC3 without opt-out, with the
# salt and extra iterations older signers still publish.
DENIALS = {
    "nsec3-optout": ["-3", "-", "-H", "0", "-A"],
    "nsec": [],
    "nsec3-salted": ["-3", "AABBCCDD", "-H", "5"],
}


@dataclass(frozen=True)
class Dataset:
    size: int
    origin: str
    zone: str
    signed: str
    queries: str
    queries_tcp: str


def _run(argv, **kw):
    subprocess.run(argv, check=True, timeout=3600, **kw)


def _genzone(*args):
    _run([sys.executable, os.path.join(HERE, "genzone.py"), *map(str, args)])


def _publish(tmp, final):
    """Moves a finished file into place, so an interrupted run never leaves half a file."""
    os.replace(tmp, final)


def _sign(zone, out, origin, denial="nsec3-optout"):
    keys = tempfile.mkdtemp(prefix="bench-keys-")
    try:
        for extra in ([], ["-f", "KSK"]):
            _run(["dnssec-keygen", "-q", "-K", keys, "-a", "ECDSAP256SHA256", "-L", "3600",
                  "-n", "ZONE", *extra, origin], stdout=subprocess.DEVNULL)
        _run(["dnssec-signzone", "-q", "-n", str(os.cpu_count() or 1), "-K", keys, "-d", keys,
              "-S",
              "-o", origin, "-s", "20260101000000", "-e", "20450101000000",
              *DENIALS[denial], "-O", "full", "-f", out + ".tmp", zone],
             stdout=subprocess.DEVNULL)
        _publish(out + ".tmp", out)
    finally:
        shutil.rmtree(keys, ignore_errors=True)


def _tcp_queries(text_path, out, count):
    """The first `count` queries of a dnsperf file, as 2-byte-length-framed messages."""
    with open(text_path) as src, open(out + ".tmp", "wb") as dst:
        for i, line in enumerate(src):
            if i >= count:
                break
            name, qtype = line.split()
            wire = dns.message.make_query(name, qtype, flags=0, id=i & 0xFFFF).to_wire()
            dst.write(struct.pack("!H", len(wire)) + wire)
    _publish(out + ".tmp", out)


def prepare(size, work):
    """The cached Dataset for `size` delegations, made if missing."""
    zone, queries = prepare_unsigned(size, work)
    signed = os.path.join(os.path.dirname(zone), "zone.nsec3-optout.signed")
    queries_tcp = tcp_queries(queries)
    if not os.path.exists(signed):
        print(f"signing {zone} (NSEC3 opt-out; cached afterwards)", flush=True)
        _sign(zone, signed, ORIGIN)
    return Dataset(size, ORIGIN, zone, signed, queries, queries_tcp)


def tcp_queries(queries):
    """The path of the first queries of the dnsperf file `queries` in TCP framing (for
    tcp-fresh and tls_fresh), made if missing."""
    queries_tcp = queries.replace(".txt", f".tcp{TCP_QUERY_COUNT}.bin")
    if not os.path.exists(queries_tcp):
        _tcp_queries(queries, queries_tcp, TCP_QUERY_COUNT)
    return queries_tcp


def prepare_unsigned(size, work):
    """The cached zone and dnsperf query mix for `size` delegations, made if missing
    (no signed copy): (zone path, queries path)."""
    base = os.path.join(work, f"tld-{size}-z{ZONE_SEED}")
    os.makedirs(base, exist_ok=True)
    zone, names = os.path.join(base, "zone.txt"), os.path.join(base, "names.txt")
    queries = os.path.join(base, f"queries-q{QUERY_SEED}-n{QUERY_COUNT}-nx{NX_SHARE}.txt")
    if not os.path.exists(zone):
        print(f"generating {zone}", flush=True)
        _genzone("zone", "--delegations", size, "--origin", ORIGIN, "--seed", ZONE_SEED,
                 "--out", zone + ".tmp", "--names", names)
        _publish(zone + ".tmp", zone)
    if not os.path.exists(queries):
        _genzone("queries", "--names", names, "--origin", ORIGIN, "--seed", QUERY_SEED,
                 "--count", QUERY_COUNT, "--nx", NX_SHARE, "--out", queries + ".tmp")
        _publish(queries + ".tmp", queries)
    return zone, queries


def signed_zone(dataset, denial):
    """The path of `dataset`'s zone signed with `denial` (a `DENIALS` key), made if
    missing (`prepare` names its NSEC3 opt-out copy, `dataset.signed`, the same way)."""
    signed = os.path.join(os.path.dirname(dataset.zone), f"zone.{denial}.signed")
    if not os.path.exists(signed):
        print(f"signing {dataset.zone} ({denial}; cached afterwards)", flush=True)
        _sign(dataset.zone, signed, dataset.origin, denial)
    return signed


def build_tools(out_dir):
    """Compiles tools/*.c into `out_dir` when the source is newer; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    tools = {}
    for name in ("udp-floor", "tcp-fresh", "udp-flood", "qload"):
        src, binary = os.path.join(HERE, "tools", f"{name}.c"), os.path.join(out_dir, name)
        if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(src):
            _run(["cc", "-O2", "-Wall", "-Wextra", "-o", binary, src])
        tools[name] = binary
    return tools


if __name__ == "__main__":
    # python3 bench/datasets.py [SIZE] [WORK]: makes (or finds) the data set and names its
    # files; the engine's criterion bench reads the 100k one from bench/out.
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    work = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(HERE, "out")
    for field, path in prepare(size, work).__dict__.items():
        print(f"{field}: {path}")
