#!/usr/bin/env bash
# The I/O path of ternd against Knot DNS and NSD, before the query engine exists: every
# server answers REFUSED (queries name a zone none of them serves), so what is measured is
# sockets, framing and the smallest answer, not zone lookups.
#
# usage: crates/server/bench/io_path.sh [SECONDS] [TERND]
#   SECONDS  dnsperf run length per case (default 10)
#   TERND    the ternd binary (default: $CARGO_TARGET_DIR or target/, then perf/ternd)
# Server pinned to CPU 1 with one worker, dnsperf pinned to CPU 0. For each server and
# transport it prints qps, lost queries and server CPU time per answered query (user +
# system, from /proc/PID/stat). Every run is bounded by SECONDS (+ start-up, at most 10 s).
set -euo pipefail
secs=${1:-10}
root=$(cd "$(dirname "$0")/../../.." && pwd)
ternd=${2:-${CARGO_TARGET_DIR:-$root/target}/perf/ternd}
[[ -x $ternd ]] || { echo "no ternd at $ternd (cargo build --profile perf -p ternd)" >&2; exit 1; }
port=${PORT:-5398}
work=$(mktemp -d /tmp/io_path.XXXX)
pid=""
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

cp "$root/crates/server/src/demo/example.com.zone" "$work/example.com.zone"
for i in $(seq 1 1000); do echo "host$i.example.org A"; done >"$work/queries"

start() {
  case $1 in
  ternd) taskset -c 1 "$ternd" --listen "127.0.0.1:$port" --zone "example.com=$work/example.com.zone" \
           --workers 1 --log-level warn >"$work/log" 2>&1 & pid=$! ;;
  knot)
    cat >"$work/knot.conf" <<CONF
server:
  rundir: $work
  listen: 127.0.0.1@$port
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
database:
  storage: $work
zone:
  - domain: example.com
    file: $work/example.com.zone
CONF
    taskset -c 1 knotd -c "$work/knot.conf" >"$work/log" 2>&1 & pid=$! ;;
  nsd)
    cat >"$work/nsd.conf" <<CONF
server:
  ip-address: 127.0.0.1@$port
  server-count: 1
  username: ""
  zonesdir: "$work"
  pidfile: "$work/nsd.pid"
  database: ""
  zonelistfile: "$work/zone.list"
  xfrdfile: "$work/xfrd.state"
  xfrdir: "$work"
  verbosity: 0
  rrl-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: "example.com"
  zonefile: "$work/example.com.zone"
CONF
    taskset -c 1 nsd -d -c "$work/nsd.conf" >"$work/log" 2>&1 & pid=$! ;;
  esac
  for _ in $(seq 1 100); do
    dig +tries=1 +time=1 -p "$port" @127.0.0.1 host1.example.org 2>/dev/null | grep -q "status: REFUSED" && return 0
    sleep 0.1
  done
  echo "$1 did not start" >&2; cat "$work/log" >&2; return 1
}

tree() { local p=$1; echo "$p"; for c in $(pgrep -P "$p" 2>/dev/null); do tree "$c"; done; }
ticks() { local t=0; for q in $(tree "$pid"); do t=$((t + $(sed 's/.*) //' /proc/"$q"/stat | awk '{print $12+$13}'))); done; echo $t; }

measure() { # server transport
  local c0 c1 out qps done_q lost
  c0=$(ticks)
  if [[ $2 == udp ]]; then
    out=$(taskset -c 0 timeout $((secs + 20)) dnsperf -s 127.0.0.1 -p "$port" -d "$work/queries" -l "$secs" -c 4 -q 200 2>&1)
  else
    out=$(taskset -c 0 timeout $((secs + 20)) dnsperf -m tcp -s 127.0.0.1 -p "$port" -d "$work/queries" -l "$secs" -c 4 -q 200 2>&1)
  fi
  c1=$(ticks)
  qps=$(echo "$out" | awk '/Queries per second/{print $4}')
  done_q=$(echo "$out" | awk '/Queries completed/{print $3}')
  lost=$(echo "$out" | awk '/Queries lost/{print $3}')
  printf '| %s | %s | %.0f | %s | %.2f |\n' "$1" "$2" "$qps" "$lost" \
    "$(echo "scale=6; ($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / $done_q" | bc)"
}

echo "| server | transport | qps | lost | server CPU µs / query |"
echo "|---|---|---:|---:|---:|"
for server in ternd knot nsd; do
  start $server
  measure $server udp
  measure $server tcp
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  sleep 0.5
done
