#!/usr/bin/env bash
# Interoperability of zone transfers (over TLS too), NOTIFY, TSIG and dynamic updates: Tern as primary of Knot DNS, NSD,
# BIND and Tern secondaries; Knot DNS and BIND as primaries of Tern; a scripted primary
# for faults (see interop.py). Picked up by scripts/test-all.sh.
#   tests/interop/run.sh [interop.py options]     e.g. --only faults --keep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../bench/install-tools.sh" knotd:knot knotc:knot nsd:nsd named:bind9 nsupdate:bind9-dnsutils \
  dig:bind9-dnsutils openssl:openssl
exec python3 "$here/interop.py" "$@"
