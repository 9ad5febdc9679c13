#!/usr/bin/env bash
# Makes the certificates of the tests of zone transfers over TLS (client side): a CA,
# a primary's certificate for ns1.example signed by it (its key and key pin), and a
# client certificate for mutual TLS. Valid for a hundred years; run again to renew.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ec "$tmp/ca.key"
openssl req -x509 -new -key "$tmp/ca.key" -subj "/CN=Tern test CA" -days 36500 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -out ca.pem
sign() { # name key subject-alt-names extended-key-usage
  openssl req -new -key "$2" -subj "/CN=$1" -out "$tmp/$1.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' "$3" "$4" >"$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA ca.pem -CAkey "$tmp/ca.key" -days 36500 \
    -extfile "$tmp/$1.ext" -out "$1.pem"
}
ec ns1.key
sign ns1 ns1.key "DNS:ns1.example" serverAuth
openssl x509 -in ns1.pem -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64 >ns1.pin
ec client.key
sign client client.key "DNS:secondary.example" clientAuth
