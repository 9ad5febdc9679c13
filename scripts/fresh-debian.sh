#!/usr/bin/env bash
# The fresh-machine check (issue #53, item 8): the README's commands on a clean Debian 12.
#
#   scripts/fresh-debian.sh [--tests] [--keep] [--budget SECONDS] [--dir PARENT]
#
# As root (chroot and mounts; mmdebstrap is installed with apt-get when missing):
#  1. builds a Debian 12 (bookworm) root with mmdebstrap from Debian's packages: the
#     "important" set, plus what the README asks a fresh machine for (PREREQUISITES
#     below) and dnsutils for dig;
#  2. copies in this machine's Rust toolchain and nothing else of it: rustup, the active
#     toolchain and settings (no crates, no cargo-installed tools), and a clone of this
#     repository at HEAD (uncommitted changes are not checked); and this machine's local
#     certificate authorities, if any (a proxy that intercepts TLS on the way to
#     crates.io);
#  3. runs the README's first command there (the first line of its first code block),
#     timed from its start until `dig @127.0.0.1 -p 8053 www.example.com` in the root gets
#     an answer (crates are fetched from crates.io within that time); more than
#     --budget seconds (default 180) fails the check, but the figure is still printed;
#  4. times `cargo build --profile perf -p ternd -p tern-ctl` (the fully optimised
#     build), builds the package from it with dist/build-deb, installs it
#     with apt-get, starts `ternd --config /etc/tern/ternd.toml` (a chroot has no
#     systemd) in a network namespace of its own (port 53 of this machine is untouched)
#     and checks that `ternctl status` answers;
#  5. with --tests, runs the README's second command (scripts/test-all.sh, which installs
#     what it needs; 30 minutes or more) in the root.
# The root lives in a new directory under PARENT (default /var/tmp; about 5 GB with the
# builds), unmounted and removed at the end unless --keep. Network: Debian's mirror
# (deb.debian.org) and crates.io only. The whole check takes about 14 minutes on 2 cores
# (2026-11-29), too long for scripts/test-all.sh, which does not run it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# What the README says a fresh Debian machine needs besides Rust (and ca-certificates,
# which installing rustup needs too).
PREREQUISITES=(build-essential git ca-certificates)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

tests="" keep="" budget=180 dir=""
while (($#)); do
  case $1 in
    --tests) tests=1 ;;
    --keep) keep=1 ;;
    --budget) budget=${2:?}; shift ;;
    --dir) dir=${2:?}; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-debian: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done

say() { printf 'fresh-debian: %s\n' "$*"; }
die() { printf 'fresh-debian: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap, chroot, mounts)"
if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi

# The README's two commands: the first two lines of its first code block, less comments.
mapfile -t readme < <(awk '/^```/ { if (block) exit; block = 1; next } block' "$repo/README.md" |
  head -n 2 | sed 's/[[:space:]]*#.*$//')
first=${readme[0]:-} second=${readme[1]:-}
[[ -n $first && -n $second ]] || die "README.md does not start with a code block of two commands"
say "first command:  $first"
say "second command: $second"

# This machine's toolchain: rustup's home and cargo's (for the rustup proxies only).
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=$(dirname "$(command -v rustup || command -v cargo)")
toolchain=$(cd "$repo" && rustup show active-toolchain | awk '{ print $1; exit }')
[[ -n $toolchain && -d $rustup_home/toolchains/$toolchain ]] || die "no rustup toolchain $toolchain in $rustup_home"
[[ -x $cargo_bin/rustup ]] || die "no rustup in $cargo_bin"

mkdir -p "${dir:=/var/tmp}"
dir=$(mktemp -d "$dir/tern-fresh.XXXXXX")
root=$dir/root
server_pid=""
cleanup() {
  local status=$? m
  set +e
  [[ -z $server_pid ]] || kill -- "-$server_pid" 2>/dev/null
  for m in dev/pts dev sys proc; do
    if mountpoint -q "$root/$m" 2>/dev/null; then umount "$root/$m" || umount -l "$root/$m"; fi
  done
  if [[ -n $keep ]]; then
    say "kept $root"
  elif grep -qF " $root/" /proc/self/mounts; then
    say "not removing $dir: something is still mounted under it" >&2
  else
    rm -rf --one-file-system "$dir"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "building a Debian 12 root in $root"
start=$(date +%s)
packages=$(IFS=,; echo "${PREREQUISITES[*]},dnsutils,iproute2")
mmdebstrap --quiet --variant=important --include="$packages" bookworm "$root" "$MIRROR" \
  >"$dir/mmdebstrap.log" 2>&1 || { tail -n 20 "$dir/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
say "root built in $(($(date +%s) - start)) s (packages: $packages)"

# The toolchain, as rustup installs it: /root/.cargo/bin (rustup and its proxies, here
# links to rustup) and /root/.rustup (the toolchain and settings).
mkdir -p "$root/root/.cargo/bin" "$root/root/.rustup/toolchains/$toolchain"
install -m 755 "$cargo_bin/rustup" "$root/root/.cargo/bin/rustup"
for proxy in cargo rustc rustdoc rustfmt cargo-fmt cargo-clippy clippy-driver rust-gdb; do
  ln -s rustup "$root/root/.cargo/bin/$proxy"
done
cp -a "$(realpath "$rustup_home/toolchains/$toolchain")/." "$root/root/.rustup/toolchains/$toolchain/"
printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "default"\n' "$toolchain" \
  >"$root/root/.rustup/settings.toml"
git clone --quiet --no-hardlinks "$repo" "$root/root/tern"
say "copied in: the Rust toolchain $toolchain ($(du -sh "$root/root/.rustup" | cut -f1)) and the source at $(git -C "$repo" rev-parse --short=12 HEAD)"

cp /etc/resolv.conf "$root/etc/resolv.conf"
# Certificate authorities this machine adds to Debian's (a proxy's that intercepts TLS),
# so that the root reaches crates.io as this machine does; none on a plain machine.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
  say "added this machine's local certificate authorities: $(cd /usr/local/share/ca-certificates && echo *.crt)"
fi
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# Packages' services are not started in the root (Debian's policy-rc.d).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

# A login shell of the fresh machine's root user, in the source tree.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root USER=root LANG=C.UTF-8 TERM=dumb \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/tern && $1"
}
in_root 'cargo --version && rustc --version && gcc --version | head -n 1'

# 1. The first command, timed until dig answers.
if ss -Hlnu 'sport = :8053' | grep -q .; then
  die "UDP port 8053 is taken on this machine: the demo could not serve it"
fi
say "running the README's first command (budget $budget s; load:$(uptime | sed 's/.*load average://'))"
start=$(date +%s)
setsid chroot "$root" /usr/bin/env -i HOME=/root USER=root LANG=C.UTF-8 TERM=dumb \
  PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /root/tern && $first" >"$dir/first.log" 2>&1 &
server_pid=$!
answer=""
while kill -0 "$server_pid" 2>/dev/null; do
  reply=$(in_root 'dig +time=1 +tries=1 +noall +comments +answer @127.0.0.1 -p 8053 www.example.com A' 2>/dev/null || true)
  if grep -q 'status: NOERROR' <<<"$reply" && grep -q 'flags: qr aa.*ANSWER: [1-9]' <<<"$reply"; then
    answer=$(grep -v '^;\|^$' <<<"$reply" | awk '{ print $1, $4, $5 }' | paste -sd ';' -)
    break
  fi
  (($(date +%s) - start > 3600)) && break
  sleep 1
done
elapsed=$(($(date +%s) - start))
built=$(grep -o 'Finished .* in .*' "$dir/first.log" | tail -n 1 || true)
if [[ -z $answer ]]; then
  tail -n 30 "$dir/first.log" >&2
  die "no answer from the demo after $elapsed s"
fi
say "dig answered after ${elapsed} s (aa, NOERROR: $answer); cargo: $built (load:$(uptime | sed 's/.*load average://'))"
kill -- "-$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
in_root 'ls -l target/release/ternd target/release/ternctl'
status=0
((elapsed <= budget)) || { say "FAILED: $elapsed s is over the budget of $budget s"; status=1; }

# 2. The package: built, installed, started; ternctl answers.
say "building the perf profile (load:$(uptime | sed 's/.*load average://'))"
start=$(date +%s)
in_root 'cargo build --profile perf -p ternd -p tern-ctl --quiet' >"$dir/perf.log" 2>&1 ||
  { tail -n 30 "$dir/perf.log" >&2; die "cargo build --profile perf failed"; }
perf_time=$(($(date +%s) - start))
say "cargo build --profile perf -p ternd -p tern-ctl: $perf_time s (load:$(uptime | sed 's/.*load average://'))"
say "building the package (dist/build-deb, which installs cargo-deb)"
start=$(date +%s)
deb=$(in_root 'dist/build-deb' 2>"$dir/build-deb.log" | tail -n 1) ||
  { tail -n 30 "$dir/build-deb.log" >&2; die "dist/build-deb failed"; }
say "package built in $(($(date +%s) - start)) s: $deb"
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./${deb#/root/tern/}" >"$dir/install.log" 2>&1 ||
  { tail -n 30 "$dir/install.log" >&2; die "the package did not install"; }
in_root 'dpkg -s tern | grep -E "^(Status|Version)"; id tern'
# The unit's RuntimeDirectory= and StateDirectory=, which systemd would make.
in_root 'install -d -o tern -g tern -m 750 /run/tern /var/lib/tern'
reply=$(unshare --net chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c '
    ip link set lo up
    ternd --config /etc/tern/ternd.toml >/var/log/ternd.out 2>&1 & pid=$!
    for _ in $(seq 100); do
      if out=$(ternctl status 2>&1); then echo "$out"; kill $pid; wait $pid; exit 0; fi
      kill -0 $pid 2>/dev/null || break
      sleep 0.1
    done
    echo "ternctl status: $out"; echo "ternd:"; tail -n 20 /var/log/ternd.out
    kill $pid 2>/dev/null; exit 1') ||
  { echo "$reply" >&2; die "the installed ternd did not answer ternctl status"; }
say "installed ternd started (ternd --config /etc/tern/ternd.toml); ternctl status answered:"
sed 's/^/  /' <<<"$reply"

# 3. Every test, on request.
if [[ -n $tests ]]; then
  say "running the README's second command: $second"
  start=$(date +%s)
  if in_root "$second" >"$dir/tests.log" 2>&1; then
    say "tests passed in $(($(date +%s) - start)) s"
  else
    tail -n 40 "$dir/tests.log" >&2
    say "FAILED: the tests, after $(($(date +%s) - start)) s (log: $dir/tests.log)"
    status=1
  fi
fi

((status == 0)) && say "fresh Debian 12: the first command answered dig in $elapsed s (budget $budget s); perf build $perf_time s; the package installed, ternd started, ternctl answered"
exit "$status"
