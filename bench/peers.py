"""Authoritative servers on loopback, started the same way for tests and benchmarks.

Knot DNS, NSD, BIND, Tern (`ternd` quick mode) and the do-nothing floor responder are
each started on 127.0.0.1:PORT with the same set of zones, optionally pinned to one CPU,
in their own work directory and process group. A started server can be probed until it
answers (load time), measured (CPU time and PSS over its whole process tree) and stopped.

With `tls` (a `Tls`), Tern, NSD and BIND also serve DNS over TLS (RFC 7858) on
127.0.0.1:`tls.port` with one certificate (Knot DNS 3.2 has no DoT).

Used by `bench/bench.py` (peer benchmark), `bench/tls.py` (encrypted transports) and
`tests/conformance/runner.py`.
"""

import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import time
from dataclasses import dataclass

KINDS = ("tern", "knot", "nsd", "nsd-minimal", "bind", "floor")
TLS_KINDS = ("tern", "nsd", "bind")  # the kinds that serve DNS over TLS
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Zone:
    """One zone to serve: its origin (absolute, with the trailing dot) and its file."""

    origin: str
    path: str


@dataclass(frozen=True)
class Tls:
    """A DNS over TLS listener on 127.0.0.1:`port` with a certificate chain and its
    private key (PEM files)."""

    port: int
    certificate: str
    key: str


def ephemeral_range():
    """The kernel's range of source ports chosen for unbound sockets."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(v) for v in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port():
    """A loopback port that is free for both UDP and TCP right now, chosen below the
    kernel's ephemeral range so that no server's source port (a NOTIFY, a transfer, a
    resolver socket) can take it before the server meant to listen there starts."""
    low = ephemeral_range()[0]
    for _ in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        if port in _HANDED_OUT:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
                socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            try:
                udp.bind(("127.0.0.1", port))
                tcp.bind(("127.0.0.1", port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free loopback port found")


_HANDED_OUT = set()  # ports this process gave out: not given twice


def missing_reason(kind, tern_bin=None, floor_bin=None):
    """Why `kind` cannot be started here, or None when it can."""
    programs = {"knot": "knotd", "nsd": "nsd", "nsd-minimal": "nsd", "bind": "named"}
    if kind in programs:
        if shutil.which(programs[kind]) is None:
            return f"{programs[kind]} is not installed"
        return None
    if kind == "tern":
        if not tern_bin or not os.access(tern_bin, os.X_OK):
            return f"ternd binary not found at {tern_bin} (build it: {build_command(tern_bin)})"
        return None
    if kind == "floor":
        if not floor_bin or not os.access(floor_bin, os.X_OK):
            return f"floor responder not built at {floor_bin}"
        return None
    return f"unknown server kind {kind!r}"


def _knot(zones, port, work):
    zone_lines = "".join(f"  - domain: {z.origin}\n    file: {z.path}\n" for z in zones)
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
template:
  - id: default
    storage: {work}
    journal-content: none
    zonefile-sync: -1
    zonefile-load: whole
zone:
{zone_lines}"""
    path = os.path.join(work, "knot.conf")
    _write(path, conf)
    return ["knotd", "-c", path]


def nsd_server(port, work, extra=""):
    """NSD's `server:` and `remote-control:` clauses for one process on 127.0.0.1:`port`
    with everything it writes in `work`; `extra` lines go into `server:`."""
    return f"""server:
  ip-address: 127.0.0.1@{port}
  do-ip6: no
  server-count: 1
  username: ""
  chroot: ""
  zonesdir: "{work}"
  pidfile: "{work}/nsd.pid"
  database: ""
  zonelistfile: "{work}/zone.list"
  xfrdfile: "{work}/xfrd.state"
  xfrdir: "{work}"
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
{extra}remote-control:
  control-enable: no
"""


def _nsd(zones, port, work, minimal=False, tls=None):
    zone_lines = "".join(f'zone:\n  name: "{z.origin}"\n  zonefile: "{z.path}"\n' for z in zones)
    extra = f"""  zonefiles-write: 0
  verbosity: 1
  tcp-count: 1000
  minimal-responses: {"yes" if minimal else "no"}
"""
    if tls:  # NSD serves TLS on the interfaces whose port is `tls-port`
        extra += f"""  ip-address: 127.0.0.1@{tls.port}
  tls-port: {tls.port}
  tls-service-pem: "{tls.certificate}"
  tls-service-key: "{tls.key}"
"""
    conf = nsd_server(port, work, extra) + zone_lines
    path = os.path.join(work, "nsd.conf")
    _write(path, conf)
    return ["nsd", "-d", "-c", path]


def _bind(zones, port, work, tls=None):
    zone_lines = "".join(
        f'zone "{z.origin}" {{ type primary; file "{z.path}"; notify no; }};\n' for z in zones
    )
    tls_block = (f'tls bench-tls {{ cert-file "{tls.certificate}"; key-file "{tls.key}"; }};\n'
                 if tls else "")
    tls_listen = f"  listen-on port {tls.port} tls bench-tls {{ 127.0.0.1; }};\n" if tls else ""
    conf = f"""{tls_block}options {{
  directory "{work}";
  listen-on port {port} {{ 127.0.0.1; }};
{tls_listen}  listen-on-v6 {{ none; }};
  recursion no;
  dnssec-validation no;
  pid-file "{work}/named.pid";
  session-keyfile "{work}/session.key";
  tcp-clients 1000;
}};
controls {{ }};
{zone_lines}"""
    path = os.path.join(work, "named.conf")
    _write(path, conf)
    return ["named", "-g", "-n", "1", "-U", "1", "-c", path]


def _tern(zones, port, tern_bin, work, tls=None):
    if len(zones) <= 100 and not tls:
        argv = [tern_bin, "--listen", f"127.0.0.1:{port}", "--workers", "1"]
        for z in zones:
            argv += ["--zone", f"{z.origin.rstrip('.') or '.'}={z.path}"]
        return argv
    # Many zones, or DNS over TLS: a configuration file (the command line would be too
    # long; it has no TLS options). Per-zone load lines off, as Knot DNS's `notice` level
    # has them.
    zone_lines = "".join(f'[[zone]]\nname = "{z.origin}"\nfile = "{z.path}"\n' for z in zones)
    conf = f"""[server]
listen = ["127.0.0.1:{port}"]
udp-workers = 1
tcp-workers = 1
[log]
level = "warn"
{tern_tls_table(tls)}{zone_lines}"""
    path = os.path.join(work, "ternd.toml")
    _write(path, conf)
    return [tern_bin, "--config", path]


def tern_tls_table(tls):
    """Tern's `[tls]` table for `tls`, or nothing."""
    if not tls:
        return ""
    return (f'[tls]\nlisten = ["127.0.0.1:{tls.port}"]\ncertificate = "{tls.certificate}"\n'
            f'key = "{tls.key}"\n')


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def command(kind, zones, port, work, tern_bin=None, floor_bin=None, tls=None):
    """The argv that serves `zones` on 127.0.0.1:`port` with server `kind`, and DNS over
    TLS as `tls` says (a `Tls`; only for `TLS_KINDS`)."""
    if tls and kind not in TLS_KINDS:
        raise ValueError(f"{kind} does not serve DNS over TLS here")
    if kind == "knot":
        return _knot(zones, port, work)
    if kind == "nsd":
        return _nsd(zones, port, work, tls=tls)
    if kind == "nsd-minimal":  # NSD without optional authority/additional records
        return _nsd(zones, port, work, minimal=True)
    if kind == "bind":
        return _bind(zones, port, work, tls=tls)
    if kind == "tern":
        return _tern(zones, port, tern_bin, work, tls=tls)
    if kind == "floor":
        return [floor_bin, str(port)]
    raise ValueError(f"unknown server kind {kind!r}")


class Server:
    """A running server process (and its children) started by `start`."""

    def __init__(self, kind, zones, port, work, argv, cpu):
        self.kind, self.zones, self.port, self.work = kind, zones, port, work
        self.log_path = os.path.join(work, f"{kind}.log")
        log = open(self.log_path, "wb")
        self.cpu = cpu
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=pin,
        )
        log.close()

    def pids(self):
        """The server's process tree (pids), parent first."""
        tree, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
        return tree

    def cpu_seconds(self):
        """User + system CPU time of the whole process tree (all threads), in seconds."""
        return sum(self.cpu_split())

    def cpu_split(self):
        """(user, system) CPU seconds of the whole process tree (all threads)."""
        user = system = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                user += int(fields[11])
                system += int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        return user / CLK_TCK, system / CLK_TCK

    def usage(self):
        """A snapshot of (user s, system s, context switches) for `per_query_usage`."""
        return (*self.cpu_split(), self.context_switches())

    def context_switches(self):
        """Context switches (voluntary and not) of every thread of the process tree: a
        thread that blocks for lack of work and is woken again counts one."""
        def switches(f):
            return sum(int(line.split()[1]) for line in f
                       if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        return self._per_thread("status", switches)

    def schedstat_seconds(self):
        """CPU seconds of every thread of the process tree, from the scheduler's
        nanosecond accounting (/proc/PID/task/TID/schedstat), not from 10 ms ticks."""
        return self._per_thread("schedstat", lambda f: int(f.read().split()[0])) / 1e9

    def _per_thread(self, name, read):
        """The sum over every thread of the process tree of `read` applied to its
        /proc/PID/task/TID/`name` file (threads that vanish meanwhile are skipped)."""
        total = 0
        for pid in self.pids():
            try:
                threads = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in threads:
                try:
                    with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                        total += read(f)
                except (OSError, IndexError, ValueError):
                    pass
        return total

    def pss_kb(self):
        """Proportional set size summed over the process tree (shared pages split)."""
        total = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/smaps_rollup") as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            total += int(line.split()[1])
                            break
            except OSError:
                pass
        return total

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def wait_answering(self, timeout=120.0, floor=False):
        """Waits until every zone's SOA query gets an authoritative NOERROR answer.

        Returns the seconds from process start until then. Raises RuntimeError if the
        process exits or `timeout` passes first. The floor only has to answer at all.
        Once answering, every thread is put back on the server's CPU (`keep_on_cpu`), so
        that whatever a script measures next runs where the server was pinned.
        """
        pending = [z.origin for z in self.zones] or ["."]
        deadline = self.started + timeout
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(0.02)
            while pending:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.kind} exited with {self.proc.returncode}:\n"
                                       + self.log_tail())
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.kind} did not answer within {timeout}s:\n"
                                       + self.log_tail())
                if _soa_ready(sock, self.port, pending[0], floor):
                    pending.pop(0)
                else:
                    time.sleep(0.01)
        answering = time.monotonic() - self.started
        self.keep_on_cpu()
        return answering

    def keep_on_cpu(self):
        """Moves every thread of the process tree back to the server's CPU.

        The process starts pinned, but a server may set its own threads' affinity: Knot
        DNS puts its UDP worker on CPU 0, where it would share a core with the load
        generator and be measured under other conditions than the servers kept apart.
        Returns how many threads had to be moved (and says so)."""
        if self.cpu is None:
            return 0
        moved = 0
        for pid in self.pids():
            try:
                threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
            except OSError:
                continue
            for tid in threads:
                try:
                    if os.sched_getaffinity(tid) != {self.cpu}:
                        os.sched_setaffinity(tid, {self.cpu})
                        moved += 1
                except OSError:
                    pass
        if moved:
            print(f"  {self.kind}: {moved} thread(s) had left CPU {self.cpu}; moved back",
                  flush=True)
        return moved

    def stop(self):
        """Ends the process group: SIGTERM, then SIGKILL after 10 s."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass


def soa_query(origin, qid=0x5e5e):
    """Wire form of a plain SOA query for `origin` (no EDNS)."""
    qname = b"".join(bytes([len(l)]) + l.encode() for l in origin.rstrip(".").split(".") if l)
    return struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + qname + b"\x00" + struct.pack("!HH", 6, 1)


def _soa_ready(sock, port, origin, floor):
    query = soa_query(origin)
    try:
        sock.sendto(query, ("127.0.0.1", port))
        while True:
            data, _ = sock.recvfrom(4096)
            if data[:2] == query[:2]:
                break
    except OSError:
        return False
    if len(data) < 12:
        return False
    flags = struct.unpack("!H", data[2:4])[0]
    if floor:
        return bool(flags & 0x8000)
    authoritative = flags & 0x0400
    return bool(flags & 0x8000) and authoritative and (flags & 0x000F) == 0


def start(kind, zones, port, work, cpu=None, tern_bin=None, floor_bin=None, tls=None):
    """Starts server `kind` serving `zones` on 127.0.0.1:`port` (and DNS over TLS as
    `tls` says); returns a Server."""
    os.makedirs(work, exist_ok=True)
    argv = command(kind, zones, port, work, tern_bin, floor_bin, tls)
    return Server(kind, zones, port, work, argv, cpu)


# The cargo profile the benchmarks measure: the fully optimised build (fat LTO, one
# codegen unit; Cargo.toml's [profile.perf]), the one the package ships. The tests run
# the everyday `release` build and ask for it by name.
BENCH_PROFILE = "perf"


def default_ternd(repo, profile=BENCH_PROFILE):
    """Where `cargo build --profile PROFILE -p ternd` puts ternd for the repository at
    `repo`: $TERND if set, else <cargo target dir>/PROFILE/ternd (target/perf/ternd for
    the benchmarks, target/release/ternd for the tests)."""
    if os.environ.get("TERND"):
        return os.environ["TERND"]
    target = os.environ.get("CARGO_TARGET_DIR")
    if not target and shutil.which("cargo"):
        try:
            meta = subprocess.run(
                ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
                cwd=repo, capture_output=True, text=True, timeout=60, check=True)
            target = json.loads(meta.stdout)["target_directory"]
        except (OSError, subprocess.SubprocessError, ValueError, KeyError):
            target = None
    return os.path.join(target or os.path.join(repo, "target"), profile, "ternd")


def build_command(binary, package="ternd"):
    """The cargo command that builds `binary`, judged by its directory's name
    (target/release: --release; otherwise the benchmarks' --profile perf)."""
    profile = os.path.basename(os.path.dirname(os.path.abspath(binary or "")))
    flag = "--release" if profile == "release" else f"--profile {BENCH_PROFILE}"
    return f"cargo build {flag} -p {package}"
