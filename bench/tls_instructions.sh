#!/usr/bin/env bash
# User-space instructions per DNS-over-TLS connection of a ternd build, counted by
# callgrind (repeatable, whatever else the machine is doing). ternd serves the peer
# benchmark's 100k TLD zone with a DoT listener under valgrind; counting is switched on
# once the zone answers, the `tls_fresh` example opens connections one at a time for
# SECONDS (each: handshake, one query, its answer, close), and counting is switched off.
#   bench/tls_instructions.sh [TERND] [SECONDS]   (default: target/perf/ternd, 20)
# CLIENT_ARGS are passed to tls_fresh: `-r` resumes with tickets, `-t aes128` offers
# TLS_AES_128_GCM_SHA256 alone (the server follows the client's order of suites).
# KEEP=FILE keeps the callgrind output (callgrind_annotate FILE for where they go).
# Needs: cargo build --profile perf -p ternd --example tls_fresh; the zone of
# bench/run.sh or bench/tls.py (bench/out/tld-100000-z1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$HERE/../target}/perf/ternd}
SECONDS_=${2:-20}
CLIENT=$(dirname "$BIN")/examples/tls_fresh
DATA=$HERE/out/tld-100000-z1
QUERIES=$(ls "$DATA"/queries-*-n200000-nx0.4.tcp*.bin | head -1)
OUT=$(mktemp /tmp/tern-callgrind-tls.XXXXXX)
DIR=$(mktemp -d /tmp/tern-callgrind-tls-conf.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
DOT=$((PORT + 1))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/server.key" \
    -out "$DIR/server.pem" -days 2 -subj /CN=ns.bench.test 2>/dev/null
printf '[server]\nlisten = ["127.0.0.1:%s"]\nudp-workers = 1\ntcp-workers = 1\n[log]\nlevel = "warn"\n[tls]\nlisten = ["127.0.0.1:%s"]\ncertificate = "%s"\nkey = "%s"\n[[zone]]\nname = "tld."\nfile = "%s"\n' \
    "$PORT" "$DOT" "$DIR/server.pem" "$DIR/server.key" "$DATA/zone.txt" > "$DIR/ternd.toml"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" \
    "$BIN" --config "$DIR/ternd.toml" >/dev/null 2>&1 &
VG=$!
trap 'kill $VG 2>/dev/null || true; rm -rf "$DIR"' EXIT
for _ in $(seq 1 180); do
    sleep 1
    [ -n "$(dig +short +time=1 +tries=1 -p $PORT @127.0.0.1 tld. SOA 2>/dev/null | grep -v '^;')" ] && break
done
"$CLIENT" -p "$DOT" -f "$QUERIES" -c 1 -l 3 ${CLIENT_ARGS:-} >/dev/null  # warm: first tickets
callgrind_control -i on $VG >/dev/null 2>&1
RESULT=$("$CLIENT" -p "$DOT" -f "$QUERIES" -c 1 -l "$SECONDS_" ${CLIENT_ARGS:-})
callgrind_control -i off $VG >/dev/null 2>&1
kill -TERM $VG
wait $VG || true
N=$(echo "$RESULT" | sed -n 's/.*completed=\([0-9]*\).*/\1/p')
TOTAL=$(sed -n 's/^totals: //p' "$OUT")
echo "$BIN ${CLIENT_ARGS:-}: $RESULT"
echo "$TOTAL instructions for $N connections, $((TOTAL / N)) per connection"
[ -n "${KEEP:-}" ] && cp "$OUT" "$KEEP"
rm -f "$OUT"
