#!/usr/bin/env python3
"""Encrypted transports (server): Tern beside NSD and BIND over DNS over TLS.

  tls.py [--only persistent,fresh,axfr] [--servers tern,nsd,bind] [--rounds 5]
         [--duration 8] [--size 100k] [--delegations 1000000] [--tern PATH]

Every server on CPU 1 (one worker), the load on CPU 0, all with one certificate (ECDSA
P-256, made here with openssl) and TLS 1.3; rounds are interleaved (every server once
per round) and ratios are taken round by round within the run.

* persistent: the peer benchmark's zone and query mix (`--size` delegations); dnsperf
  `-c 4 -q 200` over plain TCP (`tcp`) and over TLS (`dot`, `-m dot`), in one session
  of each server. Server CPU time (user + system, its process tree) per answer. A
  server's CPU per query falls as its load rises (more queries per wake-up and per
  system call), and dnsperf sends DoT at about half the rate it sends TCP to Tern, so
  Tern is also measured with both paced at one rate (`--paced`, `dot-paced` and
  `tcp-paced`, Tern only): the cost of TLS itself.
* fresh: the `tls_fresh` example of ternd (a rustls client: see its module comment), a
  new TLS connection per query (connect, handshake, one query, answer, close),
  `--concurrency` in flight: full handshakes (`tls-new`), and resumed with tickets of
  earlier connections (`tls-resume`); `tcp-new` (`tools/tcp-fresh`) for the plain TCP
  cost. Connections a second and server CPU per connection; `resumed` is the share of
  handshakes the server resumed. The client costs about as much CPU per connection as
  Tern, so on two cores Tern's rate is bounded by the client: a server's capacity is
  1 / its CPU per connection (`capacity/s`), the figure the targets compare.
* axfr: xfr.py's zone (`--delegations`, TSIG-signed AXFR), read by a counting client
  over TCP and over TLS, alternately, from each primary: wall time from connect (and
  handshake) to the last record, and the server's CPU.

Medians are printed as Markdown tables for docs/benchmarks.md; raw records go to
`WORK/tls-results-STAMP.json` (`--report` prints a saved run's tables again). Knot DNS 3.2 has no DoT server (its DoQ runs only over
XDP), so it is not in these runs.
"""

import argparse
import json
import os
import resource
import shutil
import ssl
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import datasets  # noqa: E402
import peers  # noqa: E402

PARTS = ("persistent", "fresh", "axfr")
PERSISTENT_MODES = ("tcp", "dot")
PACED_MODES = ("dot-paced", "tcp-paced")  # Tern only
FRESH_MODES = ("tcp-new", "tls-new", "tls-resume")
HOST = "ns.bench.test"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(PARTS), help="parts: " + ",".join(PARTS))
    p.add_argument("--servers", default=",".join(peers.TLS_KINDS))
    p.add_argument("--size", default="100k", help="zone size of persistent and fresh")
    p.add_argument("--delegations", type=int, default=1_000_000, help="zone size of axfr")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=float, default=8, help="seconds per measurement")
    p.add_argument("--clients", type=int, default=4, help="dnsperf -c")
    p.add_argument("--outstanding", type=int, default=200, help="dnsperf -q")
    p.add_argument("--paced", type=int, default=80_000,
                   help="persistent: the rate of dot-paced and tcp-paced (0: none)")
    p.add_argument("--edns", action="store_true",
                   help="persistent: also `dot-edns`, DoT with EDNS (Tern pads its answers)")
    p.add_argument("--concurrency", type=int, default=8, help="fresh: connections in flight")
    p.add_argument("--suite", choices=("aes128", "aes256"),
                   help="fresh: the client offers this TLS 1.3 cipher suite alone (servers "
                   "follow the client's order: TLS_AES_256_GCM_SHA384 first by default)")
    p.add_argument("--report", metavar="JSON",
                   help="print the tables of a saved run (WORK/tls-results-*.json) and exit")
    bench.add_common_args(p)
    args = p.parse_args(argv)
    args.only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = set(args.only) - set(PARTS)
    if unknown:
        p.error(f"--only: unknown parts {sorted(unknown)}; expected some of {PARTS}")
    return args


def make_certificate(work):
    """A self-signed ECDSA P-256 certificate for HOST and its key, made once in `work`;
    (certificate path, key path)."""
    os.makedirs(work, exist_ok=True)
    cert, key = os.path.join(work, "server.pem"), os.path.join(work, "server.key")
    if not (os.path.exists(cert) and os.path.exists(key)):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "3650", "-subj", f"/CN={HOST}",
                        "-addext", f"subjectAltName=DNS:{HOST}"],
                       check=True, capture_output=True)
    return cert, key


def children_cpu():
    """CPU seconds of this script's waited-for children (the load tools)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fresh_tool(tool, port, queries, seconds, concurrency, extra=()):
    """Runs tls_fresh or tcp-fresh (with `extra` options) on CLIENT_CPU; returns
    (completed, rate, failed percent, resumed count or None)."""
    argv = [tool, "-p", str(port), "-f", queries, "-l", str(seconds), "-c", str(concurrency)]
    argv += list(extra)
    out = subprocess.run(bench.pinned(bench.CLIENT_CPU, argv), capture_output=True,
                         text=True, timeout=seconds + 60).stdout
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    if "completed" not in fields:
        raise RuntimeError(f"unexpected {os.path.basename(tool)} output: {out!r}")
    completed, failed = int(fields["completed"]), int(fields["failed"])
    resumed = int(fields["resumed"]) if "resumed" in fields else None
    return completed, float(fields["qps"]), 100.0 * failed / max(1, completed + failed), resumed


def run_mode(mode, server, tls_port, data, args, tools):
    """One measurement of `mode` against a started server: (answered, rate, lost
    percent, resumed count or None)."""
    if mode in (*PERSISTENT_MODES, *PACED_MODES, "dot-edns"):
        tcp = mode.startswith("tcp")
        extra = ["-m", "tcp" if tcp else "dot"] + (["-e"] if mode == "dot-edns" else [])
        rate = args.paced if mode in PACED_MODES else None
        answered, qps, lost, _ = bench.dnsperf(server.port if tcp else tls_port, data.queries,
                                               args.duration, args, rate=rate, extra=extra)
        return answered, qps, lost, None
    if mode == "tcp-new":
        return fresh_tool(tools["tcp-fresh"], server.port, data.queries_tcp, args.duration,
                          args.concurrency)
    extra = (["-r"] if mode == "tls-resume" else []) + (["-t", args.suite] if args.suite else [])
    return fresh_tool(tools["tls_fresh"], tls_port, data.queries_tcp, args.duration,
                      args.concurrency, extra)


def measure(mode, server, tls_port, data, args, tools):
    """`run_mode` with the server's CPU and the client's around it; a record."""
    before, client_before = server.usage(), children_cpu()
    answered, rate, lost, resumed = run_mode(mode, server, tls_port, data, args, tools)
    client = children_cpu() - client_before
    usage = bench.per_query_usage(before, server.usage(), answered)
    usage["capacity"] = 1e6 / usage["cpu_us"] if usage["cpu_us"] else None
    if mode in PACED_MODES:
        usage["offered"] = args.paced
    return {"mode": mode, "rate": rate, "answered": answered, "lost": lost,
            "resumed_pct": 100.0 * resumed / answered if resumed is not None and answered else None,
            "client_us": 1e6 * client / answered if answered else None, **usage}


def session(kind, data, modes, args, tools, cert, rnd):
    """Starts `kind` with DoT, measures `modes`, stops it; the records."""
    work = os.path.join(args.work, "tls-run", kind)
    shutil.rmtree(work, ignore_errors=True)
    tls = peers.Tls(peers.free_port(), *cert)
    server = peers.start(kind, [peers.Zone(data.origin, data.zone)], peers.free_port(), work,
                         cpu=bench.SERVER_CPU, tern_bin=tools["ternd"], tls=tls)
    records = []
    try:
        server.wait_answering(timeout=300)
        time.sleep(0.5)
        for mode in [m for m in modes if kind == "tern" or m not in PACED_MODES]:
            r = dict(measure(mode, server, tls.port, data, args, tools), server=kind, round=rnd)
            records.append(r)
            extra = f" resumed {r['resumed_pct']:.0f}%" if r["resumed_pct"] is not None else ""
            print(f"  {kind:5} {mode:10} {r['rate']:>9.0f}/s {r['cpu_us'] or 0:8.2f} us "
                  f"({r['user_us'] or 0:.2f} user) client {r['client_us'] or 0:7.2f} us "
                  f"lost {r['lost']:.2f}%{extra}", flush=True)
    except (RuntimeError, subprocess.SubprocessError, KeyError, ValueError) as err:
        print(f"  {kind}: FAILED: {err}\n{server.log_tail()}", flush=True)
        records.append({"server": kind, "round": rnd, "mode": "error", "error": str(err)[:2000]})
    finally:
        server.stop()
    return records


def query_modes(args):
    modes = []
    if "persistent" in args.only:
        modes += list(PERSISTENT_MODES) + (["dot-edns"] if args.edns else [])
        modes += list(PACED_MODES) if args.paced else []
    if "fresh" in args.only:
        modes += list(FRESH_MODES)
    return modes


def run_queries(args, kinds, tools, cert):
    """The persistent and fresh parts: every server once per round."""
    modes = query_modes(args)
    if not modes:
        return []
    zone, queries = datasets.prepare_unsigned(bench.parse_size(args.size), args.work)
    data = datasets.Dataset(bench.parse_size(args.size), datasets.ORIGIN, zone, None, queries,
                            datasets.tcp_queries(queries))
    records = []
    for rnd in range(args.rounds):
        print(f"== queries, round {rnd + 1}/{args.rounds}", flush=True)
        for kind in kinds:
            records += session(kind, data, modes, args, tools, cert, rnd)
    return records


# --- summaries ---------------------------------------------------------------------

def values(records, server, mode, field):
    """`field` of `server`'s `mode` records by round: {round: value}."""
    return {r["round"]: r[field] for r in records
            if r["server"] == server and r["mode"] == mode and r.get(field) is not None}


def median_of(records, server, mode, field):
    found = list(values(records, server, mode, field).values())
    return statistics.median(found) if found else None


def best_peer(records, peers_, mode, field, lower=True):
    """The peer with the best median `field` in `mode` (lowest, or highest)."""
    found = [(median_of(records, p, mode, field), p) for p in peers_]
    found = [f for f in found if f[0] is not None]
    if not found:
        return None
    return (min if lower else max)(found)[1]


def ratio(records, a, b, field):
    """Ratio of medians and round-by-round ratios of `field`: a = (server, mode) over
    b = (server, mode). (median ratio or None, [per round])."""
    va, vb = values(records, *a, field), values(records, *b, field)
    rounds = [va[r] / vb[r] for r in sorted(va) if r in vb and vb[r]]
    ma, mb = median_of(records, *a, field), median_of(records, *b, field)
    return (ma / mb if ma is not None and mb else None), rounds


def ratio_line(label, result, target):
    med, rounds = result
    if med is None:
        return f"* {label}: not measured"
    per_round = ", ".join(f"{x:.2f}" for x in rounds)
    return f"* {label}: **{med:.2f}** (rounds {per_round}); target {target}"


def fmt(value, spec):
    return "–" if value is None else format(value, spec)


def paced_shortfalls(records):
    """`records` without the paced rounds in which a paced mode fell short of its rate
    (below 95%: the client could not keep up, so the two modes ran at different loads),
    and a note naming them."""
    offered = max((r.get("offered") or r["rate"] for r in records if r["mode"] in PACED_MODES),
                  default=None)
    short = {r["round"]: r for r in records
             if r["mode"] in PACED_MODES and r["rate"] < 0.95 * (r.get("offered") or offered)}
    if not short:
        return records, []
    kept = [r for r in records if not (r["mode"] in PACED_MODES and r["round"] in short)]
    notes = ", ".join(f"{rnd + 1} ({r['mode']} reached {r['rate']:,.0f} q/s)"
                      for rnd, r in sorted(short.items()))
    return kept, [f"* Paced rounds left out: {notes}"]


def query_tables(records, kinds):
    """Markdown for the persistent and fresh parts."""
    records, notes = paced_shortfalls(records)
    lines = []
    persistent = [m for m in (*PERSISTENT_MODES, "dot-edns", *PACED_MODES)
                  if any(r["mode"] == m for r in records)]
    fresh = [m for m in FRESH_MODES if any(r["mode"] == m for r in records)]
    if persistent:
        lines += ["| server | mode | queries/s | server CPU µs/query (user) | client CPU µs/query | queries/switch | lost |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for kind in kinds:
            for mode in persistent:
                if any(r["server"] == kind and r["mode"] == mode for r in records):
                    lines.append(_row(records, kind, mode, ["rate", "cpu_us", "user_us",
                                                            "client_us", "per_switch", "lost"]))
        lines += [""] + persistent_targets(records, kinds) + notes + [""]
    if fresh:
        lines += ["| server | mode | connections/s | server CPU µs/connection (user) | client CPU µs/connection | capacity/s | resumed | failed |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        for kind in kinds:
            for mode in fresh:
                lines.append(_row(records, kind, mode, ["rate", "cpu_us", "user_us", "client_us",
                                                        "capacity", "resumed_pct", "lost"]))
        lines += [""] + fresh_targets(records, kinds) + [""]
    return lines


def _row(records, kind, mode, fields):
    m = {f: median_of(records, kind, mode, f) for f in fields}
    cells = [fmt(m["rate"], ",.0f"), f"{fmt(m['cpu_us'], '.2f')} ({fmt(m['user_us'], '.2f')})",
             fmt(m["client_us"], ".2f")]
    if "per_switch" in fields:
        cells.append(fmt(m["per_switch"], ".1f"))
    if "capacity" in fields:
        cells.append(fmt(m["capacity"], ",.0f"))
    if "resumed_pct" in fields:
        cells.append(fmt(m["resumed_pct"], ".0f") + ("%" if m["resumed_pct"] is not None else ""))
    cells.append(fmt(m["lost"], ".2f") + ("%" if m["lost"] is not None else ""))
    return f"| {kind} | {mode} | " + " | ".join(cells) + " |"


def persistent_targets(records, kinds):
    peers_ = [k for k in kinds if k != "tern"]
    lines = []
    best = best_peer(records, peers_, "dot", "cpu_us")
    if "tern" in kinds and best:
        lines.append(ratio_line(f"Tern DoT CPU/query ÷ {best}'s (the best peer)",
                                ratio(records, ("tern", "dot"), (best, "dot"), "cpu_us"), "≤ 0.5"))
    if "tern" in kinds:
        lines.append(ratio_line("Tern DoT CPU/query ÷ Tern plain TCP, each as fast as dnsperf sends",
                                ratio(records, ("tern", "dot"), ("tern", "tcp"), "cpu_us"), "≤ 1.5"))
        paced = [r["rate"] for r in records if r["mode"] == "dot-paced"]
        if paced:
            lines.append(ratio_line(f"Tern DoT CPU/query ÷ Tern plain TCP, both paced at "
                                    f"{statistics.median(paced):,.0f} q/s",
                                    ratio(records, ("tern", "dot-paced"), ("tern", "tcp-paced"),
                                          "cpu_us"), "≤ 1.5"))
    return lines


def fresh_targets(records, kinds):
    """Tern's capacity (1 / server CPU per connection) against the best peer's, the
    target; and the measured rates, which the client bounds."""
    peers_ = [k for k in kinds if k != "tern"]
    if "tern" not in kinds or not peers_:
        return []
    lines = []
    for mode in ("tls-new", "tls-resume"):
        best = best_peer(records, peers_, mode, "capacity", lower=False)
        if best:
            lines.append(ratio_line(f"{mode}: Tern capacity ÷ {best}'s (the best peer)",
                                    ratio(records, ("tern", mode), (best, mode), "capacity"), "≥ 2"))
        best = best_peer(records, peers_, mode, "rate", lower=False)
        if best:
            lines.append(ratio_line(f"{mode}: Tern measured connections/s ÷ {best}'s",
                                    ratio(records, ("tern", mode), (best, mode), "rate"),
                                    "— (bounded by the client)"))
    return lines


# --- axfr --------------------------------------------------------------------------

def run_axfr(args, kinds, tools, cert):
    """Each primary (TCP and TLS listeners) is started once; every round reads the zone
    over TCP and over TLS from each, alternating which goes first."""
    import xfr  # noqa: E402 (pulls in tests/interop and dnspython only when needed)
    zone = xfr.zone_file(args.work, args.delegations)
    expected = xfr.count_records(zone)
    print(f"axfr: {args.delegations} delegations, {expected - 1} records ({zone})", flush=True)
    context = ssl.create_default_context(cafile=cert[0])
    context.set_alpn_protocols(["dot"])  # RFC 9103 §7.1; BIND insists on it for XoT
    started = {}
    try:
        for kind in kinds:
            started[kind] = start_primary(kind, args, tools, cert, zone, xfr)
        for server, _ in started.values():
            xfr.wait_serial(server.port)
            server.keep_on_cpu()
        return axfr_rounds(args, started, expected, context, xfr)
    finally:
        for server, _ in started.values():
            server.stop()


def axfr_rounds(args, started, expected, context, xfr):
    records = []
    for rnd in range(args.rounds):
        order = ("tcp", "tls") if rnd % 2 == 0 else ("tls", "tcp")
        for kind, (server, tls_port) in started.items():
            for transport in order:
                r = axfr_once(server, tls_port, transport, expected, context, xfr)
                records.append(dict(r, server=kind, round=rnd, mode=f"axfr-{transport}"))
                print(f"  {kind:5} {transport:4} {r['wall_s']:.2f} s, server CPU "
                      f"{r['server_s']:.2f} s, client CPU {r['client_s']:.2f} s", flush=True)
    return records


def axfr_once(server, tls_port, transport, expected, context, xfr):
    cpu_before = server.cpu_seconds()
    if transport == "tls":
        seconds, size, client_cpu = xfr.axfr_count(tls_port, expected, context, HOST)
    else:
        seconds, size, client_cpu = xfr.axfr_count(server.port, expected)
    time.sleep(0.2)  # the server's bookkeeping after the last message
    return {"wall_s": seconds, "server_s": server.cpu_seconds() - cpu_before,
            "client_s": client_cpu, "bytes": size}


def start_primary(kind, args, tools, cert, zone, xfr):
    """`kind` serving `zone` as a primary that allows TSIG-signed transfers over TCP and
    TLS; (Server, TLS port)."""
    import servers  # noqa: E402
    port, tls = peers.free_port(), peers.Tls(peers.free_port(), *cert)
    work = xfr.fresh(os.path.join(args.work, "tls-axfr", kind))
    entry = {"origin": xfr.ORIGIN, "file": zone}
    if kind == "tern":
        argv = servers.tern(port, work, tools["ternd"], [entry], extra=peers.tern_tls_table(tls))
        _quiet_tern(argv[-1])
    elif kind == "nsd":
        argv = nsd_primary(port, work, zone, tls, servers)
    else:
        argv = bind_primary(port, work, zone, tls, servers)
    return xfr.launch(kind, port, work, argv, bench.SERVER_CPU), tls.port


def _quiet_tern(config):
    """servers.tern logs at debug (for the interop tests); a benchmark logs warnings."""
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text.replace('level = "debug"', 'level = "warn"'))


def nsd_primary(port, work, zone, tls, servers):
    extra = (f'  verbosity: 1\n  ip-address: 127.0.0.1@{tls.port}\n  tls-port: {tls.port}\n'
             f'  tls-service-pem: "{tls.certificate}"\n  tls-service-key: "{tls.key}"\n')
    conf = peers.nsd_server(port, work, extra)
    conf += f'key:\n  name: "{servers.KEY}"\n  algorithm: hmac-sha256\n  secret: "{servers.SECRET}"\n'
    conf += f'zone:\n  name: "{datasets.ORIGIN}"\n  zonefile: "{zone}"\n  provide-xfr: 127.0.0.1 {servers.KEY}\n'
    path = os.path.join(work, "nsd.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["nsd", "-d", "-c", path]


def bind_primary(port, work, zone, tls, servers):
    conf = f'tls bench-tls {{ cert-file "{tls.certificate}"; key-file "{tls.key}"; }};\n'
    conf += servers.bind_head(port, work) + f"""  listen-on port {tls.port} tls bench-tls {{ 127.0.0.1; }};
  allow-transfer {{ key "{servers.KEY}"; }};
}};
controls {{ }};
zone "{datasets.ORIGIN}" {{ type primary; file "{zone}"; notify no; }};
"""
    path = os.path.join(work, "named.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["named", "-g", "-n", "1", "-U", "1", "-c", path]


def axfr_table(records, kinds):
    lines = ["| primary | transport | wall s | server CPU s | client CPU s | MB sent |",
             "|---|---|---:|---:|---:|---:|"]
    for kind in kinds:
        for mode in ("axfr-tcp", "axfr-tls"):
            m = {f: median_of(records, kind, mode, f) for f in ("wall_s", "server_s", "client_s", "bytes")}
            if m["wall_s"] is None:
                continue
            lines.append(f"| {kind} | {mode[5:].upper()} | {m['wall_s']:.2f} | {m['server_s']:.2f} | "
                         f"{m['client_s']:.2f} | {m['bytes'] / 1e6:.1f} |")
    lines.append("")
    for kind in kinds:
        target = "≤ 1.2" if kind == "tern" else "(no target)"
        lines.append(ratio_line(f"{kind}: AXFR time over TLS ÷ over TCP",
                                ratio(records, (kind, "axfr-tls"), (kind, "axfr-tcp"), "wall_s"),
                                target))
    return lines


# --- main --------------------------------------------------------------------------

def prepare_tools(args):
    """The C tools, ternd, and the TLS client beside it (target/PROFILE/examples)."""
    tools = datasets.build_tools(os.path.join(args.work, "tools"))
    tools["ternd"] = args.tern or peers.default_ternd(REPO)
    tools["tls_fresh"] = os.path.join(os.path.dirname(tools["ternd"]), "examples", "tls_fresh")
    if "fresh" in args.only and not os.access(tools["tls_fresh"], os.X_OK):
        sys.exit(f"{tools['tls_fresh']} is missing: cargo build --profile "
                 f"{peers.BENCH_PROFILE} -p ternd --example tls_fresh")
    return tools


def main():
    args = parse_args()
    if args.report:
        with open(args.report) as f:
            saved = json.load(f)
        print("\n".join(render(saved["meta"], saved["records"])))
        return
    os.sched_setaffinity(0, {bench.CLIENT_CPU})
    os.makedirs(args.work, exist_ok=True)
    tools = prepare_tools(args)
    kinds = []
    for kind in [k.strip() for k in args.servers.split(",") if k.strip()]:
        reason = (peers.missing_reason(kind, tools["ternd"]) if kind in peers.TLS_KINDS
                  else f"{kind} does not serve DNS over TLS here")
        print(f"{kind}: SKIPPED — {reason}") if reason else kinds.append(kind)
    cert = make_certificate(os.path.join(args.work, "tls-pki"))
    started = time.time()
    records = run_queries(args, kinds, tools, cert)
    if "axfr" in args.only:
        records += run_axfr(args, kinds, tools, cert)
    report(args, tools, records, started)


def report(args, tools, records, started):
    meta = {"command": " ".join(["python3 bench/tls.py"] + sys.argv[1:]),
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
            "minutes": round((time.time() - started) / 60, 1), "ternd": tools["ternd"],
            "tree": bench.git_head(), "machine": bench.machine_notes()}
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started))
    with open(os.path.join(args.work, f"tls-results-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
    print("\n" + "\n".join(render(meta, records)))


def render(meta, records):
    """The Markdown report of a run: its command and date, then the tables."""
    kinds = [k for k in peers.TLS_KINDS if any(r["server"] == k for r in records)]
    rounds = len({r["round"] for r in records})
    lines = [f"`{meta['command']}`, {meta['started']}, {meta['minutes']} min, tree at "
             f"`{meta['tree']}`; medians of {rounds} rounds", ""]
    lines += query_tables(records, kinds)
    if any(r["mode"].startswith("axfr") for r in records):
        lines += axfr_table(records, kinds)
    return lines


if __name__ == "__main__":
    main()
