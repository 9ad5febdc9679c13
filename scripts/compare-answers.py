#!/usr/bin/env python3
"""Byte-for-byte comparison of two `ternd` builds' UDP answers.

Both builds serve ZONE (origin ORIGIN) on loopback; every query of the query files
(`name type` per line, as bench/ generates them) is sent to each with DO=1 and a
1232-byte buffer, DO=1 and a 512-byte buffer, and DO=0, and the raw answers are
compared. For changes that must not change a byte of any answer (how records are
written, not what is answered). Needs dnspython; servers are started with bench/peers.py.

    scripts/compare-answers.py OLD_TERND NEW_TERND ZONE QUERIES... [--origin tld.]
Exit status: 0 when every answer is the same, 1 otherwise.
"""

import argparse
import os
import socket
import sys
import tempfile

import dns.message

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import peers  # noqa: E402  (starts servers and picks ports as the peer benchmark does)

MODES = ((True, 1232), (True, 512), (False, 1232))


def start(binary, zone, origin, work):
    """Starts `binary` on a free port and waits until it answers (raises if it exits)."""
    server = peers.start("tern", [peers.Zone(origin, zone)], peers.free_port(), work,
                         tern_bin=binary)
    try:
        server.wait_answering()
    except RuntimeError:
        server.stop()
        raise
    return server


def queries(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    yield parts[0], parts[1]


def compare(ports, paths):
    """Asks both servers every query in every mode; returns (sent, how many differ)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2)
    sent = differ = 0
    for name, rtype in queries(paths):
        for dnssec, size in MODES:
            q = dns.message.make_query(name, rtype, want_dnssec=dnssec, use_edns=0,
                                       payload=size)
            q.id = sent & 0xFFFF
            answers = []
            for port in ports:
                sock.sendto(q.to_wire(), ("127.0.0.1", port))
                answers.append(sock.recv(65535))
            sent += 1
            if answers[0] != answers[1]:
                differ += 1
                if differ <= 5:
                    print(f"differs: {name} {rtype} DO={int(dnssec)} buffer {size}")
    return sent, differ


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("zone")
    p.add_argument("queries", nargs="+")
    p.add_argument("--origin", default="tld.")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="compare-answers-")
    servers = []
    try:
        # One after the other: the first server holds its port when the second picks one.
        for label, binary in (("old", args.old), ("new", args.new)):
            servers.append(start(binary, args.zone, args.origin, os.path.join(work, label)))
        sent, differ = compare([server.port for server in servers], args.queries)
    finally:
        for server in servers:
            server.stop()
    print(f"{sent} queries, {differ} answers differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
