#!/usr/bin/env bash
# Signs the DNSSEC conformance zones once; the signed files are committed, so the
# conformance run never signs. Re-run after changing secure.example.zone or
# optout.example.zone (new keys are made each time; that is fine, nothing pins them).
#   secure.example.  NSEC                          (RFC 4035)
#   optout.example.  NSEC3, opt-out, no salt, 0 it. (RFC 5155, RFC 9276)
# Signatures are valid from 2026-01-01 until 2045-01-01.
# Needs dnssec-keygen and dnssec-signzone (Debian package bind9-utils).
#   zones/sign.sh [origin...]    only these zones (default: both)
set -euo pipefail
cd "$(dirname "$0")"
only=("$@")
keys=$(mktemp -d)
trap 'rm -rf "$keys"' EXIT

sign() {
  local origin=$1 src=$2; shift 2
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $origin "* ]]; then
    return
  fi
  dnssec-keygen -q -K "$keys" -a ECDSAP256SHA256 -L 3600 -n ZONE "$origin" >/dev/null
  dnssec-keygen -q -K "$keys" -a ECDSAP256SHA256 -L 3600 -n ZONE -f KSK "$origin" >/dev/null
  dnssec-signzone -q -K "$keys" -d "$keys" -S -o "$origin" -s 20260101000000 -e 20450101000000 \
    -O full -f "$src.signed" "$@" "$src"
  echo "signed $origin -> $src.signed"
}

sign secure.example. secure.example.zone
sign optout.example. optout.example.zone -3 - -H 0 -A
