"""Validating resolvers on loopback for the signing scenario: unbound and Knot Resolver
(kresd), caches on, each with one trust anchor and each zone it resolves routed to an
authoritative server on loopback (unbound's stub zones, kresd's FORWARD policy, which
validates). Nothing is sent off the machine: kresd's root anchor, priming and time-skew
probes are turned off, and unbound has no root anchor and only the stubs to ask.

`ask` sends one query (with the AD bit, RFC 6840 §5.7, so that an answer says whether
it validated) and returns what a check needs.
"""

import os
import time

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from checks import check


def unbound(port, work, anchor, stubs):
    """unbound on `port`: `anchor` a DNSKEY record's text, `stubs` (zone, port) pairs,
    most specific first or not (unbound picks the closest)."""
    stub_text = "".join(f'stub-zone:\n  name: "{zone}"\n  stub-addr: 127.0.0.1@{p}\n'
                        for zone, p in stubs)
    conf = f"""server:
  interface: 127.0.0.1
  port: {port}
  do-ip6: no
  num-threads: 1
  username: ""
  chroot: ""
  directory: "{work}"
  pidfile: "{work}/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  val-log-level: 2
  do-not-query-localhost: no
  module-config: "validator iterator"
  trust-anchor: "{anchor}"
  prefetch: no
  trust-anchor-signaling: no
remote-control:
  control-enable: no
{stub_text}"""
    path = os.path.join(work, "unbound.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["unbound", "-d", "-c", path]


def kresd(port, work, anchor, stubs):
    """Knot Resolver on `port`, the same anchor and routes as `unbound` (FORWARD, which
    validates; the most specific zone's rule first). kresd sends every query a client's
    question leads to (the DNSKEYs and DSes above it too) to the forwarder that the
    question's rule chose: each forwarder must serve the whole chain."""
    rules = "".join(
        f"policy.add(policy.suffix(policy.FORWARD('127.0.0.1@{p}'), {{todname('{zone}')}}))\n"
        for zone, p in sorted(stubs, key=lambda s: -len(s[0]))
    )
    conf = f"""net.listen('127.0.0.1', {port}, {{ kind = 'dns' }})
log_level('notice')
for _, m in ipairs({{'priming', 'detect_time_skew', 'detect_time_jump', 'ta_signal_query'}}) do
  pcall(modules.unload, m)
end
trust_anchors.remove('.')
trust_anchors.add('{anchor}')
cache.open(16 * MB, 'lmdb://{work}/cache')
{rules}policy.add(policy.all(policy.REFUSE))
"""
    path = os.path.join(work, "kresd.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["kresd", "-n", "-c", path, work]


def start(run, anchor, stubs, forwards, probe):
    """Both resolvers, started by `run`: unbound with `stubs`, kresd with `forwards`;
    waits (10 s at most) until each answers the query `probe` (name, type)."""
    started = {
        "unbound": run.start("unbound", lambda p, w: unbound(p, w, anchor, stubs), name="unbound"),
        "kresd": run.start("kresd", lambda p, w: kresd(p, w, anchor, forwards), name="kresd"),
    }
    for kind, server in started.items():
        deadline = time.monotonic() + 10
        while ask(server.port, *probe, timeout=0.5)[0] == "TIMEOUT" and time.monotonic() < deadline:
            time.sleep(0.1)
        check(ask(server.port, *probe)[0] != "TIMEOUT", f"{kind} does not answer:\n{server.log_tail()}")
    return started


def ask(port, name, rtype, timeout=3.0):
    """(rcode text, AD set, the answer's records as sorted text) from the resolver on
    `port`; rcode "TIMEOUT" when it did not answer."""
    query = dns.message.make_query(name, rtype)
    query.flags |= dns.flags.AD
    try:
        answer = dns.query.udp(query, "127.0.0.1", port=port, timeout=timeout)
        if answer.flags & dns.flags.TC:
            answer = dns.query.tcp(query, "127.0.0.1", port=port, timeout=timeout)
    except Exception:  # noqa: BLE001 (a timeout or a broken answer: reported as such)
        return "TIMEOUT", False, []
    records = sorted(f"{rrset.name} {dns.rdatatype.to_text(rrset.rdtype)} {rdata}"
                     for rrset in answer.answer for rdata in rrset)
    return dns.rcode.to_text(answer.rcode()), bool(answer.flags & dns.flags.AD), records

