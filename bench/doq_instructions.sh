#!/usr/bin/env bash
# User-space instructions per DNS-over-QUIC (or DNS-over-TLS) query of a ternd build,
# counted by callgrind (repeatable, whatever else the machine is doing). ternd serves the
# peer benchmark's 100k TLD zone with a DoT and a DoQ listener under valgrind; counting
# is switched on once the zone answers and the client's connections are open, the
# `doq_load` example asks COUNT queries over persistent connections (CONNECTIONS of
# them, IN_FLIGHT queries outstanding on each; DoQ: a stream per query), and counting
# is switched off.
#   bench/doq_instructions.sh [TERND] [COUNT] [doq|dot]  (default: target/release/ternd, 20000, doq)
# CONNECTIONS (default 4) and IN_FLIGHT (default 100) shape the load.
# KEEP=FILE keeps the callgrind output (callgrind_annotate FILE for where they go).
# Needs: cargo build --release -p ternd --example doq_load (or --profile perf, for line
# numbers); the zone of bench/run.sh or bench/tls.py (bench/out/tld-100000-z1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-${CARGO_TARGET_DIR:-$HERE/../target}/release/ternd}
COUNT=${2:-20000}
MODE=${3:-doq}
CLIENT=${CLIENT:-$(dirname "$BIN")/examples/doq_load}
DATA=$HERE/out/tld-100000-z1
QUERIES=$(ls "$DATA"/queries-*-n200000-nx0.4.tcp*.bin | head -1)
OUT=$(mktemp /tmp/tern-callgrind-doq.XXXXXX)
DIR=$(mktemp -d /tmp/tern-callgrind-doq-conf.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$DIR/server.key" \
    -out "$DIR/server.pem" -days 2 -subj /CN=ns.bench.test -addext subjectAltName=DNS:ns.bench.test \
    -addext basicConstraints=critical,CA:FALSE 2>/dev/null
printf '[server]\nlisten = ["127.0.0.1:%s"]\nstorage = "%s"\nudp-workers = 1\ntcp-workers = 1\n[log]\nlevel = "error"\n[tls]\nlisten = ["127.0.0.1:%s"]\ncertificate = "%s"\nkey = "%s"\n[quic]\nlisten = ["127.0.0.1:%s"]\n[[zone]]\nname = "tld."\nfile = "%s"\n' \
    "$PORT" "$DIR/storage" "$((PORT + 1))" "$DIR/server.pem" "$DIR/server.key" "$((PORT + 2))" \
    "$DATA/zone.txt" > "$DIR/ternd.toml"
cleanup() {
    kill "${VG:-0}" 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT
# Answers once the zone is loaded (up to 3 minutes under valgrind).
zone_answers() {
    local soa
    soa=$(dig +short +time=1 +tries=1 -p "$PORT" @127.0.0.1 tld. SOA 2>/dev/null || true)
    [ -n "$soa" ] && [ "${soa#;}" = "$soa" ]
}
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" \
    "$BIN" --config "$DIR/ternd.toml" >/dev/null 2>&1 &
VG=$!
WAITED=0
until zone_answers || [ $WAITED -ge 180 ]; do sleep 1; WAITED=$((WAITED + 1)); done
AT=$([ "$MODE" = doq ] && echo $((PORT + 2)) || echo $((PORT + 1)))
ARGS=(-m "$MODE" -p "$AT" -f "$QUERIES" --ca "$DIR/server.pem" -c "${CONNECTIONS:-4}" -q "${IN_FLIGHT:-100}")
"$CLIENT" "${ARGS[@]}" --count 2000 -l 60 >/dev/null  # warm: the first handshakes, buffers
# The handshakes of the measured run are counted too; a few against COUNT queries.
callgrind_control -i on $VG >/dev/null 2>&1
RESULT=$("$CLIENT" "${ARGS[@]}" --count "$COUNT" -l 600)
callgrind_control -i off $VG >/dev/null 2>&1
kill -TERM $VG && wait $VG || true
N=${RESULT#*completed=}
N=${N%% *}
TOTAL=$(awk '$1 == "totals:" { print $2 }' "$OUT")
printf '%s %s: %s\n%s instructions for %s queries, %s per query\n' \
    "$BIN" "$MODE" "$RESULT" "$TOTAL" "$N" "$((TOTAL / N))"
if [ -n "${KEEP:-}" ]; then cp "$OUT" "$KEEP"; fi
rm -f "$OUT"
