#!/usr/bin/env python3
"""PostgreSQL zones: Tern's load from a database vs from a file, and queries per CPU-second
vs PowerDNS's gpgsql backend on the same database.

A throw-away PostgreSQL cluster (initdb; `postgres` run as its own user when this runs
as root) gets PowerDNS's own schema (`/usr/share/pdns-backend-pgsql/schema`) and one zone
of `--records` records (A, with a TXT and an MX every tenth name), written as a zone file
too. Two measurements, in one run:

* load: ternd's start until the zone's SOA gets an authoritative answer, the zone read
  from the file, from the database on a fresh storage directory (the first start), and
  from the database again on the storage the last run left (a restart: the kept copy is
  read beside the rows, see docs/postgres/README.md); `--repeats` rounds interleaved.
* queries: ternd (zone from the database) and PowerDNS (`pdns_server`, launch=gpgsql,
  packet cache and query cache on, one receiver and one distributor thread) each pinned
  to CPU 1 with PostgreSQL, dnsperf on CPU 0 with a mix over `--names` names (a tenth
  of them absent, NXDOMAIN); after a warm-up of half the duration, answered queries per
  second and per CPU-second of the server alone and of the server and PostgreSQL
  together (PowerDNS asks the database on every packet-cache miss; Tern never does).

    python3 bench/pg.py [--records 1000000] [--repeats 3] [--duration 10] [--tern PATH]

Needs postgresql, pdns-server, pdns-backend-pgsql, dnsperf; prints a markdown table.
"""

import argparse
import glob
import os
import random
import shutil
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

ORIGIN = "bench.test."
PDNS_SCHEMA = "/usr/share/pdns-backend-pgsql/schema/schema.pgsql.sql"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--names", type=int, default=100_000, help="distinct names queried")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--duration", type=float, default=10, help="seconds per query measurement")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    bench.add_common_args(p)
    return p.parse_args()


def postgres_bin():
    """The directory of initdb, pg_ctl and postgres (the PATH, or Debian's)."""
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not versions:
        sys.exit("no PostgreSQL (initdb): apt install postgresql")
    return os.path.dirname(versions[-1])


class Cluster:
    """A throw-away PostgreSQL cluster in `work`, its server a peers.Server pinned to
    `cpu` (so its backends' CPU time is counted as the server tree's)."""

    def __init__(self, work, cpu):
        self.bin, self.work, self.port = postgres_bin(), work, peers.free_port()
        self.data = os.path.join(work, "pgdata")
        self.user = "postgres" if os.geteuid() == 0 else None
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(self.data)
        if self.user:
            os.chmod(work, 0o755)
            shutil.chown(self.data, self.user)
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8")
        argv = self._argv("postgres", "-D", self.data, "-p", str(self.port), "-c",
                          "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                          "-c", "fsync=off", "-c", "shared_buffers=256MB")
        self.server = peers.Server("postgres", [], self.port, work, argv, cpu)
        deadline = time.monotonic() + 30
        while not self._accepts():
            if time.monotonic() > deadline or self.server.proc.poll() is not None:
                sys.exit("PostgreSQL did not start:\n" + self.server.log_tail())
            time.sleep(0.1)

    def _argv(self, program, *args):
        path = os.path.join(self.bin, program)
        return (["runuser", "-u", self.user, "--"] if self.user else []) + [path, *args]

    def _run(self, program, *args):
        subprocess.run(self._argv(program, *args), check=True, cwd=self.work,
                       stdout=subprocess.DEVNULL)

    def _accepts(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def url(self):
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def psql(self, *args):
        argv = ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                "-U", "postgres", "-d", "postgres", *args]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        self.server.stop()


def rows(count):
    """The zone's records after SOA, NS and the name server's address, as (name, type,
    content, prio) with names relative to ORIGIN ('' for the apex)."""
    yield "", "NS", "ns." + ORIGIN.rstrip("."), None
    yield "ns", "A", "192.0.2.53", None
    n = 0
    while n < count - 3:
        name = f"h{n}"
        yield name, "A", f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}", None
        if n % 10 == 0:
            yield name, "TXT", '"v=spf1 -all"', None
            yield name, "MX", "mail." + ORIGIN.rstrip("."), 10
        n += 1


def write_zone(work, count):
    """Writes `zone` (a zone file) and `records.tsv` (rows for COPY, PowerDNS's form);
    returns the number of names that hold records other than the apex's."""
    soa = f"ns.{ORIGIN} hostmaster.{ORIGIN} 1 3600 600 86400 60"
    apex = ORIGIN.rstrip(".")
    names = 0
    with open(os.path.join(work, "zone"), "w") as zone, \
            open(os.path.join(work, "records.tsv"), "w") as tsv:
        zone.write(f"$ORIGIN {ORIGIN}\n@ 3600 IN SOA {soa}\n")
        tsv.write(f"1\t{apex}\tSOA\t{soa.replace(ORIGIN, apex)}\t3600\t\\N\tf\tt\n")
        written = 1
        for name, rtype, content, prio in rows(count):
            if written >= count:
                break
            owner = f"{name}.{apex}" if name else apex
            text = f"{prio} {content}." if prio is not None else (
                content + "." if rtype == "NS" else content)
            zone.write(f"{name or '@'} 300 IN {rtype} {text}\n")
            column = "\\N" if prio is None else str(prio)
            tsv.write(f"1\t{owner}\t{rtype}\t{content}\t300\t{column}\tf\tt\n")
            written += 1
            names += rtype == "A" and name.startswith("h")
    return names


def load_database(cluster, work):
    """PowerDNS's schema and the zone's rows."""
    cluster.psql("-f", PDNS_SCHEMA)
    cluster.psql("-c", f"INSERT INTO domains (id, name, type) VALUES (1, '{ORIGIN.rstrip('.')}', 'NATIVE')")
    tsv = os.path.join(work, "records.tsv")
    cluster.psql("-c", f"\\copy records (domain_id, name, type, content, ttl, prio, disabled, auth) FROM '{tsv}'")
    cluster.psql("-c", "ANALYZE")


def queries(work, names, wanted):
    """A dnsperf file over `wanted` names: existing names (A, TXT or MX as they hold),
    a tenth absent."""
    rng = random.Random(54)
    path = os.path.join(work, "queries")
    with open(path, "w") as f:
        for _ in range(wanted):
            if rng.random() < 0.1:
                f.write(f"absent{rng.randrange(10 ** 9)}.{ORIGIN} A\n")
                continue
            n = rng.randrange(names)
            rtype = rng.choice(("TXT", "MX")) if n % 10 == 0 and rng.random() < 0.5 else "A"
            f.write(f"h{n}.{ORIGIN} {rtype}\n")
    return path


def tern_config(work, source, port, cluster):
    """ternd's configuration: the zone from `source` ('file' or 'database')."""
    zone = (f'file = "{os.path.join(work, "zone")}"\n' if source == "file"
            else 'database = "pdns"\n')
    text = (f'[server]\nlisten = ["127.0.0.1:{port}"]\nudp-workers = 1\ntcp-workers = 1\n'
            f'storage = "{os.path.join(work, "storage")}"\n'
            f'[[database]]\nid = "pdns"\nurl = "{cluster.url()}"\n'
            f'[[zone]]\nname = "{ORIGIN}"\n{zone}')
    path = os.path.join(work, f"ternd-{source}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def pdns_config(work, port, cluster):
    directory = os.path.join(work, "pdns")
    os.makedirs(directory, exist_ok=True)
    text = (f"launch=gpgsql\ngpgsql-host=127.0.0.1\ngpgsql-port={cluster.port}\n"
            "gpgsql-dbname=postgres\ngpgsql-user=postgres\ngpgsql-dnssec=no\n"
            f"local-address=127.0.0.1\nlocal-port={port}\nsocket-dir={directory}\n"
            "guardian=no\ndaemon=no\ndisable-syslog=yes\nloglevel=3\n"
            "receiver-threads=1\ndistributor-threads=1\n"
            "cache-ttl=60\nquery-cache-ttl=60\nnegquery-cache-ttl=60\n"
            "security-poll-suffix=\n")
    with open(os.path.join(directory, "pdns.conf"), "w") as f:
        f.write(text)
    return ["pdns_server", f"--config-dir={directory}"]


def start(kind, argv, work, port):
    """Starts `kind` pinned to the server CPU; returns (server, seconds to answer)."""
    zones = [peers.Zone(ORIGIN, None)]
    server = peers.Server(kind, zones, port, work, argv, bench.SERVER_CPU)
    try:
        return server, server.wait_answering(timeout=1200)
    except RuntimeError:
        server.stop()
        raise


def measure_load(args, work, cluster, tern):
    """Seconds to answer, by source, over `--repeats` interleaved rounds."""
    times = {"file": [], "database": [], "database, restart": []}
    for _ in range(args.repeats):
        for source in ("file", "database", "database, restart"):
            if source != "database, restart":
                shutil.rmtree(os.path.join(work, "storage"), ignore_errors=True)
            port = peers.free_port()
            config = tern_config(work, source.split(",")[0], port, cluster)
            server, seconds = start("tern", [tern, "--config", config], work, port)
            if source == "database":
                wait_for_copy(work)  # what the restart that follows reads
            server.stop()
            times[source].append(seconds)
            print(f"  load from {source}: {seconds:.2f} s", flush=True)
    return {k: statistics.median(v) for k, v in times.items()}


def wait_for_copy(work, timeout=600):
    """Waits until ternd has written the database zone's kept copy (renamed into place
    whole)."""
    copy = os.path.join(work, "storage", ORIGIN + "zone")
    deadline = time.monotonic() + timeout
    while not os.path.exists(copy):
        if time.monotonic() > deadline:
            sys.exit(f"no kept copy at {copy}")
        time.sleep(0.1)


def measure_queries(args, work, cluster, tern, data):
    """Per server: qps, queries per server CPU-second, per server+PostgreSQL CPU-second."""
    results = {"tern": [], "pdns": []}
    for _ in range(args.repeats):
        for kind in results:
            port = peers.free_port()
            argv = ([tern, "--config", tern_config(work, "database", port, cluster)]
                    if kind == "tern" else pdns_config(work, port, cluster))
            server, _ = start(kind, argv, work, port)
            try:
                bench.dnsperf(port, data, max(1, int(args.duration / 2)), args)  # warm-up
                before = server.cpu_seconds(), cluster.server.cpu_seconds()
                answered, qps, lost, rcodes = bench.dnsperf(port, data, args.duration, args)
                cpu = server.cpu_seconds() - before[0]
                database = cluster.server.cpu_seconds() - before[1]
            finally:
                server.stop()
            row = (qps, answered / max(cpu, 1e-9), answered / max(cpu + database, 1e-9), lost)
            results[kind].append(row)
            print(f"  {kind}: {qps:,.0f} qps, {row[1]:,.0f} per CPU-s, {row[2]:,.0f} per "
                  f"CPU-s with PostgreSQL ({database:.1f} s), lost {lost:.2f}%, {rcodes}",
                  flush=True)
    return {k: [statistics.median(col) for col in zip(*v)] for k, v in results.items()}


def main():
    args = parse_args()
    tern = args.tern or peers.default_ternd(REPO, "release")
    for tool in ("pdns_server", "dnsperf", "psql", tern):
        if not shutil.which(tool):
            sys.exit(f"missing {tool}")
    if not os.path.exists(PDNS_SCHEMA):
        sys.exit(f"missing {PDNS_SCHEMA}: apt install pdns-backend-pgsql")
    work = os.path.join(args.work, "pg")
    os.makedirs(work, exist_ok=True)
    cluster = Cluster(os.path.join(work, "cluster"), bench.SERVER_CPU)
    try:
        print(f"writing {args.records} records", flush=True)
        names = write_zone(work, args.records)
        load_database(cluster, work)
        data = queries(work, names, args.names)
        loads = measure_load(args, work, cluster, tern)
        qps = measure_queries(args, work, cluster, tern, data)
    finally:
        cluster.stop()
    print(f"\nload, {args.records:,} records (median of {args.repeats}, s to answer):\n")
    print("| from | s |\n|---|---:|")
    for source, seconds in loads.items():
        print(f"| {source} | {seconds:.2f} |")
    print(f"\nqueries over {args.names:,} names (median of {args.repeats}, {args.duration:g} s "
          "each):\n")
    print("| server | qps | queries per CPU-s | per CPU-s with PostgreSQL | lost % |")
    print("|---|---:|---:|---:|---:|")
    for kind, (q, per_cpu, per_all, lost) in qps.items():
        name = "Tern" if kind == "tern" else "PowerDNS (gpgsql)"
        print(f"| {name} | {q:,.0f} | {per_cpu:,.0f} | {per_all:,.0f} | {lost:.2f} |")


if __name__ == "__main__":
    main()
