"""Zone transfers over TLS (RFC 9103) with Tern as the secondary of BIND 9.18.

BIND serves the zone on two TLS ports and allows transfers over TLS only (`allow-transfer
transport tls`), so a zone that reaches Tern came over TLS; its plain port answers
queries, updates and nothing else. One TLS port asks nothing of clients; the other
requires a client certificate from the test's CA (mutual TLS: `ca-file` in BIND's `tls`
statement). The certificates are made here with openssl: a CA, ns1.example's certificate
signed by it, a client certificate signed by it, and a stranger's key for a wrong pin.

Tern secondaries, one per way of checking the primary (each a `[[remote]]` with `tls`):
  * pin: `cert-key` — transferred; an update on BIND, its NOTIFY (over UDP) and an IXFR
    over TLS bring the change; an update sent to Tern is forwarded to BIND over TLS;
  * name: `tls-hostname` + `tls-ca`, and TSIG inside TLS — transferred, and the change
    too;
  * opportunistic: `tls = "opportunistic"` — transferred;
  * mutual: `cert-key` + `tls-client-certificate` on the mutual port — transferred;
  * wrong pin, wrong name, no client certificate on the mutual port: refused, nothing
    served, the log saying why.
"""

import base64
import hashlib
import os
import subprocess
import time

import dns.message
import dns.query
import dns.rcode
import dns.update
import dns.xfr

import servers
from checks import Failure, check, log_of, rcode, wait_serial
from servers import peers

ZONE = "xot.example."


def openssl(*args):
    out = subprocess.run(["openssl", *args], capture_output=True)
    check(out.returncode == 0, f"openssl {' '.join(args)}: {out.stderr.decode(errors='replace')}")
    return out.stdout


def make_pki(work):
    """The certificates of the scenario (see the module comment); their paths and pins."""
    path = lambda name: os.path.join(work, name)  # noqa: E731

    def key(name):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name))

    def sign(name, key_name, san, usage):
        openssl("req", "-new", "-key", path(key_name), "-subj", f"/CN={name}", "-out", path(f"{name}.csr"))
        with open(path(f"{name}.ext"), "w") as f:
            f.write(f"subjectAltName={san}\nextendedKeyUsage={usage}\nbasicConstraints=CA:FALSE\n")
        openssl("x509", "-req", "-in", path(f"{name}.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-days", "30", "-extfile", path(f"{name}.ext"), "-out", path(f"{name}.pem"))

    key("ca.key")
    openssl("req", "-x509", "-new", "-key", path("ca.key"), "-subj", "/CN=XoT test CA", "-days", "30",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            "-out", path("ca.pem"))
    key("ns1.key")
    sign("ns1", "ns1.key", "DNS:ns1.example", "serverAuth")
    key("client.key")
    sign("client", "client.key", "DNS:secondary.example", "clientAuth")
    key("stranger.key")
    return {
        "ca": path("ca.pem"), "cert": path("ns1.pem"), "key": path("ns1.key"),
        "client_cert": path("client.pem"), "client_key": path("client.key"),
        "pin": pin_of(path("ns1.key")), "stranger_pin": pin_of(path("stranger.key")),
    }


def pin_of(key_path):
    """The key pin (base64 SHA-256 of the SubjectPublicKeyInfo) of a private key's public key."""
    spki = openssl("pkey", "-in", key_path, "-pubout", "-outform", "der")
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def zone_text(serial):
    lines = [f"$ORIGIN {ZONE}", "$TTL 300", f"@ SOA ns1 hostmaster {serial} 3600 600 86400 300",
             "@ NS ns1", "ns1 A 192.0.2.1", "www A 192.0.2.80"]
    lines += [f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(500)]
    return "\n".join(lines) + "\n"


def bind_tls(port, work, pki, tls_port, mutual_port, notify_ports, signed_port):
    """BIND as the primary of `ZONE`: queries and updates on `port`, DNS over TLS on
    `tls_port` and (client certificate required) `mutual_port`, transfers over TLS only;
    NOTIFY to `notify_ports`, signed with the run's key to `signed_port`."""
    zone_file = os.path.join(work, "xot.example.zone")
    with open(zone_file, "w") as f:
        f.write(zone_text(1))
    key = lambda p: f' key "{servers.KEY}"' if p == signed_port else ""  # noqa: E731
    also = "".join(f"127.0.0.1 port {p}{key(p)}; " for p in notify_ports)
    conf = servers.bind_head(port, work) + f"""  listen-on port {tls_port} tls open {{ 127.0.0.1; }};
  listen-on port {mutual_port} tls mutual {{ 127.0.0.1; }};
  allow-transfer transport tls {{ any; }};
}};
tls open {{ cert-file "{pki['cert']}"; key-file "{pki['key']}"; }};
tls mutual {{ cert-file "{pki['cert']}"; key-file "{pki['key']}"; ca-file "{pki['ca']}"; }};
controls {{ }};
zone "{ZONE}" {{ type primary; file "{zone_file}"; allow-update {{ 127.0.0.1; }};
  notify explicit; notify-delay 0; also-notify {{ {also}}}; }};
"""
    path = os.path.join(work, "named.conf")
    with open(path, "w") as f:
        f.write(conf)
    return ["named", "-g", "-n", "1", "-c", path]


def tern_tls(port, work, tern_bin, remote):
    """Tern as the secondary of `ZONE` from one `[[remote]]` (`remote`: its TOML lines
    after `id`)."""
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{work}/data"
[log]
level = "debug"
[transfer]
timeout = "3s"
[[key]]
name = "{servers.KEY}"
secret = "{servers.SECRET}"
[[template]]
id = "default"
retry-min = "1s"
retry-max = "2s"
[[acl]]
id = "local"
address = "127.0.0.0/8"
action = ["transfer", "update"]
[[remote]]
id = "bind"
{remote}
[[zone]]
name = "{ZONE}"
primary = "bind"
acl = "local"
"""
    path = os.path.join(work, "ternd.toml")
    with open(path, "w") as f:
        f.write(conf)
    return [tern_bin, "--config", path]


def xot_in(run):
    """BIND 9.18 primary over TLS → Tern secondaries (see the module comment)."""
    pki = make_pki(run.work("pki"))
    tls_port, mutual_port = peers.free_port(), peers.free_port()
    at = lambda p: f'address = "127.0.0.1:{p}"\ntls = true\n'  # noqa: E731
    ca = f'tls-ca = "{pki["ca"]}"\n'
    client = f'tls-client-certificate = "{pki["client_cert"]}"\ntls-client-key = "{pki["client_key"]}"\n'
    good = {
        "pin": at(tls_port) + f'cert-key = "{pki["pin"]}"\n',
        "name": at(tls_port) + 'tls-hostname = "ns1.example"\n' + ca + f'key = "{servers.KEY}"\n',
        "opportunistic": f'address = "127.0.0.1:{tls_port}"\ntls = "opportunistic"\n',
        "mutual": at(mutual_port) + f'cert-key = "{pki["pin"]}"\n' + client,
    }
    bad = {
        "wrong-pin": (at(tls_port) + f'cert-key = "{pki["stranger_pin"]}"\n',
                      f'key pin mismatch: got {pki["pin"]}, expected one of {pki["stranger_pin"]}'),
        "wrong-name": (at(tls_port) + 'tls-hostname = "ns2.example"\n' + ca,
                       "certificate for ns2.example not valid for that name"),
        "no-client-cert": (at(mutual_port) + f'cert-key = "{pki["pin"]}"\n',
                           "asked for a client certificate and closed the connection"),
    }
    ports = {name: peers.free_port() for name in [*good, *bad]}
    notified = [ports[name] for name in good]
    primary = run.start("bind", lambda p, w: bind_tls(p, w, pki, tls_port, mutual_port, notified,
                                                       ports["name"]), name="bind-xot-primary")
    wait_serial(primary.port, ZONE, 1, who="bind")
    terns = {}
    for name, remote in [*good.items(), *((n, r) for n, (r, _) in bad.items())]:
        argv = lambda p, w, r=remote: tern_tls(p, w, run.tern_bin, r)  # noqa: E731
        terns[name] = run.start("tern", argv, port=ports[name], name=f"tern-xot-{name}")
    plain_transfer_refused(primary.port)
    for name in good:
        wait_serial(ports[name], ZONE, 1, timeout=20, who=f"tern ({name})")
    dig = subprocess.run(["dig", "@127.0.0.1", "-p", str(ports["pin"]), f"www.{ZONE}", "A", "+short"],
                         capture_output=True, text=True, timeout=10)
    check(dig.stdout.strip() == "192.0.2.80", f"dig against Tern (pin): {dig.stdout}{dig.stderr}")
    for name in good:
        log = log_of(terns[name])
        port = mutual_port if name == "mutual" else tls_port
        check(f'peer=127.0.0.1:{port} kind="AXFR" transport="tls"' in log,
              f"{name}: no AXFR over TLS from port {port} in Tern's log:\n{log[-2000:]}")
    check(f"AXFR started: TSIG {servers.KEY.rstrip('.')}" in log_of(primary),
          "BIND did not see the name secondary's TSIG inside TLS")
    print("    pin, name + CA (+ TSIG), opportunistic, mutual TLS: AXFR over TLS from BIND"
          " (plain AXFR refused); dig sees it")
    change_reaches(primary, ports, terns, tls_port)
    refused(bad, ports, terns)


def plain_transfer_refused(port):
    """BIND allows transfers over TLS only: an AXFR on its plain port is refused."""
    try:
        list(dns.query.xfr("127.0.0.1", ZONE, port=port, lifetime=10))
    except dns.xfr.TransferError as e:
        check(e.rcode == dns.rcode.REFUSED, f"plain AXFR from BIND: {e}")
        return
    raise Failure("BIND transferred the zone over plain TCP: the scenario proves nothing")


def change_reaches(primary, ports, terns, tls_port):
    """An update on BIND: its NOTIFY (UDP) brings an IXFR over TLS to the pin and name
    secondaries."""
    update = dns.update.UpdateMessage(ZONE)
    update.add("new", 300, "A", "192.0.2.200")
    answer = dns.query.tcp(update, "127.0.0.1", port=primary.port, timeout=10)
    check(answer.rcode() == dns.rcode.NOERROR, f"update on BIND: {answer}")
    wait_serial(primary.port, ZONE, 2, who="bind after the update")
    for name in ("pin", "name"):
        # The SOA's refresh is an hour: only the NOTIFY brings serial 2 this soon.
        wait_serial(ports[name], ZONE, 2, timeout=15, who=f"tern ({name}) after the update")
        log = log_of(terns[name])
        check("NOTIFY received" in log, f"{name}: no NOTIFY from BIND in Tern's log")
        check(f'peer=127.0.0.1:{tls_port} kind="IXFR" transport="tls" from="1" serial=2' in log,
              f"{name}: no IXFR over TLS from 1 to 2 in Tern's log:\n{log[-2000:]}")
    reply = dns.query.udp(dns.message.make_query(f"new.{ZONE}", "A"), "127.0.0.1",
                          port=ports["pin"], timeout=2)
    check(reply.answer and reply.answer[0][0].address == "192.0.2.200", f"{reply}")
    print("    update on BIND → NOTIFY over UDP → IXFR over TLS (pin, name + CA): serial 2 served")
    # An update sent to the pin secondary is forwarded to BIND over TLS.
    update = dns.update.UpdateMessage(ZONE)
    update.add("forwarded", 300, "A", "192.0.2.201")
    answer = dns.query.tcp(update, "127.0.0.1", port=ports["pin"], timeout=10)
    check(answer.rcode() == dns.rcode.NOERROR, f"update forwarded by Tern: {answer}")
    wait_serial(primary.port, ZONE, 3, who="bind after the forwarded update")
    wait_serial(ports["pin"], ZONE, 3, timeout=15, who="tern (pin) after the forwarded update")
    print("    update sent to Tern (pin): forwarded to BIND over TLS, back by NOTIFY and IXFR")


def refused(bad, ports, terns):
    """A wrong pin, a wrong name, a missing client certificate: refused, said, not served."""
    for name, (_, said) in bad.items():
        deadline = time.monotonic() + 15
        while said not in log_of(terns[name]) and time.monotonic() < deadline:
            time.sleep(0.1)
        log = log_of(terns[name])
        check(said in log, f"{name}: {said!r} not in Tern's log:\n{log[-2000:]}")
        check("refresh failed" in log, f"{name}: the refresh did not fail:\n{log[-2000:]}")
        check("transfer in done" not in log, f"{name}: a transfer was taken")
        check(rcode(ports[name], ZONE) == dns.rcode.SERVFAIL, f"{name}: the zone is served")
    print("    wrong pin, wrong name, no client certificate: refused with the reason logged, nothing served")
