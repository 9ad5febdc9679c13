"""Catalog zones (RFC 9432) between Tern and Knot DNS and BIND, on loopback.

  * Knot DNS produces a catalog of its zones (`catalog-role: generate`); Tern consumes
    it: the members are served, a member Knot adds is served, one it drops is not.
  * Tern produces a catalog (`catalog-role = "producer"`); Knot DNS (`interpret`) and
    BIND (`catalog-zones`) consume it: both serve the members, then a zone added to Tern
    with `ternctl zone-add` and not one removed with `ternctl zone-remove`.

Transfers and NOTIFY are signed with the run's key, as in the other scenarios.
"""

import os
import subprocess
import time

import dns.rcode

import servers
from checks import Failure, axfr, check, rcode, soa_serial
from servers import KEY, SECRET, peers

MEMBER = """$ORIGIN {zone}
$TTL 300
@ SOA ns hostmaster 1 3600 600 86400 60
@ NS ns
ns A 192.0.2.53
www A 192.0.2.1
"""


def _zone_file(work, zone):
    path = os.path.join(work, f"{zone}zone")
    servers._write(path, MEMBER.format(zone=zone))
    return path


def _wait(condition, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise Failure(what)


def _transfers(port, zone):
    try:
        return bool(axfr(port, zone))
    except Exception:
        return False


def _served(port, zone):
    return soa_serial(port, zone) is not None


def _knot_producer(port, work, members, tern_port):
    zones = "".join(
        f"  - domain: {z}\n    file: {_zone_file(work, z)}\n    acl: [transfer]\n"
        f"    catalog-role: member\n    catalog-zone: catalog.knot.\n"
        for z in members
    )
    conf = servers.knot_base(port, work) + f"""remote:
  - id: tern
    address: 127.0.0.1@{tern_port}
    key: {KEY}
acl:
  - id: transfer
    address: 127.0.0.0/8
    key: {KEY}
    action: transfer
template:
  - id: default
    storage: {work}
    semantic-checks: off
zone:
  - domain: catalog.knot.
    catalog-role: generate
    acl: [transfer]
    notify: [tern]
{zones}"""
    path = os.path.join(work, "knot.conf")
    servers._write(path, conf)
    return ["knotd", "-c", path]


def _tern(port, work, tern_bin, body):
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
added-zone-dirs = ["{work}"]
[control]
socket = "{work}/ctl.sock"
[log]
level = "debug"
[[key]]
name = "{KEY}"
secret = "{SECRET}"
[[acl]]
id = "xfr"
address = "127.0.0.0/8"
key = "{KEY}"
action = ["transfer"]
{body}"""
    path = os.path.join(work, "ternd.toml")
    servers._write(path, conf)
    return [tern_bin, "--config", path]


def knot_to_tern(run):
    tern_port = peers.free_port()
    knot = run.start("knot", lambda p, w: _knot_producer(p, w, ["k1.example.", "k2.example."], tern_port),
                     name="knot-producer")
    # Knot DNS refuses queries to a catalog zone: only its transfer shows it is there.
    _wait(lambda: _transfers(knot.port, "catalog.knot."), "Knot does not serve its catalog")
    body = f"""[[remote]]
id = "knot"
address = "127.0.0.1:{knot.port}"
key = "{KEY}"
[[template]]
id = "members"
acl = "xfr"
[[zone]]
name = "catalog.knot"
primary = "knot"
catalog-role = "consumer"
catalog-template = "members"
"""
    run.start("tern", lambda p, w: _tern(p, w, run.tern_bin, body), port=tern_port, name="tern-consumer")
    _wait(lambda: _served(tern_port, "k1.example.") and _served(tern_port, "k2.example."),
          "Tern does not serve the members of Knot's catalog")
    # Knot drops k2 and adds k3 (configuration edited, reloaded): Tern follows.
    conf = os.path.join(knot.work, "knot.conf")
    argv = _knot_producer(knot.port, knot.work, ["k1.example.", "k3.example."], tern_port)
    check(argv[-1] == conf, "knot configuration path")
    reload = subprocess.run(["knotc", "-s", os.path.join(knot.work, "knot.sock"), "reload"],
                            capture_output=True, text=True)
    check(reload.returncode == 0, f"knotc reload: {reload.stdout}{reload.stderr}")
    _wait(lambda: _served(tern_port, "k3.example."), "Tern does not serve the member Knot added")
    _wait(lambda: rcode(tern_port, "k2.example.") == dns.rcode.REFUSED,
          "Tern still serves the member Knot dropped")
    print("    Knot producer → Tern consumer: members served, added and removed")


def _knot_consumer(port, work, tern_port):
    conf = servers.knot_base(port, work) + f"""remote:
  - id: tern
    address: 127.0.0.1@{tern_port}
    key: {KEY}
acl:
  - id: notify
    address: 127.0.0.0/8
    key: {KEY}
    action: notify
template:
  - id: default
    storage: {work}
    semantic-checks: off
  - id: members
    storage: {work}
    master: tern
    acl: notify
zone:
  - domain: catalog.tern.
    master: tern
    acl: notify
    catalog-role: interpret
    catalog-template: members
"""
    path = os.path.join(work, "knot.conf")
    servers._write(path, conf)
    return ["knotd", "-c", path]


def _bind_consumer(port, work, tern_port):
    conf = servers.bind_head(port, work) + f"""  allow-notify {{ key "{KEY}"; }};
  allow-new-zones yes;
  catalog-zones {{
    zone "catalog.tern." default-primaries {{ 127.0.0.1 port {tern_port} key "{KEY}"; }}
      zone-directory "{work}";
  }};
}};
controls {{ }};
zone "catalog.tern." {{ type secondary; file "{work}/catalog.tern.bk";
  primaries port {tern_port} {{ 127.0.0.1 key "{KEY}"; }}; notify no; }};
"""
    path = os.path.join(work, "named.conf")
    servers._write(path, conf)
    return ["named", "-g", "-n", "1", "-c", path]


def tern_to_peers(run):
    tern_port, knot_port, bind_port = peers.free_port(), peers.free_port(), peers.free_port()
    work = run.work("tern-producer")
    files = {z: _zone_file(work, z) for z in ["t1.example.", "t2.example.", "t3.example."]}
    body = f"""[[remote]]
id = "consumers"
address = ["127.0.0.1:{knot_port}", "127.0.0.1:{bind_port}"]
key = "{KEY}"
[[template]]
id = "default"
acl = "xfr"
notify = "consumers"
catalog = "catalog.tern"
[[zone]]
name = "catalog.tern"
catalog-role = "producer"
[[zone]]
name = "t1.example"
file = "{files['t1.example.']}"
[[zone]]
name = "t2.example"
file = "{files['t2.example.']}"
catalog-group = "blue"
"""
    tern = run.start("tern", lambda p, w: _tern(p, w, run.tern_bin, body), port=tern_port, name="tern-producer")
    # A consumer whose first refresh finds nothing may wait minutes to retry (BIND does).
    _wait(lambda: _served(tern_port, "catalog.tern."), "Tern does not serve its catalog")
    run.start("knot", lambda p, w: _knot_consumer(p, w, tern_port), port=knot_port, name="knot-consumer")
    run.start("bind", lambda p, w: _bind_consumer(p, w, tern_port), port=bind_port, name="bind-consumer")
    for who, port in [("Knot", knot_port), ("BIND", bind_port)]:
        _wait(lambda: _served(port, "t1.example.") and _served(port, "t2.example."),
              f"{who} does not serve the members of Tern's catalog")
    # ternctl (package tern-ctl) is built into the same directory as ternd.
    ternctl = [os.path.join(os.path.dirname(run.tern_bin), "ternctl"), "--socket",
               os.path.join(tern.work, "ctl.sock")]
    check(os.access(ternctl[0], os.X_OK),
          f"no ternctl at {ternctl[0]}: build it (cargo build --release -p tern-ctl)")
    def ctl(*args):
        done = subprocess.run(ternctl + list(args), capture_output=True, text=True)
        check(done.returncode == 0, f"ternctl {' '.join(args)}: {done.stdout}{done.stderr}")

    ctl("zone-add", "t3.example", "--file", files["t3.example."])
    for who, port in [("Knot", knot_port), ("BIND", bind_port)]:
        _wait(lambda: _served(port, "t3.example."), f"{who} does not serve the zone added to Tern")
    ctl("zone-remove", "t3.example")
    for who, port in [("Knot", knot_port), ("BIND", bind_port)]:
        _wait(lambda: rcode(port, "t3.example.") == dns.rcode.REFUSED,
              f"{who} still serves the zone removed from Tern")
    print("    Tern producer → Knot and BIND consumers: members served, a zone added and removed followed")


def catalogs(run):
    knot_to_tern(run)
    tern_to_peers(run)
