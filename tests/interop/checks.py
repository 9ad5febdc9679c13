"""What the interoperability scenarios check with: queries, AXFR, waiting for serials."""

import time

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.tsigkeyring

from servers import KEY, SECRET

KEYRING = dns.tsigkeyring.from_text({KEY: ("hmac-sha256", SECRET)})


class Failure(Exception):
    """A check that did not hold."""


def check(condition, what):
    if not condition:
        raise Failure(what)


def soa_serial(port, zone, timeout=0.5):
    """The serial `port` serves for `zone` (authoritative NOERROR), else None."""
    query = dns.message.make_query(zone, "SOA")
    try:
        answer = dns.query.udp(query, "127.0.0.1", port=port, timeout=timeout)
    except Exception:
        return None
    if answer.rcode() != dns.rcode.NOERROR or not answer.answer:
        return None
    return answer.answer[0][0].serial


def rcode(port, zone, qtype="SOA"):
    query = dns.message.make_query(zone, qtype)
    try:
        return dns.query.udp(query, "127.0.0.1", port=port, timeout=1).rcode()
    except Exception:
        return None


def wait_serial(port, zone, serial, timeout=30.0, who=""):
    """Waits until `port` serves `serial` for `zone`; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = soa_serial(port, zone)
        if last == serial:
            return
        time.sleep(0.05)
    raise Failure(f"{who} port {port}: {zone} at serial {last}, not {serial}, after {timeout}s")


def axfr(port, zone):
    """The zone as served by `port` (TSIG-signed AXFR), as a sorted list of text lines."""
    records = set()
    for message in dns.query.xfr("127.0.0.1", zone, port=port, keyring=KEYRING, keyname=KEY,
                                 relativize=False, lifetime=30):
        for rrset in message.answer:
            for rdata in rrset:
                records.add(f"{rrset.name.to_text().lower()} {rrset.ttl} "
                            f"{dns.rdatatype.to_text(rrset.rdtype)} {rdata.to_text().lower()}")
    return sorted(records)


def same_zone(reference_port, port, zone, who):
    ours, theirs = axfr(reference_port, zone), axfr(port, zone)
    missing = sorted(set(ours) - set(theirs))[:5]
    extra = sorted(set(theirs) - set(ours))[:5]
    check(ours == theirs, f"{who}: copy of {zone} differs: missing {missing}, extra {extra}")


def log_of(server):
    with open(server.log_path, errors="replace") as f:
        return f.read()
