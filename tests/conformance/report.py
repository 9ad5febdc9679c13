"""Verdicts and reports: where the servers differ, and whether Tern is explained.

Peers (Knot DNS, NSD) are compared with each other to show where the reference servers
themselves differ; Tern passes a query when its normalized answer equals Knot's or NSD's,
is *allowed* when it matches neither but an allowlist entry (with its RFC reason) covers
the query, and fails otherwise.

Differences are summarized by a *signature*: for each differing field, what differs
(e.g. `authority: nsd has +NS` or `rcode: knot NOERROR / nsd NXDOMAIN`), so that one
behaviour seen in a thousand queries is one line of the summary.
"""

import fnmatch
import json
import os
import tomllib
from collections import Counter, defaultdict

from normalize import SECTIONS, differing_fields, section_delta


class Allowlist:
    """Documented exceptions: queries where Tern may match neither peer."""

    def __init__(self, path):
        self.entries = []
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                self.entries = tomllib.load(f).get("allow", [])
        for entry in self.entries:
            if not entry.get("match") or not entry.get("reason"):
                raise ValueError(f"{path}: every [[allow]] needs `match` and `reason`")
        self.used = Counter()

    def find(self, key):
        for i, entry in enumerate(self.entries):
            if fnmatch.fnmatchcase(key, entry["match"]):
                self.used[i] += 1
                return entry
        return None

    def unused(self):
        return [e for i, e in enumerate(self.entries) if not self.used[i]]


def _short(value, width=70):
    value = (value or "").replace("\n", " | ")
    return value if len(value) <= width else value[: width - 1] + "…"


def _brief(answer):
    return f"{answer.get('result')} {answer.get('rcode', '')}".strip()


def _token_delta(a, b):
    """Words of `a` missing from `b` and of `b` missing from `a`, in their order."""
    left, right = (a or "").split(), (b or "").split()
    extra_left, extra_right = Counter(left) - Counter(right), Counter(right) - Counter(left)
    return _keep(left, extra_left), _keep(right, extra_right)


def _keep(words, wanted):
    kept = []
    for word in words:
        if wanted[word] > 0:
            wanted[word] -= 1
            kept.append(word)
    return " ".join(kept)


def signature(a_name, a, b_name, b):
    """One line saying how normalized answer `a` differs from `b`."""
    if a.get("result") != b.get("result"):
        return f"result: {a_name} {_brief(a)!r} / {b_name} {_brief(b)!r}"
    parts = []
    for field in differing_fields(a, b):
        if field in SECTIONS:
            only_a, only_b = section_delta(a, b, field)
            for who, lines in ((a_name, only_a), (b_name, only_b)):
                if lines:
                    types = sorted({line.split()[3] for line in lines})
                    parts.append(f"{field}: {who} has +{','.join(types)}")
        else:
            only_a, only_b = _token_delta(a.get(field), b.get(field))
            parts.append(f"{field}: {a_name} {_short(only_a, 40)!r} / "
                         f"{b_name} {_short(only_b, 40)!r}")
    return "; ".join(parts)


def detail(names, answers):
    """Markdown lines showing the fields in which the answers differ."""
    first = answers[0]
    fields = []
    for other in answers[1:]:
        fields += [f for f in differing_fields(first, other) if f not in fields]
    lines = []
    for field in fields:
        lines.append(f"  * {field}:")
        if field in SECTIONS:
            for name, other in zip(names[1:], answers[1:]):
                only_first, only_other = section_delta(first, other, field)
                lines += [f"    - only {names[0]} (vs {name}): `{line}`" for line in only_first]
                lines += [f"    - only {name}: `{line}`" for line in only_other]
            continue
        for name, answer in zip(names, answers):
            lines.append(f"    - {name}: `{_short(answer.get(field), 400)}`")
    return lines


def tcp_udp_mismatch(tcp, udp):
    """Fields where a TCP answer contradicts the same server's untruncated UDP answer.

    RFC 7766 §5: TCP carries the same answers as UDP. An untruncated UDP answer may
    still leave out optional additional records (RFC 2181 §9), so its additional
    section only has to be a subset of the TCP one.
    """
    if udp.get("result") != "answer" or "tc" in udp.get("flags", "").split():
        return []
    bad = [f for f in differing_fields(tcp, udp) if f != "additional"]
    only_udp, _ = section_delta(udp, tcp, "additional")
    return bad + (["additional"] if only_udp else [])


class Verdicts:
    """Everything the run found, ready to print and write."""

    def __init__(self, queries, results, peers, tern, allowlist):
        self.queries, self.results = queries, results
        self.peers, self.tern, self.allowlist = peers, tern, allowlist
        self.peer_diffs = []  # (query index, signature)
        self.tern_outcome = Counter()  # same / knot / nsd / allowed / fail
        self.tern_fails = []  # (query index, signatures vs each peer)
        self.tern_allowed = []  # (query index, allowlist entry)
        self.tcp_mismatches = Counter()  # server -> TCP answers unlike its UDP answer
        self._judge()
        self._judge_tcp()

    def _judge(self):
        a, b = self.peers[:2] if len(self.peers) >= 2 else (None, None)
        for i in range(len(self.queries)):
            if a and self.results[a][i] != self.results[b][i]:
                self.peer_diffs.append(
                    (i, signature(a, self.results[a][i], b, self.results[b][i])))
            if self.tern:
                self._judge_tern(i)

    def _judge_tern(self, i):
        mine = self.results[self.tern][i]
        matches = [p for p in self.peers if self.results[p][i] == mine]
        if matches:
            self.tern_outcome["all peers" if len(matches) == len(self.peers)
                              else f"{'+'.join(matches)} only"] += 1
            return
        entry = self.allowlist.find(self.queries[i].key)
        if entry:
            self.tern_outcome["allowed"] += 1
            self.tern_allowed.append((i, entry))
            return
        self.tern_outcome["fail"] += 1
        sigs = [signature(self.tern, mine, p, self.results[p][i]) for p in self.peers]
        self.tern_fails.append((i, sigs))

    def _judge_tcp(self):
        """Each server's TCP answers against its own UDP answers to the same query."""
        index = {q.key: i for i, q in enumerate(self.queries)}
        for i, q in enumerate(self.queries):
            j = index.get(q.key.replace("tcp/tcp/", "matrix/udp/", 1))
            if not q.key.startswith("tcp/tcp/") or j is None:
                continue
            for server, answers in self.results.items():
                fields = tcp_udp_mismatch(answers[i], answers[j])
                if not fields:
                    continue
                self.tcp_mismatches[server] += 1
                if server == self.tern:
                    self._tern_inconsistent(i, fields)

    def _tern_inconsistent(self, i, fields):
        entry = self.allowlist.find(self.queries[i].key)
        if entry:
            self.tern_allowed.append((i, entry))
        else:
            self.tern_fails.append((i, [f"TCP answer unlike UDP in {', '.join(fields)}"]))

    def summary(self):
        """The text printed at the end of a run."""
        lines = [f"{len(self.queries)} queries to {', '.join(self.results)}"]
        if len(self.peers) >= 2:
            a, b = self.peers[:2]
            lines.append(f"{a} and {b} differ on {len(self.peer_diffs)} queries; "
                         f"by difference (count, first example):")
            for sig, count, example in self._by_signature(self.peer_diffs)[:25]:
                lines.append(f"  {count:6d}  {sig}\n          e.g. {example}")
        counts = ", ".join(f"{s} {self.tcp_mismatches[s]}" for s in self.results)
        lines.append(f"TCP answers unlike the same server's untruncated UDP answer: {counts}")
        if self.tern:
            outcome = ", ".join(f"{k}: {v}" for k, v in sorted(self.tern_outcome.items()))
            lines.append(f"{self.tern} vs peers: {outcome}")
            for sig, count, example in self._by_signature(
                    [(i, " || ".join(s)) for i, s in self.tern_fails])[:25]:
                lines.append(f"  FAIL {count:6d}  {sig}\n          e.g. {example}")
            for entry in self.allowlist.unused():
                lines.append(f"  note: allowlist entry matched nothing: {entry['match']}")
        return "\n".join(lines)

    def _by_signature(self, items):
        groups = defaultdict(list)
        for i, sig in items:
            groups[sig].append(i)
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [(sig, len(ix), self.queries[ix[0]].key) for sig, ix in ranked]

    def failed(self):
        return bool(self.tern_fails)

    def write(self, out_dir, examples=15):
        """Writes report.md (grouped, with details) and answers.jsonl (everything)."""
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "answers.jsonl"), "w") as f:
            for i, q in enumerate(self.queries):
                row = {"key": q.key, "case": q.case}
                row.update({s: self.results[s][i] for s in self.results})
                f.write(json.dumps(row) + "\n")
        lines = ["# Conformance report", "", "```", self.summary(), "```", ""]
        if self.tern:
            lines += self._section(f"{self.tern} matches no peer",
                                   [(i, " || ".join(s)) for i, s in self.tern_fails],
                                   [self.tern] + self.peers, examples)
            lines += self._section(f"{self.tern}: allowed differences",
                                   [(i, e["reason"]) for i, e in self.tern_allowed],
                                   [self.tern] + self.peers, examples)
        if len(self.peers) >= 2:
            lines += self._section("Peers differ", self.peer_diffs, self.peers[:2], examples)
        with open(os.path.join(out_dir, "report.md"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def _section(self, title, items, servers, examples):
        lines = [f"## {title} ({len(items)})", ""]
        groups = defaultdict(list)
        for i, sig in items:
            groups[sig].append(i)
        for sig, ix in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines += [f"### {len(ix)} × {sig}", ""]
            cases = Counter(self.queries[i].case for i in ix)
            lines.append("cases: " + ", ".join(f"{c} ({n})" for c, n in cases.most_common()))
            lines.append("")
            for i in ix[:examples]:
                lines.append(f"* `{self.queries[i].key}`")
                lines += detail(servers, [self.results[s][i] for s in servers])
            if len(ix) > examples:
                lines.append(f"* … and {len(ix) - examples} more (see answers.jsonl)")
            lines.append("")
        return lines
