#!/usr/bin/env bash
# Generates the demo's certificates once (they are committed): two trusted CAs, a lab CA for the
# add example, the served chain (root → intermediate → server, seed files), a second chain for
# the ingest example, and the key + certificate the regenerate fixtures answer with.
# Usage: test/tools/certificate/make-demo-pems.sh OUTDIR   (then copy the files into place)
set -euo pipefail
out=${1:?outdir}
mkdir -p "$out"
cd "$out"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() { # name subject [issuer-name]
  key "$1.key"
  if [ -z "${3:-}" ]; then
    openssl req -new -x509 -key "$1.key" -sha256 -days 3650 -subj "$2" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$1.crt"
  else
    openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
    printf 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n' > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -days 3000 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  fi
}
leaf() { # name cn issuer
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s,IP:192.0.2.10\n' "$2" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -CAcreateserial -days 825 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
}
ca corp-root-ca '/O=Example Corp/CN=Example Corp Root CA'
ca partner-ca '/O=Partner Inc/CN=Partner Inc Issuing CA'
ca lab-ca '/O=Example Lab/CN=Example Lab CA'
ca served-root '/O=Demo Appliance/CN=Demo Appliance Root CA'
ca served-intermediate '/O=Demo Appliance/CN=Demo Appliance Intermediate CA' served-root
leaf served-server demo-appliance served-intermediate
ca new-root '/O=Example Corp/CN=Example Corp TLS Root 2026'
ca new-intermediate '/O=Example Corp/CN=Example Corp TLS Issuing 2026' new-root
leaf new-server demo-appliance.corp.example.com new-intermediate
# regenerate: what `openssl genpkey` and `openssl req` answer in the demo (see fixtures/demo/certificate)
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 > regen.key
openssl req -new -x509 -key regen.key -sha256 -days 825 -subj /CN=demo-appliance \
  -addext subjectAltName=DNS:demo-appliance,IP:192.0.2.10 -addext basicConstraints=critical,CA:FALSE \
  -addext keyUsage=critical,digitalSignature -addext extendedKeyUsage=serverAuth > regen.crt
rm -f ./*.csr ./*.ext ./*.srl
