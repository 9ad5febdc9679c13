#!/usr/bin/env bash
# Dynamic updates against crashes (issue 28): 10,000 TSIG-signed updates over UDP and
# TCP while ternd is SIGKILLed five times, then ternd started on journals cut at random
# offsets; see crash.py. Picked up by scripts/test-all.sh, which sets $TERND; without
# it the release binary is built. About a minute; the seed is printed.
#   tests/updates/run.sh [crash.py options]     e.g. --seed 42 --keep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
"$repo/bench/install-tools.sh"
if [[ -z ${TERND:-} ]]; then
  (cd "$repo" && cargo build --release -p ternd --quiet)
fi
exec python3 "$here/crash.py" "$@"
