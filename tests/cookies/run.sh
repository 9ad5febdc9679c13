#!/usr/bin/env bash
# DNS cookies of Tern beside BIND's and Knot DNS's: the same secret and client cookie, the
# same answers (see cookies.py). Picked up by scripts/test-all.sh.
#   tests/cookies/run.sh [cookies.py options]     e.g. --tern target/debug/ternd --keep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../bench/install-tools.sh" knotd:knot named:bind9
exec python3 "$here/cookies.py" "$@"
