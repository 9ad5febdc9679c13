#!/usr/bin/env python3
"""Full-zone DNSSEC signing: Tern's signer library beside Knot DNS, in one run.

Two zones, generated once and cached under the work directory:

* `deleg`: the peer benchmark's 1M-delegation TLD (`genzone.py zone`, about 30% of the
  delegations with DS), signed with NSEC3 opt-out (no salt, 0 extra iterations);
* `data`: a zone of 1M names every one of which holds data (A at each, AAAA at 30%),
  signed with NSEC.

Each is signed with one CSK, ECDSAP256SHA256, on `--threads` threads, every process
pinned to `--cpus`, by turns (Tern, Knot DNS, per zone, per round), so a change in the
machine's speed reaches both:

* Tern: `crates/sign/examples/zone_file_sign` (the zone file loaded with Tern's parser,
  `sign_zone`, the snapshot to serve built): time to signed, signing CPU time, peak RSS
  and PSS once only the snapshot is kept; and aws-lc-rs alone signing the signed data
  of the zone's first `--raw` RRsets on as many threads at once (signatures per CPU
  second, and per core of wall time), once just before `sign_zone` and once just after
  the snapshot is built, so that both figures are taken across the same stretch of
  time.
* ternd (`--signers ternd`, not by default): the server signing the zone from a
  `[[policy]]` (CSK, the same algorithm and denial, as many signing threads as CPUs
  pinned), on a copy of the zone file (the server writes the signed zone back): the
  time from process start until the SOA is served with its RRSIG, its CPU time, and
  peak RSS and PSS `--settle` seconds after (what the server holds once it serves the
  signed zone; the server's build is `--tern`, default `<target>/perf/ternd`).
* Knot DNS: `knotd` with automatic signing (policy: CSK, the same algorithm and
  denial, `signing-threads` = threads): the time from process start until the SOA is
  served with its RRSIG (DO=1), the signing's start and end as its log tells them,
  peak RSS and PSS half a second after.

    python3 bench/sign.py [--size 1m] [--rounds 2] [--zones deleg,data] [--threads 2]
                          [--signers tern,ternd,knot] [--settle 5] [--tern PATH]

Prints every measurement and a table of medians with the ratios the issue sets targets
for (docs/benchmarks.md, "DNSSEC signing").
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rdatatype

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import genzone  # noqa: E402
import peers  # noqa: E402

DATA_ORIGIN, DATA_SEED, AAAA_SHARE = "data.", 7, 0.3
EXAMPLE = "zone_file_sign"
# What Knot DNS 3.2 logs when it starts and ends signing a zone.
KNOT_SIGN_START, KNOT_SIGN_END = "DNSSEC, signing started", "DNSSEC, successfully signed"


@dataclass(frozen=True)
class SignZone:
    """One zone to sign: its name in the report, origin, file and proof of
    non-existence (`nsec` or `nsec3-optout`)."""

    name: str
    origin: str
    path: str
    denial: str


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="1m", help="delegations, and names of the data zone")
    p.add_argument("--zones", default="deleg,data")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--signers", default="tern,knot",
                   help="who signs, by turns: tern, knot or both")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cpus", default="0,1", help="CPUs every signer is pinned to")
    p.add_argument("--raw", type=int, default=300_000,
                   help="signatures aws-lc-rs makes alone before and again after each "
                        "Tern signing")
    p.add_argument("--signer", default=None,
                   help=f"the {EXAMPLE} example (default: <target>/perf/examples/{EXAMPLE})")
    p.add_argument("--settle", type=float, default=5.0,
                   help="seconds after the signed SOA is served until ternd's PSS is read")
    p.add_argument("--timeout", type=float, default=1800)
    bench.add_common_args(p)
    return p.parse_args(argv)


def data_zone_lines(size, origin=DATA_ORIGIN, seed=DATA_SEED):
    """The data zone's records, one line each: SOA and NS at the apex, then `size`
    names with random labels, each with an A record and 30% with an AAAA too."""
    rng = random.Random(seed)
    yield f"$ORIGIN {origin}\n$TTL 3600\n"
    yield f"{origin} 3600 IN SOA ns1.{origin} hostmaster.{origin} 2026112901 7200 3600 1209600 300\n"
    yield f"{origin} 3600 IN NS ns1.example.net.\n{origin} 3600 IN NS ns2.example.net.\n"
    for index, label in enumerate(genzone.unique_labels(rng, size)):
        line = f"{label}.{origin} 3600 IN A 10.{index >> 16 & 255}.{index >> 8 & 255}.{index & 255}\n"
        if rng.random() < AAAA_SHARE:
            line += f"{label}.{origin} 3600 IN AAAA 2001:db8::{index >> 16:x}:{index & 0xffff:x}\n"
        yield line


def prepare_data_zone(size, work):
    """The cached data zone of `size` names (made if missing): its path."""
    base = os.path.join(work, f"data-{size}-z{DATA_SEED}")
    os.makedirs(base, exist_ok=True)
    path = os.path.join(base, "zone.txt")
    if not os.path.exists(path):
        print(f"generating {path}", flush=True)
        with open(path + ".tmp", "w") as out:
            out.writelines(data_zone_lines(size))
        os.replace(path + ".tmp", path)
    return path


def zones(names, size, work):
    """The SignZones named in `names` (`deleg`, `data`)."""
    made = []
    for name in names:
        if name == "deleg":
            path, _ = datasets.prepare_unsigned(size, work)
            made.append(SignZone("deleg", datasets.ORIGIN, path, "nsec3-optout"))
        elif name == "data":
            made.append(SignZone("data", DATA_ORIGIN, prepare_data_zone(size, work), "nsec"))
        else:
            raise ValueError(f"unknown zone {name!r}: deleg or data")
    return made


def knot_conf(zone, port, work, threads):
    """knotd's configuration: `zone` signed automatically with a CSK (ECDSAP256SHA256),
    NSEC or NSEC3 opt-out (no salt, 0 extra iterations), on `threads` signing threads;
    nothing written back to the zone file, no journal."""
    nsec3 = zone.denial == "nsec3-optout"
    denial = ("    nsec3: on\n    nsec3-opt-out: on\n    nsec3-iterations: 0\n"
              "    nsec3-salt-length: 0\n") if nsec3 else "    nsec3: off\n"
    return f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: {threads}
log:
  - target: stderr
    any: info
database:
  storage: {work}
  kasp-db: {work}/keys
policy:
  - id: bench
    algorithm: ecdsap256sha256
    single-type-signing: on
    signing-threads: {threads}
{denial}template:
  - id: default
    storage: {work}
    journal-content: none
    zonefile-sync: -1
    zonefile-load: whole
    dnssec-signing: on
    dnssec-policy: bench
zone:
  - domain: {zone.origin}
    file: {zone.path}
"""


def soa_signed(response, origin):
    """True when `response` (a dns.message) answers `origin`'s SOA with its RRSIG."""
    if response.rcode() != 0 or not response.flags & dns.flags.AA:
        return False
    types = {(rrset.name.to_text(), rrset.rdtype) for rrset in response.answer}
    return {(origin, dns.rdatatype.SOA), (origin, dns.rdatatype.RRSIG)} <= types


def log_times(lines, started):
    """(signing start, signing end) as seconds after `started`, from `lines`: (monotonic
    time seen, log line) pairs; None for a line not seen."""
    first = {}
    for seen, line in lines:
        for key, needle in (("start", KNOT_SIGN_START), ("end", KNOT_SIGN_END)):
            if needle in line and key not in first:
                first[key] = seen - started
    return first.get("start"), first.get("end")


class LogWatch:
    """Lines of a growing log file, each with the monotonic time it was first read."""

    def __init__(self, path):
        self.path, self.offset, self.lines = path, 0, []

    def poll(self):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                text = f.read()
        except OSError:
            return
        complete = text[:text.rfind("\n") + 1]
        self.offset += len(complete.encode())
        now = time.monotonic()
        self.lines += [(now, line) for line in complete.splitlines()]


def peak_rss_kib(pid):
    """VmHWM of process `pid`, in KiB (0 if gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(l.split()[1]) for l in f if l.startswith("VmHWM:")), 0)
    except OSError:
        return 0


def run_knot(zone, args, cpus):
    """One Knot DNS run: its figures as a dict."""
    work = os.path.join(args.work, "sign", f"knot-{zone.name}")
    subprocess.run(["rm", "-rf", work], check=True)  # fresh keys, no state from before
    os.makedirs(work)
    port = peers.free_port()
    conf = os.path.join(work, "knot.conf")
    with open(conf, "w") as f:
        f.write(knot_conf(zone, port, work, args.threads))
    load = os.getloadavg()[0]
    pinned = ["taskset", "-c", ",".join(map(str, sorted(cpus))), "knotd", "-c", conf]
    server = peers.Server("knot", [], port, work, pinned, None)
    try:
        served = wait_signed(server, zone.origin, port, args.timeout)
        cpu = server.cpu_seconds()
        time.sleep(0.5)
        start, end = log_times(served["log"], server.started)
        return {"time_s": served["seconds"], "cpu_s": cpu, "sign_start_s": start, "sign_end_s": end,
                "pss_kib": server.pss_kb(), "peak_rss_kib": peak_rss_kib(server.proc.pid),
                "load": load}
    finally:
        server.stop()


def wait_signed(server, origin, port, timeout):
    """Polls the SOA with DO=1 until it comes with its RRSIG: the seconds from the
    server's start until then, and the log lines seen meanwhile."""
    watch = LogWatch(server.log_path)
    query = dns.message.make_query(origin, "SOA", want_dnssec=True)
    while True:
        watch.poll()
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.kind} exited with {server.proc.returncode}:\n"
                               + server.log_tail())
        if time.monotonic() - server.started > timeout:
            raise RuntimeError(f"{server.kind} did not serve {origin} signed within {timeout} s:\n"
                               + server.log_tail())
        try:
            if soa_signed(dns.query.udp(query, "127.0.0.1", port=port, timeout=0.05), origin):
                seconds = time.monotonic() - server.started
                watch.poll()
                return {"seconds": seconds, "log": watch.lines}
        except (dns.exception.DNSException, OSError):
            pass
        time.sleep(0.05)


def ternd_conf(zone, port, work, path):
    """ternd's configuration: `zone` (its copy at `path`) signed from a `[[policy]]`: a
    CSK, ECDSAP256SHA256 (the default algorithm), NSEC or NSEC3 opt-out (no salt, 0
    extra iterations); one UDP and one TCP worker."""
    denial = ('denial = "nsec3"\nnsec3-opt-out = true\n' if zone.denial == "nsec3-optout"
              else 'denial = "nsec"\n')
    return f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[log]
level = "info"
[[zone]]
name = "{zone.origin}"
file = "{path}"
dnssec-policy = "bench"
[[policy]]
id = "bench"
scheme = "csk"
{denial}"""


def run_ternd(zone, args, cpus):
    """One run of the server signing `zone` from a policy: its figures as a dict."""
    work = os.path.join(args.work, "sign", f"ternd-{zone.name}")
    subprocess.run(["rm", "-rf", work], check=True)  # fresh keys, no journal
    os.makedirs(os.path.join(work, "data"))
    path = os.path.join(work, "zone.txt")
    subprocess.run(["cp", zone.path, path], check=True)
    port = peers.free_port()
    conf = os.path.join(work, "ternd.toml")
    with open(conf, "w") as f:
        f.write(ternd_conf(zone, port, work, path))
    load = os.getloadavg()[0]
    pinned = ["taskset", "-c", ",".join(map(str, sorted(cpus))), args.tern, "--config", conf]
    server = peers.Server("ternd", [], port, work, pinned, None)
    try:
        served = wait_signed(server, zone.origin, port, args.timeout)
        cpu = server.cpu_seconds()
        time.sleep(args.settle)
        return {"time_s": served["seconds"], "cpu_s": cpu, "pss_kib": server.pss_kb(),
                "peak_rss_kib": peak_rss_kib(server.proc.pid), "load": load}
    finally:
        server.stop()


def run_tern(zone, args, cpus):
    """One Tern run (the example): its figures as a dict."""
    argv = [args.signer, zone.path, zone.origin, zone.denial, str(args.threads),
            "--raw", str(args.raw)]
    load = os.getloadavg()[0]
    started = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout,
                         preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    if out.returncode != 0:
        raise RuntimeError(f"{EXAMPLE} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures.update(time_s=figures["total_s"], process_s=time.monotonic() - started, load=load)
    return figures


def summary(results, threads):
    """Medians per (zone, signer) and the ratios, from `results`: a list of
    (zone name, signer, figures dict)."""
    def med(zone, signer, key):
        values = [f[key] for z, s, f in results if z == zone and s == signer
                  and f.get(key) is not None]
        return statistics.median(values) if values else None

    rows = []
    for zone in dict.fromkeys(z for z, _, _ in results):
        tern_time, knot_time = med(zone, "tern", "time_s"), med(zone, "knot", "time_s")
        tern_pss, knot_pss = med(zone, "tern", "pss_kib"), med(zone, "knot", "pss_kib")
        tern_cpu, knot_cpu = med(zone, "tern", "cpu_s"), med(zone, "knot", "cpu_s")
        sigs, cpu = med(zone, "tern", "signatures"), med(zone, "tern", "sign_cpu_s")
        sign_s, raw = med(zone, "tern", "sign_s"), med(zone, "tern", "raw_sig_cpu_s")
        per_cpu = sigs / cpu if sigs and cpu else None
        per_core = sigs / (sign_s * threads) if sigs and sign_s else None
        raw_wall = med(zone, "tern", "raw_sig_s")
        raw_core = raw_wall / threads if raw_wall else None
        rows.append({
            "zone": zone, "tern_s": tern_time, "knot_s": knot_time,
            "time_ratio": ratio(tern_time, knot_time),
            "tern_cpu_s": tern_cpu, "knot_cpu_s": knot_cpu, "cpu_ratio": ratio(tern_cpu, knot_cpu),
            "tern_pss_mib": kib_mib(tern_pss), "knot_pss_mib": kib_mib(knot_pss),
            "pss_ratio": ratio(tern_pss, knot_pss),
            "tern_peak_mib": kib_mib(med(zone, "tern", "peak_rss_kib")),
            "knot_peak_mib": kib_mib(med(zone, "knot", "peak_rss_kib")),
            "knot_sign_s": knot_signing(med(zone, "knot", "sign_start_s"),
                                        med(zone, "knot", "sign_end_s")),
            "signatures": sigs, "sig_per_cpu_s": per_cpu, "sig_per_core_wall": per_core,
            "raw_per_cpu_s": raw, "share_cpu": ratio(per_cpu, raw),
            "share_wall": ratio(per_core, raw_core),
            "ternd_s": med(zone, "ternd", "time_s"),
            "ternd_pss_mib": kib_mib(med(zone, "ternd", "pss_kib")),
            "ternd_peak_mib": kib_mib(med(zone, "ternd", "peak_rss_kib")),
            "ternd_pss_ratio": ratio(med(zone, "ternd", "pss_kib"), knot_pss),
        })
    return rows


def ratio(a, b):
    return a / b if a is not None and b else None


def kib_mib(kib):
    return kib / 1024 if kib is not None else None


def knot_signing(start, end):
    return end - start if start is not None and end is not None else None


def fmt(value, spec):
    return "–" if value is None else format(value, spec)


def print_table(rows):
    print("\n| zone | Tern s | Knot DNS s | time ratio | CPU s Tern / Knot DNS | CPU ratio "
          "| Tern PSS MiB | Knot DNS PSS MiB "
          "| PSS ratio | peak RSS MiB Tern / Knot | Knot signing s | signatures "
          "| Tern sig/s per CPU s | per core (wall) | aws-lc-rs alone | share CPU / wall |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['zone']} | {fmt(r['tern_s'], '.2f')} | {fmt(r['knot_s'], '.2f')} "
              f"| {fmt(r['time_ratio'], '.2f')} "
              f"| {fmt(r['tern_cpu_s'], '.1f')} / {fmt(r['knot_cpu_s'], '.1f')} "
              f"| {fmt(r['cpu_ratio'], '.2f')} | {fmt(r['tern_pss_mib'], '.0f')} "
              f"| {fmt(r['knot_pss_mib'], '.0f')} | {fmt(r['pss_ratio'], '.2f')} "
              f"| {fmt(r['tern_peak_mib'], '.0f')} / {fmt(r['knot_peak_mib'], '.0f')} "
              f"| {fmt(r['knot_sign_s'], '.1f')} | {fmt(r['signatures'], ',.0f')} "
              f"| {fmt(r['sig_per_cpu_s'], ',.0f')} | {fmt(r['sig_per_core_wall'], ',.0f')} "
              f"| {fmt(r['raw_per_cpu_s'], ',.0f')} "
              f"| {fmt(r['share_cpu'], '.0%')} / {fmt(r['share_wall'], '.0%')} |")


def print_server_table(rows):
    """The server's figures (`--signers ternd`), when it ran."""
    rows = [r for r in rows if r["ternd_pss_mib"] is not None]
    if not rows:
        return
    print("\n| zone | ternd s to signed | ternd PSS MiB | × Knot DNS's | ternd peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['zone']} | {fmt(r['ternd_s'], '.2f')} | {fmt(r['ternd_pss_mib'], '.0f')} "
              f"| {fmt(r['ternd_pss_ratio'], '.2f')} | {fmt(r['ternd_peak_mib'], '.0f')} |")


def signers(names):
    """(name, run function) of each signer named in `names` (`tern`, `ternd`, `knot`),
    in the order runs take turns: Tern first."""
    known = {"tern": run_tern, "ternd": run_ternd, "knot": run_knot}
    wanted = names.split(",")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"unknown signers {unknown}: tern, ternd, knot")
    return [(name, run) for name, run in known.items() if name in wanted]


def default_signer():
    ternd = peers.default_ternd(REPO)  # <target>/perf/ternd, or $TERND
    return os.path.join(os.path.dirname(ternd), "examples", EXAMPLE)


def main():
    args = parse_args()
    args.signer = args.signer or default_signer()
    wanted = args.signers.split(",")
    if "tern" in wanted and not os.access(args.signer, os.X_OK):
        sys.exit(f"{args.signer} not built: cargo build --profile perf -p tern-sign "
                 f"--example {EXAMPLE}")
    args.tern = args.tern or peers.default_ternd(REPO)
    if "ternd" in wanted and not os.access(args.tern, os.X_OK):
        sys.exit(f"{args.tern} not built: {peers.build_command(args.tern)}")
    cpus = {int(c) for c in args.cpus.split(",")}
    todo = zones(args.zones.split(","), bench.parse_size(args.size), args.work)
    results = []
    for rnd in range(1, args.rounds + 1):
        for zone in todo:
            for signer, run in signers(args.signers):
                figures = run(zone, args, cpus)
                results.append((zone.name, signer, figures))
                print(f"round {rnd} {zone.name} {signer}: {json.dumps(figures)}", flush=True)
    print(f"load average (1 min) at the runs' starts: "
          f"{min(f['load'] for _, _, f in results):.2f}–{max(f['load'] for _, _, f in results):.2f}")
    rows = summary(results, args.threads)
    print_table(rows)
    print_server_table(rows)


if __name__ == "__main__":
    main()
