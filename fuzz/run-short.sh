#!/usr/bin/env bash
# Runs every fuzz target for a short time (FUZZ_SECONDS, default 30) as part of CI.
# cargo-fuzz needs unstable compiler flags; RUSTC_BOOTSTRAP lets the stable toolchain
# accept them (this machine has no nightly).
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
secs=${FUZZ_SECONDS:-30}
targets=$(cargo fuzz list)
cargo fuzz build --release $targets >/dev/null 2>&1 || cargo fuzz build --release
for t in $targets; do
  mkdir -p "corpus/$t"
  [[ -d "seeds/$t" ]] && cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
  echo "fuzz $t for ${secs}s"
  cargo fuzz run --release "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len=65535 2>&1 | grep -E "^(Done|==|SUMMARY)|panicked|ERROR" || true
  if ls "artifacts/$t"/crash-* "artifacts/$t"/timeout-* "artifacts/$t"/oom-* >/dev/null 2>&1; then
    echo "fuzz target $t found a failure: see fuzz/artifacts/$t" >&2
    exit 1
  fi
done
