#!/usr/bin/env bash
# User-space instructions per query of a ternd build, counted by callgrind (repeatable,
# whatever else the machine is doing). ternd serves the peer benchmark's 100k TLD zone
# under valgrind; counting is switched on once the zone answers, N queries of the
# benchmark's mix are asked one at a time (so every query is a batch of one: the
# worker's per-batch work counts in full), and counting is switched off again.
#   bench/server_instructions.sh [TERND] [N]    (default: target/perf/ternd, 2000)
# KEEP=FILE keeps the callgrind output (callgrind_annotate FILE for where they go).
# TCP=1 asks each query on a connection of its own (fresh-connection TCP) instead.
# QUERY_STATS=0|1 serves the zone from a configuration file instead of the command line,
# with `query-stats` off or on (the zone's queries counted per zone, /metrics).
# Run bench/run.sh (or bench/udp_ab.py) once first: it makes the zone and queries.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$HERE/../target}/perf/ternd}  # cargo build --profile perf -p ternd
N=${2:-2000}
DATA=$HERE/out/tld-100000-z1
QUERIES=$(ls "$DATA"/queries-*-n200000-nx0.4.txt | head -1)
OUT=$(mktemp /tmp/tern-callgrind.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
ARGS=(--listen 127.0.0.1:$PORT --zone tld.="$DATA/zone.txt" --workers 1)
if [ -n "${QUERY_STATS:-}" ]; then
    CONF=$(mktemp -d /tmp/tern-callgrind-conf.XXXXXX)
    STATS=$([ "$QUERY_STATS" = 1 ] && echo true || echo false)
    printf '[server]\nlisten = ["127.0.0.1:%s"]\nudp-workers = 1\ntcp-workers = 1\nstorage = "%s"\n[[zone]]\nname = "tld."\nfile = "%s"\nquery-stats = %s\n' \
        "$PORT" "$CONF/storage" "$DATA/zone.txt" "$STATS" > "$CONF/ternd.toml"
    ARGS=(--config "$CONF/ternd.toml")
fi
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" \
    "$BIN" "${ARGS[@]}" >/dev/null 2>&1 &
VG=$!
trap 'kill $VG 2>/dev/null || true; rm -rf "${CONF:-/nonexistent}"' EXIT
for _ in $(seq 1 180); do
    sleep 1
    # dig 9.18 prints ";; no servers could be reached" on standard output.
    [ -n "$(dig +short +time=1 +tries=1 -p $PORT @127.0.0.1 tld. SOA 2>/dev/null | grep -v '^;')" ] && break
done
callgrind_control -i on $VG >/dev/null 2>&1
python3 - "$PORT" "$N" "$QUERIES" "${TCP:-0}" <<'PY'
import socket, struct, sys
import dns.message
port, n, path, tcp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
lines = [l.split() for l in open(path) if l.strip()]
wires = []
for i in range(n):
    q = dns.message.make_query(lines[i % len(lines)][0], lines[i % len(lines)][1])
    q.id = i & 0xFFFF
    wires.append(q.to_wire())
def over_tcp(wire):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(struct.pack("!H", len(wire)) + wire)
        want, got = None, b""
        while want is None or len(got) < want + 2:
            chunk = c.recv(65537)
            if not chunk:
                raise RuntimeError("connection closed before the answer")
            got += chunk
            if want is None and len(got) >= 2:
                want = struct.unpack("!H", got[:2])[0]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(30)
for w in wires:
    if tcp:
        over_tcp(w)
    else:
        s.sendto(w, ("127.0.0.1", port))
        s.recvfrom(65535)
PY
callgrind_control -i off $VG >/dev/null 2>&1
kill -TERM $VG
wait $VG || true
TOTAL=$(sed -n 's/^totals: //p' "$OUT")
echo "$BIN: $TOTAL instructions for $N queries, $((TOTAL / N)) per query"
[ -n "${KEEP:-}" ] && cp "$OUT" "$KEEP"
rm -f "$OUT"
