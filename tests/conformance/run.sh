#!/usr/bin/env bash
# Conformance suite: Tern's answers against Knot DNS's and NSD's for the same zones and
# queries (see README.md). Picked up by scripts/test-all.sh.
#   tests/conformance/run.sh [runner.py options]     e.g. --filter 'rfc8906/*'
# Uses $TERND or <cargo target dir>/release/ternd; while that binary is missing, Tern is
# skipped and the run only checks that Knot DNS and NSD start, answer, and where they
# differ. Exit: 0 pass, 1 Tern differs from both peers without an allowlist entry,
# 2 a peer cannot be run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

need=()
command -v knotd >/dev/null 2>&1 || need+=(knot)
command -v nsd >/dev/null 2>&1 || need+=(nsd)
if ((${#need[@]})); then
  echo "installing: ${need[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -c 'import dns.message' 2>/dev/null || python3 -m pip install -q dnspython

exec python3 "$here/runner.py" "$@"
