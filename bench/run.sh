#!/usr/bin/env bash
# Peer benchmark, one command: Tern, Knot DNS, NSD, BIND and the floor responder on the
# same TLD-like zone and query mix (see bench.py and docs/benchmarks.md).
#   bench/run.sh [--servers tern,knot,nsd,bind,floor] [--sizes 100k] [--load-sizes 1m]
#                [--modes udp,do,tcp,fresh] [--duration 10] [--repeats 3] [--tern PATH]
# Zones, signed zones, query files and compiled tools are cached in bench/out (--work).
# Needs 2+ CPUs (server on CPU 1, load generator on CPU 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

"$here/install-tools.sh" knotd:knot nsd:nsd named:bind9 dnsperf:dnsperf \
  dnssec-signzone:bind9-utils cc:gcc taskset:util-linux
if (($(nproc) < 2)); then echo "bench/run.sh needs at least 2 CPUs" >&2; exit 2; fi

exec python3 "$here/bench.py" "$@"
