#!/usr/bin/env bash
# Installs what the benchmark and the conformance suite need, only when missing.
#   bench/install-tools.sh COMMAND:DEBIAN_PACKAGE ...   (e.g. knotd:knot nsd:nsd)
# dnspython (pip) is always checked.
set -euo pipefail
need=()
for pair in "$@"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -c 'import dns.message' 2>/dev/null || python3 -m pip install -q dnspython
