#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: admission on one node (fractctl secret, the fabric
# loopback as its own peer).  vm/run's guest-init set the run's secret
# ($FRACTOS_SECRET).  Checks: the mode and key id it reports; bad secrets
# refused with nothing changed; no CAP_NET_ADMIN; the node admits itself
# with the secret (log: authenticated), also after a rotation (the
# previous key id kept, then forgotten); with every secret forgotten it
# does not even try (log), and "secret insecure" brings it up unauthenticated
# (log and status say INSECURE); no refusals or failed proofs meanwhile.
# Pair keys: a row derived here from a fresh master (its keys and key ids
# checked against Python's hmac), installed with "secret row": the node
# admits itself with its pair key alone once the cluster secret is
# forgotten, through a rotation to generation 2; each "secret forget"
# variant; a row of another node refused.
# Multi-node cases (mismatched secrets, rolling rotation, wrong address)
# are in tests/multinode/auth.sh.  Prints TAP.
cd "$(dirname "$0")" || exit 1

fractctl=$(realpath ../../tools/fractctl 2>/dev/null)
params=/sys/module/fractos/parameters
tmp=$(mktemp -d /tmp/fos-auth.XXXXXX) || exit 1
added=

# shellcheck source-path=SCRIPTDIR
. ./tap.sh
diag() { echo "# $*"; }

restore() {
	[ -n "$added" ] && "$fractctl" node del "$id" >/dev/null 2>&1
	"$fractctl" secret forget all >/dev/null 2>&1
	[ -n "${FRACTOS_SECRET:-}" ] && "$fractctl" secret set "$FRACTOS_SECRET" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap restore EXIT

# fc ARGS...: run fractctl (stdin from $tmp/in); $rc, $out, $err
fc() {
	"$fractctl" "$@" >"$tmp/out" 2>"$tmp/err" <"$tmp/in"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
: >"$tmp/in"

# json EXPR: $out is JSON and EXPR (Python over d and env) holds.
json() {
	EXPR=$1 python3 -c '
import json, os, sys
d = json.load(sys.stdin)
env = os.environ
sys.exit(0 if eval(env["EXPR"]) else 1)' <"$tmp/out" 2>>"$tmp/err"
}

has() { printf '%s\n' "$1" | grep -q -- "$2"; }

# stat NAME: a fabric-wide counter
stat() {
	"$fractctl" -j stats | python3 -c "import json,sys; print(json.load(sys.stdin)['stats']['$1'])"
}

# state: the node's state ("" if it is not configured)
state() {
	"$fractctl" -j node show "$id" 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])' 2>/dev/null
}

# wait_up SECS: the node comes up within SECS
wait_up() {
	i=0
	while [ $i -lt $(($1 * 10)) ]; do
		[ "$(state)" = up ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# readd: delete the node and add it again (a new handshake)
readd() {
	"$fractctl" node del "$id" >/dev/null 2>&1
	"$fractctl" node add "$id" "$addr" >/dev/null && added=1
}

# keyid HEXKEY: the key id of a key, computed here as the kernel does
keyid() {
	python3 -c '
import hashlib, hmac, sys
d = hmac.new(bytes.fromhex(sys.argv[1]), b"fractos key id", hashlib.sha256).digest()
print("%08x" % (int.from_bytes(d[:4], "little") or 1))' "$1"
}

# pairkey I J G: K(I,J,G) of $tmp/master, computed here (security.rst)
pairkey() {
	python3 -c '
import hashlib, hmac, struct, sys
i, j, g = map(int, sys.argv[2:])
m = open(sys.argv[1], "rb").read()
msg = b"fractos v7 pair" + struct.pack("<III", min(i, j), max(i, j), g)
print(hmac.new(m, msg, hashlib.sha256).hexdigest())' "$tmp/master" "$@"
}

# pairs: the number of nodes this node holds a pair key for
pairs() { "$fractctl" -j secret | python3 -c 'import json,sys; print(json.load(sys.stdin)["pairs"])'; }

# logged PATTERN: the kernel log has PATTERN since the mark
logged() { dmesg | sed -n "/fos-auth-mark-$n0/,\$p" | grep -q -- "$1"; }
mark() { n0=$n; echo "fos-auth-mark-$n0" >/dev/kmsg; }

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -d /sys/class/misc/fractos ]; then
	echo "1..0 # SKIP needs root and the module loaded"
	exit 0
fi
if [ ! -x "$fractctl" ] || [ -z "${FRACTOS_SECRET:-}" ]; then
	echo "1..0 # SKIP needs tools/fractctl and vm/run's FRACTOS_SECRET"
	exit 0
fi
addr=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
if [ -z "$addr" ] || [ ! -d /sys/class/infiniband/rxe0 ]; then
	echo "1..0 # SKIP no IPv4 address on eth0 or no rxe0"
	exit 0
fi
echo "1..40"
id=$(cat $params/node_id)
refused0=$(stat refused)
failures0=$(stat auth_failures)

# ---- the secret guest-init set
fc -j secret
[ $rc = 0 ] && json 'd["mode"] == "secret" and len(d["key_id"]) == 8 and "previous_key_id" not in d and "secret" not in d'
ok $? "secret -j: mode secret, a key id, nothing else"
key1=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["key_id"])' <"$tmp/out")
fc secret
[ $rc = 0 ] && [ "$out" = "secret $key1" ]
ok $? "secret: \"secret $key1\""
cp "$FRACTOS_SECRET" "$tmp/in"
fc -j secret set
[ $rc = 0 ] && json 'd["key_id"] == "'"$key1"'" and "previous_key_id" not in d'
ok $? "setting the same secret again (stdin) changes nothing"

# ---- bad secrets: refused, nothing changes
printf 'fifteen bytes..' >"$tmp/in"
fc secret set
[ $rc = 1 ] && has "$err" "a secret has 16 to 128 bytes"
ok $? "a 15-byte secret: refused, exit 1"
head -c 129 /dev/zero | tr '\0' x >"$tmp/s129"
fc secret set "$tmp/s129"
[ $rc = 1 ] && has "$err" "a secret has 16 to 128 bytes"
ok $? "a 129-byte secret: refused, exit 1"
fc secret set /nonexistent/secret
[ $rc = 1 ] && has "$err" "No such file"
ok $? "a missing file: refused, exit 1"
: >"$tmp/in"
fc -j secret
[ $rc = 0 ] && json 'd["key_id"] == "'"$key1"'" and "previous_key_id" not in d'
ok $? "still key $key1 after the refusals"
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$fractctl" secret forget all >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ $rc = 1 ] && has "$(cat "$tmp/err")" "must be root (CAP_NET_ADMIN)" &&
		[ "$("$fractctl" secret)" = "secret $key1" ]
	ok $? "secret forget all without CAP_NET_ADMIN: EPERM, nothing forgotten"
else
	ok 0 "# SKIP no setpriv"
fi

# ---- admitted with the secret
mark
readd
wait_up 30
ok $? "node $id (itself) comes up with the secret"
logged "node $id up (.*authenticated)"
ok $? "the kernel log says: authenticated"

# ---- rotation: the previous key id is kept until forgotten
head -c 32 /dev/urandom >"$tmp/s2"
fc -j secret set "$tmp/s2"
[ $rc = 0 ] && json 'd["key_id"] != "'"$key1"'" and d["previous_key_id"] == "'"$key1"'"'
ok $? "a new secret: new key id, $key1 kept as the previous one"
key2=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["key_id"])' <"$tmp/out")
[ "$(state)" = up ]
ok $? "the live connection is not touched"
readd
wait_up 30
ok $? "a new handshake with the new secret: up"
fc -j secret forget
[ $rc = 0 ] && json '"previous_key_id" not in d and d["mode"] == "secret"'
ok $? "secret forget: the previous one is gone"

# ---- pair keys: this node's row, from a master made here
umask 077
rm -f "$tmp/out"	# fc's output, made again 0600: derive warns of others' access
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/master" # no trailing newline
p1=70001 p2=70002	# not configured: a row may hold keys for any node
fc secret derive "$tmp/master" node "$id" peers "$id,$p1-$p2"
cp "$tmp/out" "$tmp/row1"
[ $rc = 0 ] && [ -z "$err" ] && has "$out" "^node $id generation 1\$" &&
	has "$out" "^peer $id $(pairkey "$id" "$id" 1)\$" &&
	has "$out" "^peer $p2 $(pairkey "$id" "$p2" 1)\$" && [ "$(grep -c '^peer ' "$tmp/row1")" = 3 ]
ok $? "secret derive: node $id's row of 3 peers, the keys computed here"
fc -j secret row "$tmp/row1"
[ $rc = 0 ] && json 'd["mode"] == "secret" and d["pairs"] == 3 and d["key_id"] == "'"$key2"'"'
ok $? "secret row: 3 pair keys (STATS), the cluster secret $key2 kept"
k1=$(keyid "$(pairkey "$id" "$id" 1)")
fc -j node show "$id"
[ $rc = 0 ] && json 'd[0]["key_id"] == "'"$k1"'" and "previous_key_id" not in d[0]'
ok $? "node show -j: node $id's pair key id is K($id,$id)'s, $k1"
fc node show "$id"
[ $rc = 0 ] && has "$out" "^    key $k1\$"
ok $? "node show: \"key $k1\" under the node"
fc secret
[ $rc = 0 ] && has "$out" "^secret $key2, pair keys of 3 nodes\$" &&
	has "$out" "^warning: the cluster secret still admits any node as any other: .*secret forget cluster"
ok $? "secret: the cluster secret, 3 pair keys, and a warning while both are set"
cp "$tmp/row1" "$tmp/in"
fc -j secret row
: >"$tmp/in"
[ $rc = 0 ] && json 'd["pairs"] == 3' && fc -j node show "$id" &&
	json 'd[0]["key_id"] == "'"$k1"'" and "previous_key_id" not in d[0]'
ok $? "the same row again (stdin) changes nothing: no previous key"
fc secret derive "$tmp/master" node "$((id + 1))" peers "$id"
cp "$tmp/out" "$tmp/row-other"
fc secret row "$tmp/row-other"
[ $rc = 1 ] && has "$err" "the row of node $((id + 1)), but this node is $id" && [ "$(pairs)" = 3 ]
ok $? "the row of node $((id + 1)): refused, nothing set"

mark
fc -j secret forget cluster
[ $rc = 0 ] && json 'd["mode"] == "secret" and "key_id" not in d and "previous_key_id" not in d and d["pairs"] == 3'
ok $? "secret forget cluster: no cluster secret, the pair keys stay"
fc secret
[ "$out" = "pair keys of 3 nodes (no cluster secret)" ]
ok $? "secret: \"$out\", no warning"
readd
wait_up 30 && logged "node $id up (.*authenticated)"
ok $? "node $id (itself) comes up with its pair key alone"

# rotation: generation 2 next to 1, then 1 forgotten
fc secret derive "$tmp/master" node "$id" peers "$id,$p1-$p2" generation 2
cp "$tmp/out" "$tmp/row2"
k2=$(keyid "$(pairkey "$id" "$id" 2)")
fc secret row "$tmp/row2"
[ $rc = 0 ] && fc -j node show "$id" &&
	json 'd[0]["key_id"] == "'"$k2"'" and d[0]["previous_key_id"] == "'"$k1"'"'
ok $? "generation 2: key $k2, $k1 kept as the previous one"
[ "$(state)" = up ]
ok $? "the live connection is not touched"
readd
wait_up 30
ok $? "a new handshake with generation 2: up"
fc -j secret forget node "$id"
[ $rc = 0 ] && json 'd["pairs"] == 3' && fc -j node show "$id" &&
	json 'd[0]["key_id"] == "'"$k2"'" and "previous_key_id" not in d[0]'
ok $? "secret forget node $id: its previous key only"
fc -j secret forget node "$p1" all
[ $rc = 0 ] && json 'd["pairs"] == 2'
ok $? "secret forget node $p1 all: both of its keys (2 nodes left)"
fc secret forget node "$p1"
[ $rc = 1 ] && has "$err" "secret forget node $p1: ENOENT.*node $p1 has no pair key"
ok $? "secret forget node $p1 again: ENOENT, no pair key, exit 1"
fc secret row "$tmp/row1"
[ $rc = 0 ] && [ "$(pairs)" = 3 ] && fc -j node show "$id" &&
	json 'd[0]["key_id"] == "'"$k1"'" and d[0]["previous_key_id"] == "'"$k2"'"'
ok $? "generation 1 again: $k2 previous, $p1 back"
fc -j secret forget
[ $rc = 0 ] && json 'd["pairs"] == 3' && fc -j node show "$id" &&
	json 'd[0]["key_id"] == "'"$k1"'" and "previous_key_id" not in d[0]'
ok $? "secret forget: every previous key, pair keys too"

# ---- no secret: no attempt
mark
fc -j secret forget all
[ $rc = 0 ] && json 'd["mode"] == "none" and "key_id" not in d and d["pairs"] == 0'
ok $? "secret forget all: mode none, no pair key"
readd
sleep 3
st=$(state)
[ "$st" != up ] && logged "not connecting without a key for it"
ok $? "without a secret the node does not connect (state $st; the log says why)"
fc status
has "$out" "^auth *none"
ok $? "status: auth none"

# ---- insecure mode
mark
fc -j secret insecure
[ $rc = 0 ] && json 'd["mode"] == "insecure"'
ok $? "secret insecure: mode insecure"
wait_up 30
ok $? "setting a mode kicks the node: up, unauthenticated"
logged "INSECURE mode" && logged "node $id up (.*INSECURE)"
ok $? "the kernel log says INSECURE"
fc -j status
[ $rc = 0 ] && json 'd["auth"] == "insecure"'
ok $? "status -j: auth insecure"

# ---- no refusal and no failed proof in all of this
[ "$(stat refused)" = "$refused0" ] && [ "$(stat auth_failures)" = "$failures0" ]
ok $? "no connection refused, no failed proof ($(stat refused) refused, $(stat auth_failures) failures)"

[ "$failed" = 0 ]
