#!/usr/bin/env bash
# Conformance suite: Tern's answers against Knot DNS's and NSD's for the same zones and
# queries, then (without options) the at-scale check `scale.py` (see README.md). Picked
# up by scripts/test-all.sh.
#   tests/conformance/run.sh [runner.py options]     e.g. --filter 'rfc8906/*'
# Uses $TERND or <cargo target dir>/release/ternd; while that binary is missing, Tern is
# skipped and the run only checks that Knot DNS and NSD start, answer, and where they
# differ. Exit: 0 pass, 1 Tern differs from both peers without an allowlist entry,
# 2 a peer cannot be run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

"$here/../../bench/install-tools.sh" knotd:knot nsd:nsd

(cd "$here" && python3 -m unittest -q test_harness 2>&1 | tail -n 3)
status=0
python3 "$here/runner.py" "$@" || status=$?
# The whole suite (no options) also runs the at-scale check on a TLD-sized zone, signed
# with each proof of non-existence in turn (about a minute each).
if (($# == 0)); then
  "$here/../../bench/install-tools.sh" dnssec-signzone:bind9-utils
  for denial in nsec3-optout nsec nsec3-salted; do
    echo "== at-scale check (scale.py --denial $denial)"
    scale=0
    python3 "$here/scale.py" --denial "$denial" || scale=$?
    ((scale > status)) && status=$scale
  done
fi
exit $status
