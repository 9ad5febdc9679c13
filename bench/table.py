"""Markdown tables from benchmark records (medians over repeats, ranges beside them).

Render order follows the servers as given; ratios compare each server with Knot DNS,
the zone-store targets being load time ≤ ⅓ and PSS ≤ ½ of Knot's (docs/benchmarks.md).
"""

import statistics

MODE_TITLES = {
    "udp": "UDP, DO=0",
    "do": "UDP, DO=1 (signed zone)",
    "tcp": "TCP, pipelined on 4 persistent connections",
    "fresh": "TCP, fresh connection per query",
}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _order(records, key):
    seen = []
    for r in records:
        if r[key] not in seen:
            seen.append(r[key])
    return seen


def _fmt(value, spec):
    return "—" if value is None else format(value, spec)


def throughput(records, size):
    """Medians per mode and server. CPU is split into user and kernel time, and the
    queries answered per context switch show how well the server's waits were batched."""
    rows = [r for r in records if r["size"] == size and r["mode"] in MODE_TITLES]
    if not rows:
        return []
    lines = ["| mode | server | qps (median) | qps (min–max) | server CPU µs/query "
             "| user + kernel µs | queries per switch | lost % | answers (first round) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for mode in [m for m in MODE_TITLES if any(r["mode"] == m for r in rows)]:
        for server in _order(rows, "server"):
            runs = [r for r in rows if r["mode"] == mode and r["server"] == server]
            if runs:
                lines.append(_throughput_row(mode, server, runs))
    return lines


def _throughput_row(mode, server, runs):
    def med(field):
        return _median([r.get(field) for r in runs])

    user, kernel = med("user_us"), med("sys_us")
    split = "—" if user is None or kernel is None else f"{user:.2f} + {kernel:.2f}"
    qps = [r["qps"] for r in runs]
    return (f"| {MODE_TITLES[mode]} | {server} | {_median(qps):,.0f} | "
            f"{min(qps):,.0f}–{max(qps):,.0f} | {_fmt(med('cpu_us'), '.2f')} | {split} | "
            f"{_fmt(med('per_switch'), '.1f')} | {_fmt(med('lost'), '.2f')} | "
            f"{runs[0].get('rcodes') or '—'} |")


def load_memory(records, size):
    rows = [r for r in records if r["size"] == size and r["mode"] == "load"]
    if not rows:
        return []
    lines = ["| server | zone | load s (median) | load × Knot | PSS MiB (median) | PSS × Knot |",
             "|---|---|---:|---:|---:|---:|"]
    for zone in _order(rows, "zone"):
        knot = [r for r in rows if r["server"] == "knot" and r["zone"] == zone]
        knot_load = _median([r["load_s"] for r in knot])
        knot_pss = _median([r["pss_kb"] for r in knot])
        for server in _order(rows, "server"):
            runs = [r for r in rows if r["server"] == server and r["zone"] == zone]
            if not runs:
                continue
            load = _median([r["load_s"] for r in runs])
            pss = _median([r["pss_kb"] for r in runs])
            load_ratio = load / knot_load if knot_load else None
            pss_ratio = pss / knot_pss if knot_pss else None
            lines.append(f"| {server} | {zone} | {load:.2f} | {_fmt(load_ratio, '.2f')} | "
                         f"{pss / 1024:,.1f} | {_fmt(pss_ratio, '.2f')} |")
    return lines


PEERS = ("knot", "nsd", "bind")


def _value(rows, server, mode, repeat, field):
    """`field` of one server's session in one mode: one round's, or the median of all."""
    runs = [r for r in rows if r["server"] == server and r["mode"] == mode
            and (repeat is None or r["repeat"] == repeat)]
    return _median([r.get(field) for r in runs])


def _ratio(a, b):
    return a / b if a is not None and b else None


def _best_peer(rows, mode, repeat, field, best):
    values = [_value(rows, p, mode, repeat, field) for p in PEERS]
    values = [v for v in values if v is not None]
    return best(values) if values else None


# Issue #5's targets: (what, mode, field, the server compared with, goal, passes).
# "peer" compares with the best peer of the round: the lowest CPU, the highest qps.
TARGETS = [
    ("UDP DO=0, CPU × Knot DNS", "udp", "cpu_us", "knot", "≤ 0.85", lambda r: r <= 0.85),
    ("UDP DO=0, CPU × NSD", "udp", "cpu_us", "nsd", "≤ 0.85", lambda r: r <= 0.85),
    ("UDP DO=0, CPU × floor", "udp", "cpu_us", "floor", "≤ 1.15", lambda r: r <= 1.15),
    ("UDP DO=0, qps × best peer", "udp", "qps", "peer", "≥ 1", lambda r: r >= 1),
    ("UDP DO=1, CPU × Knot DNS", "do", "cpu_us", "knot", "≤ 0.85", lambda r: r <= 0.85),
    ("UDP DO=1, CPU × NSD", "do", "cpu_us", "nsd", "≤ 0.85", lambda r: r <= 0.85),
    ("UDP DO=1, CPU × floor", "do", "cpu_us", "floor", "≤ 1.15", lambda r: r <= 1.15),
    ("UDP DO=1, qps × best peer", "do", "qps", "peer", "≥ 1", lambda r: r >= 1),
    ("TCP pipelined, CPU × best peer", "tcp", "cpu_us", "peer", "≤ 1", lambda r: r <= 1),
    ("TCP fresh, qps × best peer", "fresh", "qps", "peer", "≥ 1", lambda r: r >= 1),
]


def _target_ratio(rows, mode, field, other, repeat):
    tern = _value(rows, "tern", mode, repeat, field)
    if other == "peer":
        base = _best_peer(rows, mode, repeat, field, min if field == "cpu_us" else max)
    else:
        base = _value(rows, other, mode, repeat, field)
    return _ratio(tern, base)


def targets(records, size):
    """Tern's ratios for issue #5's UDP and TCP targets: from the run's medians (the
    verdict) and round by round (how much the machine moved them)."""
    rows = [r for r in records if r["size"] == size and r["mode"] in MODE_TITLES]
    if not any(r["server"] == "tern" for r in rows):
        return []
    repeats = sorted({r["repeat"] for r in rows})
    rounds = " | ".join(f"round {i + 1}" for i in repeats)
    lines = [f"| target (issue #5) | goal | run (medians) | {rounds} |",
             "|---|---|---:|" + "---:|" * len(repeats)]
    for what, mode, field, other, goal, passes in TARGETS:
        run = _target_ratio(rows, mode, field, other, None)
        if run is None:
            continue
        cells = [_fmt(_target_ratio(rows, mode, field, other, i), ".2f") for i in repeats]
        verdict = "met" if passes(run) else "**not met**"
        lines.append(f"| {what} | {goal} | {run:.2f} ({verdict}) | " + " | ".join(cells) + " |")
    return lines


def render(records, meta):
    out = [f"Run {meta['started']} ({meta['minutes']:.0f} min): `{meta['command']}`", ""]
    machine = meta["machine"]
    out += [f"Machine: {machine['cpu']}, Linux {machine['kernel']}; {machine['knot']}, "
            f"{machine['nsd']}, {machine['bind']}, dnsperf {machine['dnsperf']}."]
    if meta.get("ternd"):
        out.append(f"Tern: {meta['ternd']}.")
    out.append("")
    for size in _order(records, "size"):
        table = throughput(records, size)
        if table:
            out += [f"#### {size:,} delegations: throughput", ""] + table + [""]
        table = targets(records, size)
        if table:
            out += [f"#### {size:,} delegations: issue #5's targets, Tern's ratios", ""]
            out += table + [""]
        table = load_memory(records, size)
        if table:
            out += [f"#### {size:,} delegations: load time and memory", ""] + table + [""]
    errors = [r for r in records if r["mode"] == "error"]
    for r in errors:
        out.append(f"* error: {r['server']} {r['size']} {r['zone']} round {r['repeat'] + 1}: "
                   f"{r['error'].splitlines()[0] if r['error'] else ''}")
    return "\n".join(out) + "\n"
