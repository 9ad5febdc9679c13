#!/usr/bin/env bash
# Peer benchmark, one command: Tern, Knot DNS, NSD, BIND and the floor responder on the
# same TLD-like zone and query mix (see bench.py and docs/benchmarks.md).
#   bench/run.sh [--servers tern,knot,nsd,bind,floor] [--sizes 100k] [--load-sizes 1m]
#                [--modes udp,do,tcp,fresh] [--duration 10] [--repeats 3] [--tern PATH]
# Zones, signed zones, query files and compiled tools are cached in bench/out (--work).
# Needs 2+ CPUs (server on CPU 1, load generator on CPU 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

need=()
for pair in knotd:knot nsd:nsd named:bind9 dnsperf:dnsperf dnssec-signzone:bind9-utils \
            cc:gcc taskset:util-linux; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -c 'import dns.message' 2>/dev/null || python3 -m pip install -q dnspython
if (($(nproc) < 2)); then echo "bench/run.sh needs at least 2 CPUs" >&2; exit 2; fi

exec python3 "$here/bench.py" "$@"
