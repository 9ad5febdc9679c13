#!/usr/bin/env python3
"""At-scale conformance: Tern against Knot DNS and NSD on a TLD-sized signed zone.

The crafted zones of the main suite have a handful of names each; this check serves the
peer harness's TLD-like zone (`bench/datasets.py`: 10,000 delegations by default, a third
of them with DS, in-zone glue, signed with NSEC3 opt-out, or with `--denial` NSEC or
salted NSEC3 without opt-out) with Knot DNS, NSD (default and minimal responses) and
Tern, and asks each the same seeded queries: lines of the harness's query mix, every type
at delegations, names below them, glue owners, names that do not exist (closest-encloser
proofs over a long NSEC3 hash chain, or NSEC covers), the apex, a fifth in mixed case,
over UDP without EDNS, with EDNS, with DO, with a 512-byte buffer, and some over TCP.

* Every query but those with DO and a 512-byte buffer passes when Tern's normalized
  answer (`normalize.py`) equals a peer's.
* DO with a 512-byte buffer truncates most signed answers, and what a truncated answer
  keeps is each server's own choice (Knot DNS, NSD and Tern all differ there). Such an
  answer is checked against Tern's own answer to the same query with a 1232-byte buffer
  (itself compared with the peers): the opcode, RCODE, flags but TC, question and OPT
  are the same; every RRset kept is whole (RFC 2181 §9); an RRSIG may be left out of the
  additional section alone (RFC 4035 §3.1.1); and TC is set exactly when a record of the
  answer or authority section, or a referral's in-domain glue (RFC 9471), is missing.
  The peers' answers are held to the same rule for comparison (reported, not judged).

  tests/conformance/scale.py [--size 10000] [--count 12000] [--tern PATH]
                             [--denial nsec3-optout|nsec|nsec3-salted]

Exit status: 0 pass (or no ternd binary yet: skipped, as the main suite skips it), 1 Tern
fails a query, 2 a peer cannot be run or leaves queries unanswered.
"""

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import datasets  # noqa: E402
import peers  # noqa: E402
from client import ask_all  # noqa: E402
from normalize import SECTIONS, differing_fields, normalize  # noqa: E402
from queries import Query  # noqa: E402

SERVERS = ("tern", "knot", "nsd", "nsd-minimal")
PEERS = SERVERS[1:]
TYPES = ["A", "AAAA", "NS", "DS", "SOA", "MX", "TXT", "CNAME", "RRSIG", "NSEC", "NSEC3",
         "NSEC3PARAM", "DNSKEY", "ANY", "TYPE666"]
# name -> Query fields
VARIANTS = {
    "plain": {},
    "edns": {"use_edns": 0},
    "do": {"use_edns": 0, "dnssec_ok": True},
    "edns512": {"use_edns": 0, "payload": 512},
    "do512": {"use_edns": 0, "payload": 512, "dnssec_ok": True},
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000, help="delegations in the zone")
    p.add_argument("--count", type=int, default=12_000, help="queries to generate")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--denial", choices=sorted(datasets.DENIALS), default="nsec3-optout",
                   help="how the zone proves non-existence (bench/datasets.py DENIALS)")
    p.add_argument("--tern", default=None,
                   help="ternd binary (default: $TERND or <cargo target>/release/ternd)")
    p.add_argument("--data", default=os.path.join(REPO, "bench", "out"),
                   help="where the data set is made and cached")
    p.add_argument("--out", default=os.path.join(HERE, "out"), help="report directory")
    return p.parse_args()


class Names:
    """The names to ask about, read from the data set."""

    def __init__(self, dataset, signed):
        with open(dataset.queries) as f:
            self.mix = [line.split() for line in f if line.strip()]
        with open(os.path.join(os.path.dirname(dataset.zone), "names.txt")) as f:
            self.delegations = f.read().split()
        # Glue owners, and the NSEC3 records' owner names: asked about, the server acts
        # as if those did not exist (RFC 5155 §7.2.8).
        self.glue = sorted(self._owners(dataset.zone, ("A", "AAAA")) - {dataset.origin})
        self.hashed = sorted(self._owners(signed, ("NSEC3",)))
        self.origin = dataset.origin

    @staticmethod
    def _owners(zone, rtypes):
        """The owner names of the records of `rtypes` in a zone file written one record
        per line with every field (`genzone.py`, `dnssec-signzone -O full`)."""
        with open(zone) as f:
            return {fields[0] for fields in map(str.split, f)
                    if len(fields) >= 4 and fields[3] in rtypes}


def pick(names, rng, i):
    """One (qname, qtype) of the seeded mix."""
    roll = rng.random()
    if roll < 0.45:
        return tuple(rng.choice(names.mix))
    if roll < 0.65:
        return rng.choice(names.delegations), rng.choice(TYPES)
    if roll < 0.75:
        return f"w{rng.randrange(100)}.{rng.choice(names.delegations)}", rng.choice(TYPES)
    if roll < 0.85 and names.glue:
        return rng.choice(names.glue), rng.choice(TYPES)
    if roll < 0.88 and names.hashed:
        return rng.choice(names.hashed), rng.choice(TYPES)
    if roll < 0.95:
        return f"nx{i}-{rng.randrange(1 << 30):x}.{names.origin}", rng.choice(TYPES)
    return names.origin, rng.choice(TYPES)


def mixed_case(name, rng):
    return "".join(c.upper() if rng.random() < 0.5 else c for c in name)


def generate(names, count, seed):
    """The queries, in a fixed order; each `do512` query follows its `do` twin."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        qname, qtype = pick(names, rng, i)
        if rng.random() < 0.2:
            qname = mixed_case(qname, rng)
        variant = rng.choice(list(VARIANTS))
        transport = "tcp" if variant in ("plain", "do") and rng.random() < 0.1 else "udp"
        if variant == "do512":
            out.append(make(qname, qtype, "do", "udp"))
        out.append(make(qname, qtype, variant, transport))
    return out


def make(qname, qtype, variant, transport):
    return Query(key=f"scale/{transport}/{variant}/{qname}/{qtype}", qname=qname,
                 qtype=qtype, transport=transport, group="scale", **VARIANTS[variant])


def variant_of(query):
    return query.key.split("/")[2]


def rrsets(text):
    """A section's lines grouped by RRset: (owner, type, type covered by an RRSIG)."""
    groups = defaultdict(list)
    for line in (text or "").splitlines():
        owner, _ttl, _cls, rtype, *rdata = line.split(" ")
        groups[(owner, rtype, rdata[0] if rtype == "RRSIG" and rdata else "")].append(line)
    return {key: sorted(lines) for key, lines in groups.items()}


def required_glue(full):
    """The additional-section RRsets a referral must carry: in-domain glue (RFC 9471)."""
    if "aa" in full["flags"].split() or full.get("answer"):
        return set()
    cuts = {owner for owner, rtype, _ in rrsets(full.get("authority")) if rtype == "NS"}
    return {key for key in rrsets(full.get("additional"))
            if key[1] in ("A", "AAAA") and any(is_at_or_below(key[0], cut) for cut in cuts)}


def is_at_or_below(name, cut):
    return name == cut or name.endswith("." + cut)


def truncation_problems(part, full):
    """What is wrong with `part`, an answer with a 512-byte buffer, given `full`, the same
    server's answer to the same query with 1232 bytes (see the module doc)."""
    if part.get("result") != "answer" or full.get("result") != "answer":
        return [] if part.get("result") == full.get("result") else ["no answer in one of them"]
    problems = [f"{f} differs from the 1232-byte answer" for f in
                ("opcode", "rcode", "question", "edns") if part.get(f) != full.get(f)]
    flags = part["flags"].split()
    if [f for f in flags if f != "tc"] != [f for f in full["flags"].split() if f != "tc"]:
        problems.append("flags other than TC differ from the 1232-byte answer")
    missing_required = False
    glue = required_glue(full)
    for section in SECTIONS:
        kept, whole = rrsets(part.get(section)), rrsets(full.get(section))
        problems += [f"{section}: {key} is not the whole RRset" for key, lines in kept.items()
                     if whole.get(key) != lines]
        needed = whole if section != "additional" else {k: whole[k] for k in glue}
        missing_required |= any(key not in kept for key in needed)
    if ("tc" in flags) != missing_required:
        problems.append("TC set though nothing required is missing" if "tc" in flags
                        else "required records are missing but TC is clear")
    return problems


def start(kinds, origin, signed, tern_bin, work):
    """The running servers, or None (after saying why) when one cannot be run."""
    zones = [peers.Zone(origin, signed)]
    running = {}
    for kind in kinds:
        reason = peers.missing_reason(kind, tern_bin=tern_bin)
        if reason:
            print(f"{kind}: cannot run — {reason}")
            break
        server = peers.start(kind, zones, peers.free_port(), os.path.join(work, kind),
                             tern_bin=tern_bin)
        running[kind] = server
        try:
            print(f"{kind}: answering after {server.wait_answering(timeout=300):.2f}s")
        except RuntimeError as err:
            print(f"{kind}: did not start: {err}")
            break
    else:
        return running
    for server in running.values():
        server.stop()
    return None


def ask(running, queries):
    """{kind: [raw answer per query]}, asking the servers in parallel."""
    started = time.monotonic()
    with ThreadPoolExecutor(len(running)) as pool:
        raw = dict(zip(running, pool.map(lambda s: ask_all(s.port, queries),
                                         running.values())))
    print(f"asked {len(queries)} queries of each server in {time.monotonic() - started:.1f}s")
    return raw


class Judge:
    """Verdicts over every query, and the report."""

    def __init__(self, denial, queries, answers):
        self.denial, self.queries, self.answers = denial, queries, answers
        self.asked, self.fails = Counter(), []
        self.peers_differ = 0
        self.peer_truncation = Counter()

    def run(self):
        for i, query in enumerate(self.queries):
            variant = variant_of(query)
            self.asked[variant] += 1
            if variant == "do512":
                self._truncated(i, query)
            else:
                self._compared(i, query)
        return self

    def _compared(self, i, query):
        tern = self.answers["tern"][i]
        peer_answers = [self.answers[p][i] for p in PEERS]
        if peer_answers[0] not in peer_answers[1:]:
            self.peers_differ += 1
        if tern not in peer_answers:
            fields = differing_fields(tern, self.answers["knot"][i])
            self.fails.append((query, f"matches no peer (vs knot: {', '.join(fields)})", i))

    def _truncated(self, i, query):
        # The `do` twin is the query just before (see `generate`).
        for kind in PEERS:
            if not truncation_problems(self.answers[kind][i], self.answers[kind][i - 1]):
                self.peer_truncation[kind] += 1
        problems = truncation_problems(self.answers["tern"][i], self.answers["tern"][i - 1])
        if problems:
            self.fails.append((query, "; ".join(problems), i))

    def summary(self):
        per_variant = ", ".join(f"{v} {n}" for v, n in sorted(self.asked.items()))
        lines = [f"{self.denial}: {sum(self.asked.values())} queries ({per_variant})",
                 f"Knot DNS and NSD (both modes) disagree on {self.peers_differ} of them",
                 f"tern fails {len(self.fails)}"]
        lines += [f"{kind} passes the 512-byte DO rule on {n} of {self.asked['do512']}"
                  for kind, n in sorted(self.peer_truncation.items())]
        return "\n".join(lines)

    def write(self, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, f"scale-report-{self.denial}.md")
        with open(path, "w") as f:
            f.write(f"# At-scale conformance\n\n```\n{self.summary()}\n```\n")
            for query, why, i in self.fails:
                f.write(f"\n## {query.key}\n\n{why}\n\n")
                for kind in SERVERS:
                    f.write(f"* {kind}: `{self.answers[kind][i]}`\n")
        return path


def main():
    args = parse_args()
    tern_bin = args.tern or peers.default_ternd(REPO, "release")
    if reason := peers.missing_reason("tern", tern_bin=tern_bin):
        print(f"tern: SKIPPED — {reason}")
        return 0
    dataset = datasets.prepare(args.size, args.data)
    signed = datasets.signed_zone(dataset, args.denial)
    queries = generate(Names(dataset, signed), args.count, args.seed)
    with tempfile.TemporaryDirectory(prefix="tern-scale-") as work:
        running = start(SERVERS, dataset.origin, signed, tern_bin, work)
        if running is None:
            return 2
        try:
            raw = ask(running, queries)
        finally:
            for server in running.values():
                server.stop()
    answers = {kind: [normalize(r) for r in raw[kind]] for kind in SERVERS}
    unanswered = [k for k in PEERS if sum(a["result"] == "answer" for a in answers[k])
                  < 0.9 * len(queries)]
    judge = Judge(args.denial, queries, answers).run()
    print(judge.summary())
    print(f"report: {judge.write(args.out)}")
    if unanswered:
        print(f"ERROR: {', '.join(unanswered)} left more than a tenth of the queries unanswered")
        return 2
    return 1 if judge.fails else 0


if __name__ == "__main__":
    sys.exit(main())
