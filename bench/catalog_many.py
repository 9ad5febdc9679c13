#!/usr/bin/env python3
"""A catalog of many members against the same zones from the configuration file.

Issue #54 item 1: "a catalog of 1M members applied as fast as the same zones from the
configuration". A Tern primary (CPU `bench.CLIENT_CPU`) serves N small zones (one zone
file of relative names, 6 records, shared by all) and a catalog zone (RFC 9432, version
2) listing them, written as a file. Then a Tern secondary (CPU `bench.SERVER_CPU`, one
UDP and one TCP worker, a fresh storage directory) is started in turn as:

* `catalog`: one `[[zone]]`, the catalog, `catalog-role = "consumer"` (and
  `catalog-max-members` above N): each member is transferred from the primary;
* `config`: the same N zones as secondaries of the same primary, one `[[zone]]` each in
  the configuration file: each transferred the same way;
* `files` (the shape of `bench/many.py`): the same N zones as primaries, from the zone
  file: no transfer, for scale.

Each session is timed from the secondary's start until the SOA of every `--sample`th
member and of the last one gets an authoritative answer (`sample s`), then until every
member's does (`all s`: the members are asked in turn, those not answering again until
none is left; a pass over 100,000 takes some seconds, which this time includes); the
PSS is read then. Members still not answering after `--timeout`: must be 0.

    python3 bench/catalog_many.py [--zones 100000] [--arms catalog,config,files]
                                  [--rounds 1] [--ternd PATH] [--work DIR]

Prints a markdown table; exit status 1 if a session failed or missed zones.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import peers  # noqa: E402
import zone_add  # noqa: E402

MEMBER = zone_add.ZONE  # the same small zone as the zones added at run time
CATALOG = "catalog.example."
ARMS = ("catalog", "config", "files")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zones", type=int, default=100_000)
    p.add_argument("--arms", default=",".join(ARMS))
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--sample", type=int, default=1000, help="probe every Nth member")
    p.add_argument("--ternd", default=peers.default_ternd(REPO),
                   help="ternd binary (default: $TERND or <cargo target>/perf/ternd)")
    p.add_argument("--work", default=os.path.join(HERE, "out", "catalog-many"),
                   type=os.path.abspath)
    p.add_argument("--timeout", type=float, default=3600.0)
    return p.parse_args()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def members(count):
    return [f"m{i}.cat-member.example." for i in range(count)]


def catalog_zone(names):
    """The catalog as a zone file (RFC 9432 §4): version 2, one PTR per member under
    `zones`, each under a unique label."""
    lines = [f"$ORIGIN {CATALOG}",
             "@ 0 SOA invalid. invalid. 1 3600 600 2147483646 0",
             "@ 0 NS invalid.",
             'version 0 TXT "2"']
    lines += [f"h{i:x}.zones 0 PTR {name}" for i, name in enumerate(names)]
    return "\n".join(lines) + "\n"


def server_table(port, work):
    return f"""[server]
listen = ["127.0.0.1:{port}"]
storage = "{work}/storage"
udp-workers = 1
tcp-workers = 1
[log]
level = "warn"
"""


def primary_config(port, work, names):
    zones = "".join(f'[[zone]]\nname = "{n}"\nfile = "{work}/member.zone"\n' for n in names)
    return (server_table(port, work)
            + '[[acl]]\nid = "lo"\naddress = "127.0.0.0/8"\naction = "transfer"\n'
            + '[[template]]\nid = "default"\nacl = "lo"\n'
            + f'[[zone]]\nname = "{CATALOG}"\nfile = "{work}/catalog.zone"\n' + zones)


def secondary_config(arm, port, work, primary_port, names):
    text = server_table(port, work)
    remote = f'[[remote]]\nid = "p"\naddress = "127.0.0.1:{primary_port}"\n'
    if arm == "catalog":
        return (text + remote + '[[template]]\nid = "members"\n'
                + f'[[zone]]\nname = "{CATALOG}"\nprimary = "p"\ncatalog-role = "consumer"\n'
                + f'catalog-template = "members"\ncatalog-max-members = {len(names) + 1}\n')
    if arm == "config":
        return text + remote + "".join(
            f'[[zone]]\nname = "{n}"\nprimary = "p"\n' for n in names)
    return text + "".join(f'[[zone]]\nname = "{n}"\nfile = "{work}/member.zone"\n' for n in names)


def start(kind_work, port, conf, ternd, cpu, sample):
    os.makedirs(kind_work, exist_ok=True)
    path = os.path.join(kind_work, "ternd.toml")
    write(path, conf)
    return peers.Server("tern", sample, port, kind_work, [ternd, "--config", path], cpu)


def primary(args, names):
    work = os.path.join(args.work, "primary")
    subprocess.run(["rm", "-rf", work], check=False)
    os.makedirs(work)
    write(os.path.join(work, "member.zone"), MEMBER)
    write(os.path.join(work, "catalog.zone"), catalog_zone(names))
    port = peers.free_port()
    sample = [peers.Zone(n, "") for n in names[::args.sample] + names[-1:]]
    server = start(work, port, primary_config(port, work, names), args.ternd,
                   bench.CLIENT_CPU, sample + [peers.Zone(CATALOG, "")])
    load_s = server.wait_answering(timeout=args.timeout)
    print(f"primary: {len(names):,} zones and the catalog served in {load_s:.1f} s", flush=True)
    return server


def session(arm, args, names, primary_port, round_no):
    work = os.path.join(args.work, f"{arm}-{round_no}")
    subprocess.run(["rm", "-rf", work], check=False)
    os.makedirs(work)
    write(os.path.join(work, "member.zone"), MEMBER)
    port = peers.free_port()
    sample = [peers.Zone(n, "") for n in names[::args.sample] + names[-1:]]
    conf = secondary_config(arm, port, work, primary_port, names)
    server = start(work, port, conf, args.ternd, bench.SERVER_CPU, sample)
    try:
        load_s = server.wait_answering(timeout=args.timeout)
        missing = not_answering(port, names, server.started + args.timeout)
        record = {"arm": arm, "load_s": load_s, "all_s": time.monotonic() - server.started,
                  "pss_kb": server.pss_kb(), "missing": len(missing)}
    except RuntimeError as err:
        record = {"arm": arm, "error": str(err)[:500]}
    finally:
        server.stop()
    subprocess.run(["rm", "-rf", os.path.join(work, "storage")], check=False)
    return record


def not_answering(port, names, deadline):
    """Asks every one of `names` for its SOA, then those that did not answer again, until
    all do or `deadline` (monotonic) passes: those still not answering."""
    pending = names
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(0.2)
        while pending and time.monotonic() < deadline:
            pending = [n for n in pending if not peers._soa_ready(sock, port, n, False)]
            if pending:
                time.sleep(0.2)
    return pending


def render(records, arms, count):
    print(f"\n{count:,} members; medians over rounds\n")
    print("| secondary | sample s | all s | all × config | zones/s | PSS MiB | not answering |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    med = {}
    for arm in arms:
        ok = [r for r in records if r["arm"] == arm and "error" not in r]
        if ok:
            med[arm] = (statistics.median(r["load_s"] for r in ok),
                        statistics.median(r["all_s"] for r in ok),
                        statistics.median(r["pss_kb"] for r in ok) / 1024,
                        max(r["missing"] for r in ok))
    for arm in arms:
        if arm not in med:
            print(f"| {arm} | failed | | | | | |")
            continue
        load, whole, pss, missing = med[arm]
        ratio = f"{whole / med['config'][1]:.2f}" if "config" in med else "—"
        print(f"| {arm} | {load:.1f} | {whole:.1f} | {ratio} | {count / whole:,.0f} | "
              f"{pss:,.0f} | {missing} |")


def main():
    args = parse_args()
    arms = [a for a in args.arms.split(",") if a]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        sys.exit(f"unknown arms: {', '.join(unknown)} (known: {', '.join(ARMS)})")
    reason = peers.missing_reason("tern", tern_bin=args.ternd)
    if reason:
        sys.exit(reason)
    names = members(args.zones)
    source = primary(args, names)
    records = []
    try:
        for round_no in range(args.rounds):
            for arm in (arms if round_no % 2 == 0 else arms[::-1]):
                print(f"round {round_no + 1}: {arm}", flush=True)
                records.append(session(arm, args, names, source.port, round_no))
                r = records[-1]
                print(f"  {arm}: " + (f"FAILED: {r['error']}" if "error" in r else
                      f"sample {r['load_s']:.1f} s, all {r['all_s']:.1f} s, "
                      f"PSS {r['pss_kb'] / 1024:.0f} MiB, "
                      f"missing {r['missing']}"), flush=True)
    finally:
        source.stop()
    render(records, arms, len(names))
    bad = any("error" in r or r.get("missing") for r in records)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
