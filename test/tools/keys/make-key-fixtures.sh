#!/usr/bin/env bash
# Makes fixtures/ssh-keygen/: throwaway public keys of every type ssh-keygen (OpenSSH 9.2p1,
# Debian 12) makes, certificates signed by a throwaway CA, security-key (sk-*) public keys built
# from the upstream samples' ed25519 and ecdsa points (no hardware token here), an
# authorized_keys file holding them all with options, comments and broken lines, and what
# `ssh-keygen -l -E md5 -f` prints for each. Private halves are deleted. Run from the repo root:
#   bash test/tools/keys/make-key-fixtures.sh
set -euo pipefail
out=fixtures/ssh-keygen
samples=${UPSTREAM_SAMPLES:-/work/shared/upstream-samples}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/*.pub "$out"/*.md5

gen() { ssh-keygen -q -t "$1" ${2:+-b "$2"} -N '' -C "$3" -f "$work/$4"; cp "$work/$4.pub" "$out/$4.pub"; }
gen rsa 3072 'backup key' rsa3072
gen rsa 1024 'old rsa 1024' rsa1024
gen ecdsa 256 'ops@nas01' ecdsa256
gen ecdsa 384 'ecdsa 384 key' ecdsa384
gen ecdsa 521 'ecdsa521@host' ecdsa521
gen ed25519 '' 'admin@nas01' ed25519
gen dsa '' 'legacy dsa' dsa

# security-key public keys: type, the sample's key point, application "ssh:"
python3 - "$samples" "$out" <<'PY'
import base64, struct, sys
samples, out = sys.argv[1], sys.argv[2]
def s(b): return struct.pack('>I', len(b)) + b
def fields(path):
    blob = base64.b64decode(open(path).read().split()[1]); i = 0; f = []
    while i < len(blob):
        n = struct.unpack('>I', blob[i:i+4])[0]; f.append(blob[i+4:i+4+n]); i += 4 + n
    return f
ed = fields(f'{samples}/ssh-keygen/debian12-openssh-9.2p1-id_ed25519.pub.txt')
ec = fields(f'{samples}/ssh-keygen/debian12-openssh-9.2p1-id_ecdsa.pub.txt')
t = b'sk-ssh-ed25519@openssh.com'
open(f'{out}/sk-ed25519.pub', 'w').write(f"{t.decode()} {base64.b64encode(s(t) + s(ed[1]) + s(b'ssh:')).decode()} yubikey@laptop\n")
t = b'sk-ecdsa-sha2-nistp256@openssh.com'
open(f'{out}/sk-ecdsa.pub', 'w').write(f"{t.decode()} {base64.b64encode(s(t) + s(b'nistp256') + s(ec[2]) + s(b'ssh:')).decode()} solokey\n")
PY

# certificates, signed by a throwaway CA (deleted)
ssh-keygen -q -t ed25519 -N '' -C ca -f "$work/ca"
for k in ed25519 rsa3072 ecdsa256 sk-ed25519 sk-ecdsa; do
  cp "$out/$k.pub" "$work/$k-c.pub"
  ssh-keygen -q -s "$work/ca" -I "$k-cert" -n alice -V 20260101:20360101 -z 42 "$work/$k-c.pub"
  cp "$work/$k-c-cert.pub" "$out/$k-cert.pub"
done

for f in "$out"/*.pub; do ssh-keygen -l -E md5 -f "$f" > "${f%.pub}.md5"; done
ls -l "$out"
