#!/usr/bin/env bash
# Dynamic updates against crashes (issue 28): 10,000 TSIG-signed updates over UDP and
# TCP while ternd is SIGKILLed five times, then ternd started on journals cut at random
# offsets; then 3,000 more on a zone whose file is never written (see crash.py). Picked
# up by scripts/test-all.sh, which sets $TERND; without it the release binary is built.
# About a minute and a half; the seeds are printed.
#   tests/updates/run.sh [crash.py options]     e.g. --seed 42 --keep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
"$repo/bench/install-tools.sh"
if [[ -z ${TERND:-} ]]; then
  (cd "$repo" && cargo build --release -p ternd --quiet)
fi
python3 "$here/crash.py" "$@"
# Issue #53, item 2: a zone file that is never written (zonefile-sync = "never"), its
# journal compacted into one change from the file again and again.
echo "-- zonefile-sync = \"never\""
python3 "$here/crash.py" --zonefile-sync never --ixfr-history 20 --ixfr-history-size 20000 \
  --updates 3000 --kills 3 "$@"
