#!/usr/bin/env python3
"""Seeded benchmark data: a TLD-like zone and a query mix for it.

  genzone.py zone    --delegations N --origin tld. --out ZONEFILE [--names NAMESFILE]
  genzone.py queries --names NAMESFILE --origin tld. --count C --out QUERYFILE [--nx 0.4]
  genzone.py hosting --zones N --out DIR

`hosting` writes N small customer zones, one file each (DIR/<origin>zone) and their
origins, one per line, to DIR/zones.txt: the other shape an authoritative server meets,
many zones of a dozen records (SOA, two NS at the hoster, addresses, MX, TXT, a CNAME,
SRV, a wildcard, CAA).

The zone models a top-level domain: an apex with three in-zone name servers, then N
delegations with random 4-14 character labels. 20% of them have two in-bailiwick name
servers with glue (one A, one AAAA), the others two name servers at one of 1,000 shared
hosting providers outside the zone; 30% have a DS record.

The query mix models TLD traffic: 40% names that do not exist (A/AAAA/MX), 5% names in
a TLD that is not served (REFUSED), the rest existing delegations or names below them
(60/40) asking A, AAAA, NS, DS, MX, TXT or SOA — nearly all of them referrals.

The same arguments always write the same bytes.
"""

import argparse
import os
import random

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
HIT_TYPES = ("A", "AAAA", "NS", "DS", "MX", "TXT", "SOA")
MISS_TYPES = ("A", "AAAA", "MX")


def random_label(rng):
    return "".join(rng.choices(ALPHABET, k=rng.randint(4, 14)))


def unique_labels(rng, count):
    """`count` distinct random labels, in generation order."""
    seen, labels = set(), []
    while len(labels) < count:
        label = random_label(rng)
        if label not in seen:
            seen.add(label)
            labels.append(label)
    return labels


def delegation_lines(rng, index, owner):
    """The records of one delegation: NS (and glue), sometimes DS."""
    if rng.random() < 0.2:
        lines = [f"{owner} 86400 IN NS ns1.{owner}", f"{owner} 86400 IN NS ns2.{owner}",
                 f"ns1.{owner} 86400 IN A 198.51.{index % 256}.{index // 256 % 256}",
                 f"ns2.{owner} 86400 IN AAAA 2001:db8:{index % 65536:x}::53"]
    else:
        provider = rng.randrange(1000)
        lines = [f"{owner} 86400 IN NS ns1.provider{provider}.net.",
                 f"{owner} 86400 IN NS ns2.provider{provider}.net."]
    if rng.random() < 0.3:
        digest = "%064X" % rng.getrandbits(256)
        lines.append(f"{owner} 86400 IN DS {rng.randint(1, 65535)} 13 2 {digest}")
    return lines


def write_zone(args):
    rng = random.Random(args.seed)
    origin = args.origin
    owners = [f"{label}.{origin}" for label in unique_labels(rng, args.delegations)]
    with open(args.out, "w") as out:
        out.write(f"$ORIGIN {origin}\n$TTL 86400\n")
        out.write(f"{origin} 86400 IN SOA ns1.{origin} hostmaster.{origin} "
                  "2026112201 1800 900 604800 3600\n")
        for i in (1, 2, 3):
            out.write(f"{origin} 172800 IN NS ns{i}.{origin}\n"
                      f"ns{i}.{origin} 172800 IN A 192.0.2.{i}\n"
                      f"ns{i}.{origin} 172800 IN AAAA 2001:db8::{i}\n")
        for index, owner in enumerate(owners):
            out.write("\n".join(delegation_lines(rng, index, owner)) + "\n")
    if args.names:
        with open(args.names, "w") as out:
            out.write("\n".join(owners) + "\n")


def write_queries(args):
    rng = random.Random(args.seed)
    with open(args.names) as f:
        owners = [line.strip() for line in f if line.strip()]
    with open(args.out, "w") as out:
        for _ in range(args.count):
            draw = rng.random()
            if draw < args.nx:
                line = f"{random_label(rng)}.{args.origin} {rng.choice(MISS_TYPES)}"
            elif draw < args.nx + 0.05:
                line = f"{random_label(rng)}.not-served. A"
            else:
                owner = rng.choice(owners)
                name = owner if rng.random() < 0.6 else f"www.{owner}"
                line = f"{name} {rng.choice(HIT_TYPES)}"
            out.write(line + "\n")


def hosting_zone(rng, index, origin):
    """The text of one small customer zone."""
    host = index % 250 + 1
    return (f"$ORIGIN {origin}\n$TTL 3600\n"
            f"@ IN SOA ns1.hoster.example. hostmaster.hoster.example. "
            f"2026112201 7200 3600 1209600 300\n"
            "@ IN NS ns1.hoster.example.\n@ IN NS ns2.hoster.example.\n"
            f"@ IN A 203.0.113.{host}\n@ IN AAAA 2001:db8:{index % 65536:x}::1\n"
            "@ IN MX 10 mail\n@ IN MX 20 mx2\n"
            f"mail IN A 198.51.100.{rng.randint(1, 254)}\n"
            f"mx2 IN A 198.51.100.{rng.randint(1, 254)}\n"
            '@ IN TXT "v=spf1 mx -all"\nwww IN CNAME @\n'
            f"_sip._tcp IN SRV 10 60 5060 sip\nsip IN A 192.0.2.{host}\n"
            f"*.dyn IN A 192.0.2.{rng.randint(1, 254)}\n"
            '@ IN CAA 0 issue "ca.example"\n')


def write_hosting(args):
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    origins = [f"{label}{i}.example." for i, label in
               enumerate(unique_labels(rng, args.zones))]
    for index, origin in enumerate(origins):
        with open(os.path.join(args.out, f"{origin}zone"), "w") as out:
            out.write(hosting_zone(rng, index, origin))
    with open(os.path.join(args.out, "zones.txt"), "w") as out:
        out.write("\n".join(origins) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    zone = sub.add_parser("zone")
    zone.add_argument("--delegations", type=int, default=100_000)
    zone.add_argument("--origin", default="tld.")
    zone.add_argument("--out", required=True)
    zone.add_argument("--names", help="also write the delegation names here")
    zone.add_argument("--seed", type=int, default=1)
    queries = sub.add_parser("queries")
    queries.add_argument("--names", required=True)
    queries.add_argument("--origin", default="tld.")
    queries.add_argument("--count", type=int, default=200_000)
    queries.add_argument("--nx", type=float, default=0.4)
    queries.add_argument("--out", required=True)
    queries.add_argument("--seed", type=int, default=3)
    hosting = sub.add_parser("hosting")
    hosting.add_argument("--zones", type=int, default=100_000)
    hosting.add_argument("--out", required=True)
    hosting.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    {"zone": write_zone, "queries": write_queries, "hosting": write_hosting}[args.command](args)


if __name__ == "__main__":
    main()
