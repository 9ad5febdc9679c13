#!/usr/bin/env bash
# Runs the tests of tern-zone's hand-written allocation (crates/zone/src/blob.rs: a
# reference-counted byte string behind a one-word pointer) and of the copy-on-write code
# that shares blobs between snapshots under valgrind's memcheck. A read of freed or
# unallocated memory, a double or mismatched free, or a blob that is never freed
# ("definitely lost") fails the run. Miri would need the miri component, which the
# toolchains here do not have, and AddressSanitizer a second, instrumented build under
# unstable flags; valgrind checks the binary the test run already built, optimised.
#
#   scripts/valgrind-blob.sh                       the release unit tests (test-all.sh's)
#   scripts/valgrind-blob.sh -p tern-zone          a debug build of tern-zone alone
#
# Arguments are passed to `cargo test --no-run` (default: --workspace --release, which
# reuses the binary `cargo nextest run --workspace --release` built). Once the binary is
# built, the release tests take about 5 s under valgrind, the debug ones about 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

args=("$@")
((${#args[@]})) || args=(--workspace --release)

# The unit-test executable of the tern-zone library, as cargo reports it.
binary=$(cargo test "${args[@]}" --lib --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and m["target"]["name"] == "tern_zone"
            and m["profile"]["test"] and m.get("executable")):
        print(m["executable"])
')
[[ -x $binary ]] || { echo "no tern-zone unit-test binary found (cargo test ${args[*]} --lib --no-run)" >&2; exit 1; }

# blob::        the allocation itself: sizes from 0 bytes up, clones and drops on many
#               threads, the last reference dropped on any thread
# node::, cow:: blobs written by the node encoder, copy-on-write chunks holding them
# changeset_tests:: / db:: / pins::  snapshots that share blobs being changed, published,
#               pinned and dropped
echo "valgrind: $binary"
valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite "$binary" --quiet \
  blob:: node::tests:: cow:: builder::table::tests:: changeset_tests:: db::tests:: pins::tests::
