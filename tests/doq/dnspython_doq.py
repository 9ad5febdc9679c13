#!/usr/bin/env python3
"""dnspython over DNS over QUIC (RFC 9250, through aioquic) against a running Tern.

Run by crates/server/tests/doq.rs, which starts ternd with DoQ, a self-signed
certificate and the zone example.com (www A 192.0.2.80, and host0..hostN-1).
Checks, each printed as it passes:
  * query ok: `www.example.com. A` with dns.query.quic: ID 0 on the wire, NOERROR,
    the address, the certificate verified for the name `localhost`;
  * axfr ok: an AXFR of example.com on one DoQ stream (RFC 9250 §4.2) with
    dnspython's QUIC stream: every message read from the stream until the closing
    SOA, the whole zone there (dnspython's own transfer functions speak TCP only).

  dnspython_doq.py --server IP:PORT --ca CERT.pem --hosts N
"""

import argparse
import sys

import dns.message
import dns.query
import dns.quic
import dns.rcode
import dns.rdatatype


def fail(why):
    print(f"FAILED: {why}")
    sys.exit(1)


def query(ip, port, ca):
    q = dns.message.make_query("www.example.com.", "A")
    r = dns.query.quic(q, ip, port=port, timeout=5, verify=ca, hostname="localhost")
    if r.id != 0 or r.rcode() != dns.rcode.NOERROR:
        fail(f"query: id {r.id}, rcode {dns.rcode.to_text(r.rcode())}")
    addresses = [rr.address for rrset in r.answer for rr in rrset]
    if addresses != ["192.0.2.80"]:
        fail(f"query: answer {addresses}")
    print("query ok")


def axfr(ip, port, ca, hosts):
    q = dns.message.make_query("example.com.", "AXFR")
    q.id = 0
    records, messages = [], 0
    with dns.quic.SyncQuicManager(verify_mode=ca, server_name="localhost") as manager:
        connection = manager.connect(ip, port)
        with connection.make_stream(5) as stream:
            stream.send(q.to_wire(), True)
            while True:
                r = dns.message.from_wire(stream.receive(5))
                messages += 1
                if r.id != 0 or r.rcode() != dns.rcode.NOERROR:
                    fail(f"axfr: message {messages}: id {r.id}, rcode {r.rcode()}")
                for rrset in r.answer:
                    records.extend((rrset.name, rrset.rdtype, rr) for rr in rrset)
                soas = [t for _, t, _ in records if t == dns.rdatatype.SOA]
                if len(soas) == 2 or messages > 1000:
                    break
    types = [t for _, t, _ in records]
    if types[0] != dns.rdatatype.SOA or types[-1] != dns.rdatatype.SOA:
        fail("axfr: not framed by the SOA")
    names = {name.to_text() for name, t, _ in records if t == dns.rdatatype.A}
    wanted = {f"host{i}.example.com." for i in range(hosts)} | {"www.example.com.", "ns1.example.com."}
    if names != wanted:
        fail(f"axfr: {len(names)} names with A records, {len(wanted)} expected")
    print(f"axfr ok: {len(records)} records in {messages} messages")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--hosts", type=int, required=True)
    args = parser.parse_args()
    if not dns.quic.have_quic:
        fail("dnspython has no DNS over QUIC here: the aioquic package is missing "
             "(scripts/test-all.sh installs it)")
    ip, port = args.server.rsplit(":", 1)
    query(ip, int(port), args.ca)
    axfr(ip, int(port), args.ca, args.hosts)


if __name__ == "__main__":
    main()
