#!/usr/bin/env bash
# Runs every test of Tern, as CI does. Installs what it needs when missing.
#   scripts/test-all.sh            everything (unit, integration, conformance, short fuzz)
#   QUICK=1 scripts/test-all.sh    skip the fuzz runs
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pair in kdig:knot-dnsutils knotd:knot nsd:nsd named:bind9 dig:bind9-dnsutils \
            dnsperf:dnsperf ldns-signzone:ldnsutils ldns-verify-zone:ldnsutils \
            dnssec-verify:bind9-utils dnssec-keygen:bind9-utils valgrind:valgrind \
            systemd-analyze:systemd lintian:lintian dpkg-deb:dpkg logrotate:logrotate \
            ping:iputils-ping ip:iproute2 openssl:openssl \
            promtool:prometheus unbound:unbound kresd:knot-resolver; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_apt+=("${pair#*:}")
done
# PostgreSQL for the database zones' tests (crates/server/tests/postgres.rs): Debian keeps
# initdb and postgres in /usr/lib/postgresql/<version>/bin, off the PATH.
command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null \
  || need_apt+=(postgresql)
# dnspython reads WKS service names from /etc/services (the rdata corpus test).
[[ -e /etc/services ]] || need_apt+=(netbase)
# Debian's python3 takes dnspython from apt (its pip refuses, PEP 668); another python3
# first on the PATH (pyenv, a virtualenv) takes it from pip.
dnspython_from_pip=""
if ! python3 -c 'import dns.message' 2>/dev/null; then
  case "$(command -v python3 || true)" in
    "" | /usr/bin/python3) need_apt+=(python3 python3-dnspython) ;;
    *) dnspython_from_pip=1 ;;
  esac
fi
if ((${#need_apt[@]})); then
  echo "installing: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  # The packages' own services (Knot DNS, NSD, BIND, unbound, Knot Resolver on port 53,
  # Prometheus on 9090) are not started: the tests start their own servers, and the
  # host's ports stay as they were. policy-rc.d is Debian's way to say so to the packages' scripts.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    trap '$SUDO rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
[[ -z $dnspython_from_pip ]] || python3 -m pip install -q dnspython
# dnspython speaks DNS over QUIC through aioquic (the DoQ interop test, tests/doq/).
# Debian 12 has no python3-aioquic, and its dnspython (2.3) predates the QUIC calls the
# test makes: Debian's python3 takes both from pip (Debian's pip, past PEP 668's guard;
# the other tests pass with either dnspython).
if ! python3 -c 'import aioquic, dns.quic; dns.quic.SyncQuicManager(server_name="x")' \
    2>/dev/null; then
  case "$(command -v python3)" in
    /usr/bin/python3)
      if ! python3 -m pip --version >/dev/null 2>&1; then
        SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip >/dev/null
      fi
      python3 -m pip install -q --break-system-packages aioquic "dnspython>=2.6" ;;
    *) python3 -m pip install -q aioquic "dnspython>=2.6" ;;
  esac
fi
cargo nextest --version >/dev/null 2>&1 || cargo install cargo-nextest --locked

echo "== format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

echo "== unit and integration tests"
cargo nextest run --workspace --release --no-fail-fast

echo "== zone blobs under valgrind"
scripts/valgrind-blob.sh

echo "== benchmark report checks"
python3 -m unittest discover -s bench -p 'test_*.py'

# The conformance suite runs the release ternd (the interop tests ternctl beside it);
# make sure both are this tree's.
cargo build --release -p ternd -p tern-ctl --quiet
export TERND="$PWD/target/release/ternd"
[[ -x $TERND ]] || { echo "no ternd binary at $TERND" >&2; exit 1; }

for t in tests/*/run.sh; do
  [[ -x $t ]] || continue
  echo "== $t"
  "$t"
done

if [[ -z ${QUICK:-} && -x fuzz/run-short.sh ]]; then
  echo "== short fuzz runs"
  fuzz/run-short.sh
fi
echo "== all tests passed"
