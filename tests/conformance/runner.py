#!/usr/bin/env python3
"""Conformance runner: the same queries to Knot DNS, NSD and Tern, answers compared.

Starts every server (Tern, Knot DNS, NSD, and NSD with minimal responses), each on its
own loopback port serving the zones of `queries.ZONES`, sends each query of
`queries.generate()` to each server (in parallel across servers), normalizes the
answers (`normalize.py`) and judges them (`report.py`).

Exit status: 0 when Tern matched a peer or the allowlist on every query (or Tern is not
built yet and the peers answered), 1 when Tern has unexplained differences, 2 when a peer
cannot be started or does not answer.

  runner.py [--tern PATH] [--servers tern,knot,nsd] [--filter GLOB] [--out DIR]
"""

import argparse
import fnmatch
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import peers  # noqa: E402
import queries as query_set  # noqa: E402
from client import ask_all  # noqa: E402
from normalize import normalize  # noqa: E402
from report import Allowlist, Verdicts  # noqa: E402

# The reference servers. NSD runs twice: as configured by default (NS and glue added to
# positive answers) and with `minimal-responses: yes` — both are NSD's behaviour, and the
# RFCs leave those records optional (RFC 2181 §9, RFC 1034 §4.3.2 step 6).
PEERS = ("knot", "nsd", "nsd-minimal")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tern", default=None,
                   help="ternd binary (default: $TERND or <cargo target>/release/ternd)")
    p.add_argument("--servers", default="tern,knot,nsd,nsd-minimal",
                   help="comma-separated servers to run (tern, knot, nsd, nsd-minimal)")
    p.add_argument("--filter", default="*", help="only queries whose key matches this glob")
    p.add_argument("--out", default=os.path.join(HERE, "out"), help="report directory")
    p.add_argument("--allowlist", default=os.path.join(HERE, "allowlist.toml"))
    p.add_argument("--exact-case", action="store_true",
                   help="compare owner names in sections case-sensitively too")
    p.add_argument("--keep", action="store_true", help="keep server work directories")
    return p.parse_args()


def zones():
    return [peers.Zone(origin, os.path.join(query_set.ZONE_DIR, fname))
            for origin, fname in query_set.ZONES]


def start_servers(kinds, tern_bin, work):
    """Starts each server; returns ({kind: Server}, {kind: reason it was skipped})."""
    running, skipped = {}, {}
    for kind in kinds:
        reason = peers.missing_reason(kind, tern_bin=tern_bin)
        if reason:
            skipped[kind] = reason
            continue
        server = peers.start(kind, zones(), peers.free_port(), os.path.join(work, kind),
                             tern_bin=tern_bin)
        running[kind] = server
        try:
            took = server.wait_answering(timeout=60)
            print(f"{kind}: answering on port {server.port} after {took:.2f}s")
        except RuntimeError as err:
            skipped[kind] = f"did not start: {err}"
            server.stop()
            del running[kind]
    return running, skipped


def collect(running, chosen, exact_case):
    """{kind: [normalized answer per query]}, asking the servers in parallel."""
    started = time.monotonic()
    with ThreadPoolExecutor(len(running)) as pool:
        raw = dict(zip(running, pool.map(lambda s: ask_all(s.port, chosen),
                                         running.values())))
    print(f"asked {len(chosen)} queries of each server in {time.monotonic() - started:.1f}s")
    return {kind: [normalize(r, exact_case) for r in answers] for kind, answers in raw.items()}


def peers_answer(results, chosen):
    """Problems showing that a peer does not really serve the zones (empty if fine)."""
    problems = []
    for kind in PEERS:
        if kind not in results:
            continue
        answered = sum(r["result"] == "answer" for r in results[kind])
        if answered < 0.9 * len(chosen):
            problems.append(f"{kind} answered only {answered} of {len(chosen)} queries")
        soa = [r for q, r in zip(chosen, results[kind]) if q.key == "rfc8906/dns"]
        if soa and not (soa[0].get("rcode") == "NOERROR" and "aa" in soa[0].get("flags", "")):
            problems.append(f"{kind} gave no authoritative SOA for example.com.: {soa[0]}")
    return problems


def main():
    args = parse_args()
    tern_bin = args.tern or peers.default_ternd(REPO, "release")
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    chosen = [q for q in query_set.generate() if fnmatch.fnmatchcase(q.key, args.filter)]
    work = tempfile.mkdtemp(prefix="tern-conformance-")
    running, skipped = start_servers(kinds, tern_bin, work)
    for kind, reason in skipped.items():
        print(f"{kind}: SKIPPED — {reason}")
    try:
        if not running or not chosen:
            print("nothing to run")
            return 2
        results = collect(running, chosen, args.exact_case)
    finally:
        for server in running.values():
            server.stop()
    present_peers = [k for k in PEERS if k in results]
    missing_peers = [k for k in PEERS if k in kinds and k not in results]
    tern = "tern" if "tern" in results else None
    verdicts = Verdicts(chosen, results, present_peers, tern, Allowlist(args.allowlist))
    verdicts.write(args.out)
    print(verdicts.summary())
    print(f"report: {os.path.join(args.out, 'report.md')}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    problems = peers_answer(results, chosen)
    for problem in problems:
        print(f"ERROR: {problem}")
    if missing_peers or problems:
        print(f"ERROR: peers not usable: {', '.join(missing_peers) or 'see above'}")
        return 2
    if verdicts.failed():
        print(f"FAILED: {len(verdicts.tern_fails)} queries where Tern matches neither peer "
              "and no allowlist entry explains it")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
