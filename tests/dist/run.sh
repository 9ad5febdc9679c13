#!/usr/bin/env bash
# Checks the files a package installs: the systemd unit passes `systemd-analyze verify`
# (with the binary path pointed at this tree's build) and its ExecStartPre check accepts
# the example configuration. Picked up by scripts/test-all.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ternd=${TERND:-$repo/target/release/ternd}
[[ -x $ternd ]] || { echo "no ternd at $ternd: build it (cargo build --release -p ternd)" >&2; exit 2; }
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (apt-get install systemd)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s|/usr/sbin/ternd|$ternd|g" "$repo/dist/ternd.service" > "$work/ternd.service"
# verify prints nothing when the unit is sound.
out=$(systemd-analyze verify "$work/ternd.service" 2>&1 || true)
if [[ -n $out ]]; then
  echo "systemd-analyze verify dist/ternd.service:" >&2
  echo "$out" >&2
  exit 1
fi
grep -q '^Type=notify$' "$repo/dist/ternd.service"
"$ternd" --check-config "$repo/docs/ternd.example.toml" --skip-zones >/dev/null
echo "dist: ternd.service verified"
