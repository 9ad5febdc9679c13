"""Zone transfers over TLS (RFC 9103) with Tern as the primary: BIND 9.18 and NSD as
secondaries that fetch only over TLS.

* The Tern primary listens for DoT with a certificate for ns.tern.test (a test CA),
  takes client certificates against that CA (`client-ca`), and allows transfers only
  over TLS, with the TSIG key and a client certificate: BIND's, signed by the CA
  (`client-cert = true`, mutual TLS), or NSD's, self-signed and named by its key's pin
  (`cert-key`).
* BIND checks the primary's name and CA (`remote-hostname`, `ca-file`); NSD its CA and
  name (`tls-cert-bundle`, `auth-domain-name`). Both take the zone, then a change by
  NOTIFY and IXFR over TLS; their copies equal Tern's.
* Plain TCP with the key is refused; a BIND that expects another name, and an NSD without
  a client certificate, get nothing.
"""

import os
import signal
import subprocess
import time

import dns.exception
import dns.flags
import dns.message
import dns.opcode
import dns.query
import dns.xfr

import servers
from checks import KEYRING, Failure, axfr, check, log_of, soa_serial, wait_serial
from servers import KEY, SECRET, peers

ZONE = "xot.example."
HOST = "ns.tern.test"


def zone_text(serial, extra=""):
    lines = [f"$ORIGIN {ZONE}", "$TTL 300", f"@ SOA ns hostmaster {serial} 3600 600 86400 60",
             "@ NS ns", "ns A 192.0.2.53"]
    lines += [f"host{i} A 10.1.{i >> 8}.{i & 255}" for i in range(400)]
    return "\n".join(lines) + "\n" + extra


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(work):
    """A CA; the primary's certificate for HOST; BIND's client certificate (CA-signed);
    NSD's (self-signed). Returns NSD's key pin."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Tern interop CA",
            cwd=work)
    for name, cn in (("server", HOST), ("bind-client", "bind.secondary.test")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=work)
        with open(os.path.join(work, f"{name}.ext"), "w") as f:
            f.write(f"subjectAltName=DNS:{cn}\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem",
                cwd=work)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "nsd-client.key", "-out", "nsd-client.pem", "-days", "2",
            "-subj", "/CN=nsd.secondary.test", cwd=work)
    spki = subprocess.run(
        "openssl x509 -in nsd-client.pem -pubkey -noout | openssl pkey -pubin -outform der"
        " | openssl dgst -sha256 -binary | base64", shell=True, cwd=work, check=True,
        capture_output=True, text=True)
    return spki.stdout.strip()


def tern_primary(run, work, dot_port, nsd_pin, notify_ports):
    zone = os.path.join(work, ZONE + "zone")
    with open(zone, "w") as f:
        f.write(zone_text(1))
    remotes = "".join(
        f'[[remote]]\nid = "n{p}"\naddress = "127.0.0.1:{p}"\nkey = "{KEY}"\n' for p in notify_ports)
    notify = ", ".join(f'"n{p}"' for p in notify_ports)

    def argv(port, w):
        conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
storage = "{w}/data"
[log]
level = "debug"
[tls]
listen = ["127.0.0.1:{dot_port}"]
certificate = "{work}/server.pem"
key = "{work}/server.key"
client-ca = "{work}/ca.pem"
[[key]]
name = "{KEY}"
secret = "{SECRET}"
[[acl]]
id = "mutual-tls"
address = "127.0.0.0/8"
key = "{KEY}"
action = "transfer"
client-cert = true
[[acl]]
id = "pinned"
address = "127.0.0.0/8"
key = "{KEY}"
action = "transfer"
cert-key = "{nsd_pin}"
{remotes}
[[zone]]
name = "{ZONE}"
file = "{zone}"
acl = ["mutual-tls", "pinned"]
notify = [{notify}]
"""
        path = os.path.join(w, "ternd.toml")
        with open(path, "w") as f:
            f.write(conf)
        return [run.tern_bin, "--config", path]

    return run.start("tern", argv, name="tern-xot-primary"), zone


def bind_secondary(work, dot_port, hostname):
    def argv(port, w):
        conf = servers.bind_head(port, w) + f"""  allow-notify {{ key "{KEY}"; }};
  allow-transfer {{ key "{KEY}"; }};
}};
controls {{ }};
tls tern-tls {{
  ca-file "{work}/ca.pem";
  remote-hostname "{hostname}";
  cert-file "{work}/bind-client.pem";
  key-file "{work}/bind-client.key";
}};
zone "{ZONE}" {{ type secondary; file "{w}/xot.bk"; notify no;
  primaries port {dot_port} {{ 127.0.0.1 key "{KEY}" tls tern-tls; }}; }};
"""
        path = os.path.join(w, "named.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["named", "-g", "-n", "1", "-c", path]
    return argv


def nsd_secondary(work, dot_port, client_cert):
    def argv(port, w):
        cert = (f'  client-cert: "{work}/nsd-client.pem"\n  client-key: "{work}/nsd-client.key"\n'
                if client_cert else "")
        conf = peers.nsd_server(port, w, f'  verbosity: 2\n  tls-cert-bundle: "{work}/ca.pem"\n')
        conf += f'key:\n  name: "{KEY}"\n  algorithm: hmac-sha256\n  secret: "{SECRET}"\n'
        conf += f'tls-auth:\n  name: "tern"\n  auth-domain-name: "{HOST}"\n{cert}'
        conf += (f'zone:\n  name: "{ZONE}"\n  zonefile: "{w}/xot.zone"\n'
                 f'  request-xfr: 127.0.0.1@{dot_port} {KEY} tern\n'
                 f'  allow-notify: 127.0.0.1 {KEY}\n  provide-xfr: 127.0.0.1 {KEY}\n')
        path = os.path.join(w, "nsd.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["nsd", "-d", "-c", path]
    return argv


def kdig_axfr(work, dot_port):
    """The zone as Tern serves it over TLS (kdig, BIND's client certificate and the key),
    as sorted lines in the form `checks.axfr` gives."""
    out = subprocess.run(
        ["kdig", "-p", str(dot_port), "@127.0.0.1", f"+tls-ca={work}/ca.pem",
         f"+tls-hostname={HOST}", f"+tls-certfile={work}/bind-client.pem",
         f"+tls-keyfile={work}/bind-client.key", "-y", f"hmac-sha256:{KEY}:{SECRET}",
         "+noall", "+answer", ZONE, "AXFR"],
        capture_output=True, text=True, timeout=30)
    records = set()
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) < 5 or line.startswith(";") or fields[3] in ("TSIG",):
            continue
        name, ttl, _cls, rtype = fields[:4]
        records.add(f"{name.lower()} {ttl} {rtype} {' '.join(fields[4:]).lower()}")
    return sorted(records)


def notify(port):
    """A TSIG-signed NOTIFY for the zone to `port`, as a primary sends it."""
    message = dns.message.make_query(ZONE, "SOA")
    message.set_opcode(dns.opcode.NOTIFY)
    message.flags |= dns.flags.AA
    message.use_tsig(KEYRING, keyname=KEY)
    try:
        dns.query.udp(message, "127.0.0.1", port=port, timeout=2)
    except dns.exception.DNSException:
        pass


def wait_first_copy(kind, server):
    """Waits for `server`'s first copy. NSD 4.6.1's first transfer over TLS after its start
    sometimes leaves out its client certificate (Tern refuses it, as it must) and its next
    try is ~30 s away: after 5 s, a NOTIFY makes it try again at once."""
    try:
        wait_serial(server.port, ZONE, 1, timeout=5, who=kind)
    except Failure:
        if not kind.startswith("nsd"):
            raise
        notify(server.port)
        wait_serial(server.port, ZONE, 1, timeout=30, who=kind)


def plain_tcp_refused(port):
    try:
        list(dns.query.xfr("127.0.0.1", ZONE, port=port, keyring=KEYRING, keyname=KEY, lifetime=5))
    except (dns.xfr.TransferError, dns.exception.DNSException, EOFError, ConnectionError):
        return True
    return False


def xot_out(run):
    """Tern → BIND and NSD over TLS: mutual TLS and a pinned key; NOTIFY, IXFR over TLS."""
    work = run.work("xot-pki")
    nsd_pin = make_pki(work)
    dot_port = peers.free_port()
    ports = {kind: peers.free_port() for kind in ("bind", "nsd", "bind-wrong", "nsd-nocert")}
    primary, zone = tern_primary(run, work, dot_port, nsd_pin, [ports["bind"], ports["nsd"]])
    deadline = time.monotonic() + 20
    while soa_serial(primary.port, ZONE) != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    check(soa_serial(primary.port, ZONE) == 1, f"Tern does not serve {ZONE}:\n{primary.log_tail()}")
    secondaries = {
        "bind": run.start("bind", bind_secondary(work, dot_port, HOST), port=ports["bind"],
                          name="bind-xot"),
        "nsd": run.start("nsd", nsd_secondary(work, dot_port, True), port=ports["nsd"],
                         name="nsd-xot"),
    }
    wrong = {
        "bind-wrong": run.start("bind", bind_secondary(work, dot_port, "other.tern.test"),
                                port=ports["bind-wrong"], name="bind-xot-wrong-name"),
        "nsd-nocert": run.start("nsd", nsd_secondary(work, dot_port, False),
                                port=ports["nsd-nocert"], name="nsd-xot-no-cert"),
    }
    reference = kdig_axfr(work, dot_port)
    check(len(reference) > 400, f"kdig over TLS got {len(reference)} records from Tern")
    for kind, server in secondaries.items():
        wait_first_copy(kind, server)
        check(axfr(server.port, ZONE) == reference, f"{kind}'s copy differs from Tern's")
    log = log_of(primary)
    for kind, server in secondaries.items():
        check(log.count('transport="tls" kind="AXFR"') >= 2,
              f"no AXFR over TLS in Tern's log:\n{log[-3000:]}")
    check(plain_tcp_refused(primary.port), "Tern gave the zone over plain TCP")
    print("    first transfer over TLS: BIND (mutual TLS) and NSD (pinned key) equal Tern; "
          "plain TCP refused")
    with open(zone, "w") as f:
        f.write(zone_text(2, "new A 192.0.2.200\n"))
    os.kill(primary.proc.pid, signal.SIGHUP)
    for kind, server in secondaries.items():
        wait_serial(server.port, ZONE, 2, timeout=30, who=kind)
    reference = kdig_axfr(work, dot_port)
    for kind, server in secondaries.items():
        check(axfr(server.port, ZONE) == reference, f"{kind}'s copy differs after the change")
    ixfrs = log_of(primary).count('transport="tls" kind="IXFR" from="1" serial=2')
    check(ixfrs >= 2, f"{ixfrs} IXFRs from 1 to 2 over TLS in Tern's log, want 2:\n"
          f"{log_of(primary)[-3000:]}")
    print(f"    change: NOTIFY, {ixfrs} IXFRs over TLS, copies equal")
    for kind, server in wrong.items():
        check(soa_serial(server.port, ZONE) is None, f"{kind} got the zone")
    print("    BIND expecting another name and NSD without a client certificate: no zone")
