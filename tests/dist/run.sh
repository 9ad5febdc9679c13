#!/usr/bin/env bash
# Checks what a package installs, and the package itself. Picked up by scripts/test-all.sh.
#  * the systemd unit passes `systemd-analyze verify` (with the binary path pointed at this
#    tree's build, the man pages not looked for; skipped, with a message, where
#    systemd-analyze is missing);
#  * its ExecStartPre check accepts the shipped configuration and the complete example;
#  * dist/build-deb builds the Debian package (from the release build the tests use, not
#    the package's fully optimised perf build: the packaging is what is checked), which holds
#    the binaries (ternd and ternctl), unit, pages, completions, configuration and sysusers file, and which
#    lintian passes without errors (its warnings are printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ternd=${TERND:-$repo/target/release/ternd}
[[ -x $ternd ]] || { echo "no ternd at $ternd: build it (cargo build --release -p ternd)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/sbin/ternd|$ternd|g" "$repo/dist/ternd.service" > "$work/ternd.service"
  # verify prints nothing when the unit is sound; the pages Documentation= names are
  # checked in the package (they are not installed here).
  out=$(systemd-analyze verify --man=no "$work/ternd.service" 2>&1 || true)
  if [[ -n $out ]]; then
    echo "systemd-analyze verify dist/ternd.service:" >&2
    echo "$out" >&2
    exit 1
  fi
  # With the drop-in that lets [xdp] work (read from ternd.service.d/ beside it).
  mkdir "$work/ternd.service.d"
  cp "$repo/dist/ternd-xdp.conf" "$work/ternd.service.d/xdp.conf"
  out=$(SYSTEMD_UNIT_PATH="$work:" systemd-analyze verify --man=no "$work/ternd.service" 2>&1 || true)
  [[ -z $out ]] || { echo "systemd-analyze verify with dist/ternd-xdp.conf:" >&2; echo "$out" >&2; exit 1; }
  echo "dist: ternd.service verified, alone and with dist/ternd-xdp.conf"
else
  echo "dist: systemd-analyze missing (apt-get install systemd): the unit is not verified" >&2
fi
grep -q '^Type=notify$' "$repo/dist/ternd.service"
grep -q '^WatchdogSec=' "$repo/dist/ternd.service"
"$ternd" --check-config "$repo/dist/ternd.toml" >/dev/null
"$ternd" --check-config "$repo/docs/ternd.example.toml" --skip-zones >/dev/null
# The shipped configuration opens the control socket where ternctl looks by default
# (the unit's RuntimeDirectory): a fresh install answers `ternctl status`.
ternctl=$(dirname "$ternd")/ternctl
grep -q '^socket = "/run/tern/ternd.sock"$' "$repo/dist/ternd.toml"
grep -q '^RuntimeDirectory=tern$' "$repo/dist/ternd.service"
out=$("$ternctl" --config "$repo/dist/ternd.toml" status 2>&1 || true)
grep -qF 'ternctl: /run/tern/ternd.sock: ' <<<"$out" ||
  { echo "ternctl --config dist/ternd.toml does not ask /run/tern/ternd.sock: $out" >&2; exit 1; }
"$ternctl" --help | grep -qF 'else /run/tern/ternd.sock)' ||
  { echo "ternctl's default socket is not /run/tern/ternd.sock" >&2; exit 1; }

deb=$("$repo/dist/build-deb" --profile release | tail -n 1)
[[ -f $deb ]] || { echo "dist/build-deb made no package ($deb)" >&2; exit 1; }
dpkg-deb -c "$deb" | awk '{ print $6 }' > "$work/contents"
want=(
  ./usr/sbin/ternd ./usr/share/man/man8/ternd.8.gz ./usr/share/man/man5/ternd.toml.5.gz
  ./usr/share/bash-completion/completions/ternd ./usr/share/zsh/vendor-completions/_ternd
  ./usr/share/fish/vendor_completions.d/ternd.fish ./usr/lib/systemd/system/ternd.service
  ./etc/tern/ternd.toml ./usr/lib/sysusers.d/ternd.conf ./usr/share/doc/tern/copyright
  ./usr/share/doc/tern/examples/ternd.example.toml ./usr/share/doc/tern/examples/ternd-xdp.conf
  ./usr/share/doc/tern/configuration.md ./usr/share/doc/tern/api.yaml
  ./usr/sbin/ternctl ./usr/share/man/man8/ternctl.8.gz
  ./usr/share/bash-completion/completions/ternctl ./etc/logrotate.d/tern
)
for path in "${want[@]}"; do
  grep -qxF "$path" "$work/contents" || { echo "$deb lacks $path" >&2; exit 1; }
done
dpkg-deb -I "$deb" conffiles | grep -qxF /etc/tern/ternd.toml
dpkg-deb -I "$deb" conffiles | grep -qxF /etc/logrotate.d/tern
grep -q '^LogsDirectory=tern$' "$repo/dist/ternd.service"
# The shipped logrotate file parses (debug mode changes nothing).
command -v logrotate >/dev/null || { echo "logrotate missing (apt-get install logrotate)" >&2; exit 1; }
logrotate -d -s "$work/logrotate.state" "$repo/dist/logrotate" 2>"$work/logrotate.out" ||
  { cat "$work/logrotate.out" >&2; echo "logrotate refuses dist/logrotate" >&2; exit 1; }
! grep -qi "error" "$work/logrotate.out" || { cat "$work/logrotate.out" >&2; exit 1; }
dpkg-deb -I "$deb" postinst | grep -q 'systemd-sysusers .*ternd\.conf'
dpkg-deb -I "$deb" postinst | grep -q 'deb-systemd-helper enable ternd\.service'
command -v lintian >/dev/null || { echo "lintian missing (apt-get install lintian)" >&2; exit 1; }
if out=$(lintian --fail-on error "$deb" 2>&1); then status=0; else status=$?; fi
grep -v 'running with root privileges' <<<"$out" || true
((status == 0)) || { echo "lintian: errors in $deb" >&2; exit 1; }
echo "dist: $deb built, its contents checked, lintian without errors"
