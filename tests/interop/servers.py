"""Knot DNS, NSD, BIND and Tern as primaries and secondaries on loopback, with TSIG.

Each builder writes a configuration into the server's work directory and returns the
argv; `launch` starts it through `bench/peers.py`'s `Server` (own process group, log
file). Every server of a run shares one TSIG key (`KEY`), required for transfers and
for NOTIFY.
"""

import base64
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench"))

import peers  # noqa: E402

KEY = "xfr.key."
SECRET = base64.b64encode(b"tern interop transfer key 32 by!").decode()
UPDATE_KEY = "upd.key."
UPDATE_SECRET = base64.b64encode(b"tern interop update key, 32 byte").decode()
WRONG_SECRET = base64.b64encode(b"not the secret the primary knows").decode()


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def tern(port, work, tern_bin, zones, secret=SECRET, extra=""):
    """Tern with `zones`: dicts with origin, and file (primary) or primary=(host, port)
    (secondary); `notify` lists (host, port) targets; `via` is the address its remotes are
    sent to from; `acls` names more `[[acl]]`s (declared in `extra`); `settings` is more
    of the zone's lines (such as `dnssec-policy = "p"`); every zone allows transfers with
    the key from loopback."""
    remotes, zone_text, seen = [], [], {}

    def remote(addr, via=None):
        rid = f"r{addr[1]}" + (f"-via-{via.replace('.', '-')}" if via else "")
        if rid not in seen:
            seen[rid] = True
            line = f'[[remote]]\nid = "{rid}"\naddress = "{addr[0]}:{addr[1]}"\nkey = "{KEY}"\n'
            remotes.append(line + (f'via = "{via}"\n' if via else ""))
        return rid

    for z in zones:
        acls = ", ".join(f'"{a}"' for a in ["xfr", *z.get("acls", [])])
        lines = [f'[[zone]]\nname = "{z["origin"]}"\nacl = [{acls}]\n']
        if "file" in z:
            lines.append(f'file = "{z["file"]}"\n')
        if "primary" in z:
            lines.append(f'primary = "{remote(z["primary"], z.get("via"))}"\n')
        lines.append(z.get("settings", ""))
        notify = [remote(a, z.get("via")) for a in z.get("notify", [])]
        lines.append(f"notify = {notify!r}\n".replace("'", '"'))
        zone_text.append("".join(lines))
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[log]
level = "debug"
[[key]]
name = "{KEY}"
secret = "{secret}"
[[acl]]
id = "xfr"
address = "127.0.0.0/8"
key = "{KEY}"
action = ["transfer"]
{extra}
{''.join(remotes)}
{''.join(zone_text)}"""
    path = os.path.join(work, "ternd.toml")
    _write(path, conf)
    return [tern_bin, "--config", path]


def knot_base(port, work):
    """The start of a Knot DNS configuration: one worker of each kind on `port`, logs to
    stderr, its control socket and storage in `work`, and the run's key (the `key:`
    section stays open for more)."""
    return f"""server:
  rundir: {work}
  listen: 127.0.0.1@{port}
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
log:
  - target: stderr
    any: info
control:
  listen: {work}/knot.sock
database:
  storage: {work}
key:
  - id: {KEY}
    algorithm: hmac-sha256
    secret: {SECRET}
"""


def knot(port, work, zones):
    """Knot DNS; a zone with `primary` is a secondary, else a primary from `file` that
    keeps the differences of reloads for IXFR and notifies `notify`; a zone with
    `update` takes updates signed with `UPDATE_KEY` (a secondary forwards them)."""
    remotes, zone_lines = {}, []
    for z in zones:
        for addr in [z["primary"]] if "primary" in z else z.get("notify", []):
            remotes[f"r{addr[1]}"] = addr
    for z in zones:
        acl = "notify, transfer, update" if z.get("update") else "notify, transfer"
        line = f"  - domain: {z['origin']}\n    acl: [{acl}]\n"
        if "primary" in z:
            line += f"    master: r{z['primary'][1]}\n    file: {work}/{z['origin']}zone\n"
        else:
            line += f"    file: {z['file']}\n"
            if z.get("notify"):
                line += f"    notify: [{', '.join('r' + str(a[1]) for a in z['notify'])}]\n"
        zone_lines.append(line)
    remote_text = "".join(
        f"  - id: {rid}\n    address: {a[0]}@{a[1]}\n    key: {KEY}\n" for rid, a in remotes.items()
    )
    conf = knot_base(port, work) + f"""  - id: {UPDATE_KEY}
    algorithm: hmac-sha256
    secret: {UPDATE_SECRET}
{"remote:" + chr(10) + remote_text if remote_text else ""}
acl:
  - id: update
    address: 127.0.0.0/8
    key: {UPDATE_KEY}
    action: update
  - id: notify
    address: 127.0.0.0/8
    key: {KEY}
    action: notify
  - id: transfer
    address: 127.0.0.0/8
    key: {KEY}
    action: transfer
template:
  - id: default
    storage: {work}
    zonefile-sync: 0
    zonefile-load: difference
    journal-content: changes
    semantic-checks: off
zone:
{''.join(zone_lines)}"""
    path = os.path.join(work, "knot.conf")
    _write(path, conf)
    return ["knotd", "-c", path]


def nsd(port, work, zones):
    """NSD as a secondary of each zone's `primary`, or a primary serving `file`."""
    zone_text = "".join(
        f'zone:\n  name: "{z["origin"]}"\n  zonefile: "{work}/{z["origin"]}zone"\n'
        f'  request-xfr: {z["primary"][0]}@{z["primary"][1]} {KEY}\n'
        f'  allow-notify: 127.0.0.1 {KEY}\n  provide-xfr: 127.0.0.1 {KEY}\n'
        if "primary" in z
        else f'zone:\n  name: "{z["origin"]}"\n  zonefile: "{z["file"]}"\n  provide-xfr: 127.0.0.1 {KEY}\n'
        for z in zones
    )
    key = f'key:\n  name: "{KEY}"\n  algorithm: hmac-sha256\n  secret: "{SECRET}"\n'
    conf = peers.nsd_server(port, work, "  verbosity: 2\n") + key + zone_text
    path = os.path.join(work, "nsd.conf")
    _write(path, conf)
    return ["nsd", "-d", "-c", path]


def bind_head(port, work):
    """The start of a BIND configuration: the run's key, and the `options` every
    scenario's named takes (port, loopback, no recursion, files in `work`); the
    `options` block stays open for more."""
    return f"""key "{KEY}" {{ algorithm hmac-sha256; secret "{SECRET}"; }};
options {{
  directory "{work}";
  listen-on port {port} {{ 127.0.0.1; }};
  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  pid-file "{work}/named.pid";
  session-keyfile "{work}/session.key";
"""


def bind(port, work, zones):
    """BIND; a zone with `primary` is a secondary, else a primary from `file` that keeps
    the differences of reloads for IXFR and notifies `notify`."""
    zone_text = []
    for z in zones:
        if "primary" in z:
            host, p = z["primary"]
            zone_text.append(
                f'zone "{z["origin"]}" {{ type secondary; file "{work}/{z["origin"]}bk"; '
                f'primaries port {p} {{ {host} key "{KEY}"; }}; notify no; }};\n'
            )
        else:
            also = "".join(f"{h} port {p} key \"{KEY}\"; " for h, p in z.get("notify", []))
            zone_text.append(
                f'zone "{z["origin"]}" {{ type primary; file "{z["file"]}"; ixfr-from-differences yes; '
                f'notify explicit; also-notify {{ {also} }}; }};\n'
            )
    conf = bind_head(port, work) + f"""  allow-transfer {{ key "{KEY}"; }};
  allow-notify {{ key "{KEY}"; }};
  check-names primary ignore;
  check-names secondary ignore;
}};
controls {{ }};
{''.join(zone_text)}"""
    path = os.path.join(work, "named.conf")
    _write(path, conf)
    return ["named", "-g", "-n", "1", "-c", path]


def launch(kind, argv, port, work):
    """Starts `argv` as server `kind` (no zone waited for: secondaries start empty)."""
    os.makedirs(work, exist_ok=True)
    return peers.Server(kind, [], port, work, argv, None)
