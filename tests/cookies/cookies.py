#!/usr/bin/env python3
"""DNS cookies (RFC 7873, RFC 9018) of Tern beside BIND's and Knot DNS's, on loopback.

Every server is given the same secret, and asked with the same client cookie:
  * format: each returns the client cookie and an RFC 9018 server cookie (version 1,
    reserved zero, a timestamp within a few seconds, SipHash-2-4 over the client cookie,
    the header and the client address, checked here), the same bytes for the same second;
  * answers: for a client cookie alone, valid, renewed, expired, future, forged and odd
    server cookies, malformed options and a query without a question, Tern answers as
    BIND does (RCODE, flags, sections, whether a cookie comes back and whether it is
    valid), except where noted;
  * BADCOOKIE: Tern's (rate limiting with `require-cookie`) is the message Knot DNS
    sends for a client cookie alone, bar the ID and the server cookie's time;
  * acceptance: Tern accepts BIND's and Knot DNS's cookies (it echoes a fresh valid
    cookie), Knot DNS and BIND (with `require-server-cookie`) accept Tern's;
  * rotation: Tern given a new secret first and the old one second accepts the old
    secret's cookies and hands out the new secret's.

  cookies.py [--tern PATH] [--keep]
Exit status 1 when a check failed.
"""

import argparse
import os
import shutil
import socket
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import dns.edns  # noqa: E402
import dns.flags  # noqa: E402
import dns.message  # noqa: E402
import dns.rcode  # noqa: E402

import peers  # noqa: E402

SECRET_A = "e5e973e5a6b2a43f48e7dc849e37bfcf"
SECRET_B = "445536bcd2513298075a5d379663c962"
CLIENT = bytes.fromhex("2464c4abcf10c957")
ZONE = """$ORIGIN example.com.
$TTL 300
@ SOA ns1 hostmaster 1 3600 900 604800 300
@ NS ns1
ns1 A 192.0.2.1
www A 192.0.2.10
"""

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


# SipHash-2-4 (the RFC 9018 hash), to check server cookies independently of Tern's code.
def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & 0xFFFFFFFFFFFFFFFF


def siphash24(key, data):
    mask = 0xFFFFFFFFFFFFFFFF
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & mask
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & mask
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & mask
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & mask
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    whole = len(data) // 8 * 8
    for i in range(0, whole, 8):
        m = struct.unpack("<Q", data[i:i + 8])[0]
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    last = (len(data) & 0xFF) << 56
    for i, byte in enumerate(data[whole:]):
        last |= byte << (8 * i)
    v[3] ^= last
    rounds(2)
    v[0] ^= last
    v[2] ^= 0xFF
    rounds(4)
    return struct.pack("<Q", v[0] ^ v[1] ^ v[2] ^ v[3])


def make(secret, stamp, client=CLIENT, ip="127.0.0.1"):
    """The RFC 9018 server cookie `secret` makes for `client` at `ip`, stamped `stamp`."""
    head = bytes([1, 0, 0, 0]) + struct.pack(">I", stamp & 0xFFFFFFFF)
    return head + siphash24(bytes.fromhex(secret), client + head + socket.inet_aton(ip))


# RFC 9018 Appendix A.1, so that the checks below check something.
assert make("e5e973e5a6b2a43f48e7dc849e37bfcf", 1559731985, bytes.fromhex("2464c4abcf10c957"),
            "198.51.100.100").hex() == "010000005cf79f111f8130c3eee29480"


def valid(secret, cookie):
    """True when `cookie` (the option's data) is `secret`'s cookie for CLIENT at 127.0.0.1
    stamped within 5 s of now."""
    if cookie is None or len(cookie) != 24 or cookie[:8] != CLIENT:
        return False
    stamp = struct.unpack(">I", cookie[12:16])[0]
    return abs(stamp - int(time.time())) <= 5 and cookie[8:] == make(secret, stamp)


def query(cookie, name="www.example.com", no_question=False):
    options = [dns.edns.GenericOption(10, cookie)] if cookie is not None else []
    wire = dns.message.make_query(name, "A", use_edns=0, options=options).to_wire()
    if no_question:
        question = len(dns.name.from_text(name).to_wire()) + 4
        wire = wire[:4] + b"\x00\x00" + wire[6:12] + wire[12 + question:]
    return wire


def ask(port, wire):
    """(summary, cookie data or None, raw answer), or ("timeout", None, None)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(wire, ("127.0.0.1", port))
        try:
            data = s.recv(65535)
        except socket.timeout:
            return "timeout", None, None
    answer = dns.message.from_wire(data)
    cookies = [o for o in (answer.options or []) if o.otype == 10]
    cookie = cookies[0].to_wire() if cookies else None
    summary = (f"{dns.rcode.to_text(answer.rcode())} {dns.flags.to_text(answer.flags)} "
               f"q={len(answer.question)} an={len(answer.answer)} au={len(answer.authority)}")
    return summary, cookie, data


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def bind_argv(work, port, zone, strict):
    conf = f"""options {{
  directory "{work}";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  pid-file "{work}/named.pid";
  session-keyfile "{work}/session.key";
  cookie-secret "{SECRET_A}";
  require-server-cookie {"yes" if strict else "no"};
}};
controls {{ }};
zone "example.com" {{ type primary; file "{zone}"; }};
"""
    write(os.path.join(work, "named.conf"), conf)
    return ["named", "-g", "-n", "1", "-c", os.path.join(work, "named.conf")]


def knot_argv(work, port, zone):
    conf = f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: stderr
    any: notice
database:
  storage: {work}
mod-cookies:
  - id: shared
    secret: 0x{SECRET_A}
template:
  - id: default
    storage: {work}
    global-module: mod-cookies/shared
zone:
  - domain: example.com
    file: {zone}
"""
    write(os.path.join(work, "knot.conf"), conf)
    return ["knotd", "-c", os.path.join(work, "knot.conf")]


def tern_argv(work, port, zone, tern_bin, extra):
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/storage"
{extra}
[[zone]]
name = "example.com"
file = "{zone}"
"""
    write(os.path.join(work, "ternd.toml"), conf)
    return [tern_bin, "--config", os.path.join(work, "ternd.toml")]


def launch(servers, root, kind, build, zone, *args):
    """Starts server `kind` (its configuration made by `build`) and adds it to `servers`;
    returns its port."""
    work = os.path.join(root, kind)
    os.makedirs(work, exist_ok=True)
    port = peers.free_port()
    argv = build(work, port, zone, *args)
    server = peers.Server(kind, [peers.Zone("example.com.", zone)], port, work, argv, None)
    servers.append(server)
    server.wait_answering(timeout=30)
    return port


CASES = [
    ("client cookie alone", lambda now: CLIENT),
    ("valid, fresh", lambda now: CLIENT + make(SECRET_A, now)),
    ("valid, 40 minutes old (renewed)", lambda now: CLIENT + make(SECRET_A, now - 2400)),
    ("expired (2 hours old)", lambda now: CLIENT + make(SECRET_A, now - 7200)),
    ("10 minutes ahead", lambda now: CLIENT + make(SECRET_A, now + 600)),
    ("forged hash", lambda now: CLIENT + make(SECRET_A, now)[:8] + bytes(8)),
    ("another secret's", lambda now: CLIENT + make(SECRET_B, now)),
    ("8-byte server cookie", lambda now: CLIENT + b"\x11" * 8),
    ("32-byte server cookie", lambda now: CLIENT + b"\x11" * 32),
    ("malformed: 5 bytes", lambda now: CLIENT[:5]),
    ("malformed: 12 bytes", lambda now: CLIENT + b"\x11" * 4),
    ("malformed: 41 bytes", lambda now: CLIENT + b"\x11" * 33),
]


def compare_with_bind(bind_port, tern_port):
    for label, cookie_of in CASES:
        for no_question in (False, True):
            now = int(time.time())
            wire = query(cookie_of(now), no_question=no_question)
            theirs, their_cookie, _ = ask(bind_port, wire)
            ours, our_cookie, _ = ask(tern_port, wire)
            what = f"{label}{' (no question)' if no_question else ''}"
            same = (theirs, their_cookie is None, valid(SECRET_A, their_cookie)) == \
                (ours, our_cookie is None, valid(SECRET_A, our_cookie))
            check(same, f"as BIND: {what}: BIND {theirs} cookie={valid(SECRET_A, their_cookie)}; "
                        f"Tern {ours} cookie={valid(SECRET_A, our_cookie)}")


def compare_bad_cookie(knot_port, strict_port):
    wire = query(CLIENT)
    ask(strict_port, wire)  # the rate's one answer
    theirs = ask(knot_port, wire)
    ours = ask(strict_port, wire)
    check(theirs[0].startswith("BADCOOKIE") and ours[0].startswith("BADCOOKIE"),
          f"BADCOOKIE: Knot DNS {theirs[0]}, Tern (limited, require-cookie) {ours[0]}")
    check(valid(SECRET_A, theirs[1]) and valid(SECRET_A, ours[1]),
          "BADCOOKIE carries a valid server cookie (both)")
    # The same message bar the ID and the server cookie (its time may differ).
    mask = lambda raw: raw[2:-16]  # noqa: E731  the cookie ends the message
    check(mask(theirs[2]) == mask(ours[2]),
          f"BADCOOKIE message as Knot DNS's: {theirs[2][2:].hex()} / {ours[2][2:].hex()}")


def acceptance(bind_strict_port, knot_port, tern_port):
    made = {}
    for kind, port in (("BIND", bind_strict_port), ("Knot DNS", knot_port)):
        wire = query(CLIENT + make(SECRET_A, int(time.time())))
        made[kind] = ask(port, wire)[1]
    time.sleep(2)
    for kind, cookie in made.items():
        _, echoed, _ = ask(tern_port, query(cookie))
        check(echoed == cookie, f"Tern accepts {kind}'s cookie (echoed unchanged 2 s later)")
    _, ours, _ = ask(tern_port, query(CLIENT))
    for kind, port in (("BIND (require-server-cookie)", bind_strict_port), ("Knot DNS", knot_port)):
        summary, _, _ = ask(port, query(ours))
        check(summary.startswith("NOERROR") and "an=1" in summary, f"{kind} accepts Tern's cookie: {summary}")
        summary, _, _ = ask(port, query(CLIENT))
        check(summary.startswith("BADCOOKIE"), f"{kind} refuses a client cookie alone: {summary}")


def rotation(rotated_port):
    """Tern with [B, A]: an A cookie (from BIND, say) is valid (with a rate of 1 and no
    slip, only a valid cookie gets three answers in a row), and a B cookie comes back."""
    old = CLIENT + make(SECRET_A, int(time.time()))
    answers = [ask(rotated_port, query(old)) for _ in range(3)]
    check(all(a[0].startswith("NOERROR") for a in answers), "rotated: the old secret's cookie is accepted")
    check(valid(SECRET_B, answers[-1][1]), "rotated: a new secret's cookie is handed out")
    forged = query(CLIENT + make(SECRET_B, int(time.time()))[:8] + bytes(8))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(3):  # at once, so that the rate does not refill meanwhile
            s.sendto(forged, ("127.0.0.1", rotated_port))
        s.settimeout(0.5)
        answered = 0
        try:
            while s.recv(65535):
                answered += 1
        except socket.timeout:
            pass
    check(answered == 1, f"rotated: a forged cookie is limited ({answered} of 3 answered)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tern", default=os.environ.get("TERND") or peers.default_ternd(REPO, "release"))
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()
    for program in ("named", "knotd"):
        if shutil.which(program) is None:
            print(f"skipped: {program} is not installed")
            return 0
    if not os.access(args.tern, os.X_OK):
        print(f"skipped: no ternd at {args.tern}")
        return 0
    root = tempfile.mkdtemp(prefix="tern-cookies-")
    zone = os.path.join(root, "example.com.zone")
    write(zone, ZONE)
    servers = []
    try:
        bind_port = launch(servers, root, "bind", bind_argv, zone, False)
        strict_port = launch(servers, root, "bind-strict", bind_argv, zone, True)
        knot_port = launch(servers, root, "knot", knot_argv, zone)
        tern_port = launch(servers, root, "tern", tern_argv, zone, args.tern,
                           f'[cookies]\nsecret = "{SECRET_A}"\n')
        limited_port = launch(
            servers, root, "tern-limited", tern_argv, zone, args.tern,
            f'[cookies]\nsecret = "{SECRET_A}"\n[rrl]\nrate = 1\nslip = 1\nrequire-cookie = true\n')
        rotated_port = launch(
            servers, root, "tern-rotated", tern_argv, zone, args.tern,
            f'[cookies]\nsecret = ["{SECRET_B}", "{SECRET_A}"]\n[rrl]\nrate = 1\nslip = 0\n')
        _, first, _ = ask(tern_port, query(CLIENT))
        _, bind_first, _ = ask(bind_port, query(CLIENT))
        check(valid(SECRET_A, first), f"Tern's server cookie is RFC 9018's: {first and first.hex()}")
        check(valid(SECRET_A, bind_first), f"BIND's too: {bind_first and bind_first.hex()}")
        compare_with_bind(bind_port, tern_port)
        compare_bad_cookie(knot_port, limited_port)
        acceptance(strict_port, knot_port, tern_port)
        rotation(rotated_port)
    finally:
        for server in servers:
            server.stop()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(failures)} check(s) failed" if failures else "all cookie checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
