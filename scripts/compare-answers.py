#!/usr/bin/env python3
"""Byte-for-byte comparison of two `ternd` builds' UDP answers.

Both builds serve ZONE (origin ORIGIN) on loopback; every query of the query files
(`name type` per line, as bench/ generates them) is sent to each with DO=1 and a
1232-byte buffer, DO=1 and a 512-byte buffer, and DO=0, and the raw answers are
compared. For changes that must not change a byte of any answer (how records are
written, not what is answered). Needs dnspython and dig.

    scripts/compare-answers.py OLD_TERND NEW_TERND ZONE QUERIES... [--origin tld.]
Exit status: 0 when every answer is the same, 1 otherwise.
"""

import argparse
import socket
import subprocess
import sys
import time

import dns.message

MODES = ((True, 1232), (True, 512), (False, 1232))


def start(binary, zone, origin, port):
    argv = [binary, "--listen", f"127.0.0.1:{port}", "--workers", "1",
            "--zone", f"{origin}={zone}"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if proc.poll() is not None:  # e.g. the port was taken: do not ask someone else
            raise SystemExit(f"{binary} exited with status {proc.returncode}")
        ready = subprocess.run(["dig", "+short", "+tries=1", "+time=1", "-p", str(port),
                                "@127.0.0.1", origin, "SOA"], capture_output=True, text=True)
        if ready.stdout.strip() and proc.poll() is None:
            return proc
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{binary} did not answer on port {port}")


def free_port(taken=()):
    """A port free for both UDP and TCP on 127.0.0.1, not in `taken`."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
                socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            try:
                tcp.bind(("127.0.0.1", port))
            except OSError:
                continue
            if port not in taken:
                return port


def queries(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2:
                    yield parts[0], parts[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("zone")
    p.add_argument("queries", nargs="+")
    p.add_argument("--origin", default="tld.")
    args = p.parse_args()
    first = free_port()
    ports = [first, free_port(taken=(first,))]
    servers = [start(b, args.zone, args.origin, port) for b, port in zip((args.old, args.new), ports)]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2)
    sent = differ = 0
    try:
        for name, rtype in queries(args.queries):
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
    finally:
        for server in servers:
            server.kill()
    print(f"{sent} queries, {differ} answers differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
