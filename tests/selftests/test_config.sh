#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: fractctl config apply / show against the loaded module
# (fractos.conf(5)).
#
# A file of two peers (that never answer: addresses on no network), the
# run's secret and two parameters is applied: the nodes, the parameters and
# the secret are then the file's, and config show prints them.  show's
# output applied again changes nothing (no node is deleted and re-added, so
# their connections stay), nor does the same file twice.  A file without one
# of the nodes deletes it; a changed address re-adds it.  A bad file (a bad
# line, a node-id other than the module's, an unreadable secret file, a
# read-only parameter) fails with its line number and changes nothing.
# The file's secret-row (this node's pair keys, derived here) sets them:
# apply says so once, the nodes show their key ids, show counts them; a
# row of another node, a bad row or one beside "secret insecure" is
# refused with its line.
# Needs root, the module loaded, tools/fractctl built and python3.
# Prints TAP.
cd "$(dirname "$0")" || exit 1

fractctl=$(realpath ../../tools/fractctl 2>/dev/null)
params=/sys/module/fractos/parameters
tmp=$(mktemp -d /tmp/fos-config.XXXXXX) || exit 1

# shellcheck source-path=SCRIPTDIR
. ./tap.sh

# fc ARGS...: run fractctl; $rc, $out, $err
fc() {
	"$fractctl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}
has() { printf '%s\n' "$1" | grep -q -- "$2"; }

saved_caps=$(cat $params/max_caps)
saved_hb=$(cat $params/fabric_heartbeat_ms)
cleanup() {
	for p in "$me" 71 72; do
		"$fractctl" secret forget node "$p" all >/dev/null 2>&1
	done
	"$fractctl" node del 71 >/dev/null 2>&1
	"$fractctl" node del 72 >/dev/null 2>&1
	echo "$saved_caps" > $params/max_caps
	echo "$saved_hb" > $params/fabric_heartbeat_ms
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "TAP version 13"
if [ ! -x "$fractctl" ] || [ "$(id -u)" != 0 ] || ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP needs root, tools/fractctl and python3"
	exit 0
fi
me=$(cat $params/node_id)
port=$(cat $params/fabric_port)
secret=${FRACTOS_SECRET:-}
[ -r "$secret" ] || { echo "1..0 # SKIP no run secret (FRACTOS_SECRET)"; exit 0; }
count_nodes() { "$fractctl" -j node list | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }
nodes_before=$(count_nodes)
pairs_before=$("$fractctl" -j secret | python3 -c 'import json, sys; print(json.load(sys.stdin)["pairs"])')
# this node's row of a master made here (the keys stay in $tmp)
umask 077
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$tmp/master"
"$fractctl" secret derive "$tmp/master" node "$me" peers "$me,71-72" > "$tmp/row" &&
	"$fractctl" secret derive "$tmp/master" node "$((me + 1))" peers "$me" > "$tmp/row-other" ||
	{ echo "1..0 # SKIP fractctl secret derive failed"; exit 0; }
# keyid J: the key id of K(me,J) in $tmp/row, computed here
keyid() {
	python3 -c '
import hashlib, hmac, sys
key = [l.split()[2] for l in open(sys.argv[1]) if l.startswith("peer %s " % sys.argv[2])][0]
d = hmac.new(bytes.fromhex(key), b"fractos key id", hashlib.sha256).digest()
print("%08x" % (int.from_bytes(d[:4], "little") or 1))' "$tmp/row" "$1"
}

cat > "$tmp/a.conf" <<EOF
# written by test_config.sh
node-id $me
port $port
secret-file $secret
secret-row $tmp/row
node 71 192.0.2.71              # TEST-NET-1: never answers
node 72 [2001:db8::72]:18600 trust-uids
param max_caps 4242
param fabric_heartbeat_ms 777
EOF

fc config apply "$tmp/a.conf"
ok $rc "config apply: a good file (exit $rc)"
has "$out" "^add node 71 192.0.2.71:$port\$"; ok $? "apply prints each node it adds, the default port filled in"
has "$out" "^param max_caps 4242\$"; ok $? "apply prints each parameter it sets"
has "$out" "^secret-row node $me generation 1 (3 pair keys)\$"; ok $? "apply prints the row it sets"
fc -j node show 71
printf '%s' "$out" | K="$(keyid 71)" python3 -c '
import json, os, sys
sys.exit(0 if json.load(sys.stdin)[0]["key_id"] == os.environ["K"] else 1)'
ok $? "node 71: the key id of K($me,71) of the row"
[ "$(cat $params/max_caps)" = 4242 ] && [ "$(cat $params/fabric_heartbeat_ms)" = 777 ]
ok $? "the parameters are the file's"
fc -j node show 72
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = d[0] if isinstance(d, list) else d
sys.exit(0 if n["address"] == "2001:db8::72" and n["port"] == 18600 and n["trust_uids"] else 1)'
ok $? "node 72: the IPv6 address, port and trust-uids of the file"

fc config show
ok $rc "config show (exit $rc)"
has "$out" "^node-id $me\$" && has "$out" "^port $port\$"
ok $? "show: node-id and port of the module"
has "$out" "^node 71 192.0.2.71:$port\$" && has "$out" "^node 72 \[2001:db8::72\]:18600 trust-uids\$"
ok $? "show: both nodes"
has "$out" "^param max_caps 4242\$"; ok $? "show: the parameters"
has "$out" "^# a secret is set (key id "; ok $? "show: the secret as a comment (it cannot be read back)"
has "$out" "^# pair keys of $((pairs_before + 3)) nodes are set: add \"secret-row PATH\""
ok $? "show: the pair keys as a comment"
cp "$tmp/out" "$tmp/shown.conf"
fc config check "$tmp/shown.conf"
ok $rc "show's output is a valid file"
fc config apply "$tmp/shown.conf"
[ "$rc" = 0 ] && [ -z "$out" ]; ok $? "show > FILE; apply FILE changes nothing (rc $rc, printed: $out)"
fc config apply "$tmp/a.conf"
[ "$rc" = 0 ] && [ -z "$out" ]; ok $? "applying the same file twice changes nothing the second time"

fc -j config show
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ids = sorted(x["id"] for x in d["nodes"])
sys.exit(0 if 71 in ids and 72 in ids and d["params"]["max_caps"] == "4242"
         and d["secret"] == "secret" and d["pairs"] == int(sys.argv[1]) else 1)' "$((pairs_before + 3))"
ok $? "config show -j: nodes, parameters, secret mode, pair keys"

# drop node 72, move node 71
sed -e '/^node 72/d' -e 's/192.0.2.71 /192.0.2.171 /' "$tmp/a.conf" > "$tmp/b.conf"
fc config apply "$tmp/b.conf"
ok $rc "apply of a file without node 72 and node 71 moved (exit $rc)"
has "$out" "^del node 72 " && has "$out" "^del node 71 192.0.2.71:" && has "$out" "^add node 71 192.0.2.171:"
ok $? "apply: node 72 deleted, node 71 deleted and re-added"
fc node show 72
[ "$rc" != 0 ]; ok $? "node 72 is gone"

# bad files change nothing
# refused NAME RE LINE...: apply of a file of these lines fails, RE on stderr
refused() {
	name=$1 re=$2
	shift 2
	printf '%s\n' "$@" > "$tmp/bad.conf"
	fc config apply "$tmp/bad.conf"
	[ "$rc" = 1 ] && has "$err" "$re"
	ok $? "$name"
}
before=$("$fractctl" config show)
refused "a bad line: exit 1 with its line number" 'bad.conf:4: unknown keyword "frob"' \
	"node-id $me" "node 73 192.0.2.73" "param max_caps 5" frob
refused "a node-id other than the module's: refused, the option named" \
	"bad.conf:1: node-id $((me + 1)), but the module was loaded with node_id=$me" \
	"node-id $((me + 1))" "node 73 192.0.2.73"
refused "an unreadable secret file: refused with its line" "bad.conf:1: $tmp/missing: No such file" \
	"secret-file $tmp/missing" "node 73 192.0.2.73"
head -c 8 /dev/urandom > "$tmp/short"
refused "a secret of 8 bytes: refused" "bad.conf:2: .*a secret has 16 to 128 bytes" \
	"node 73 192.0.2.73" "secret-file $tmp/short"
refused "an out-of-range parameter: refused" 'bad.conf:2: bad value "0" for max_caps' \
	"node 73 192.0.2.73" "param max_caps 0"
refused "a row of another node: refused with its line" \
	"bad.conf:2: $tmp/row-other: the row of node $((me + 1)), but this node is $me" \
	"node 73 192.0.2.73" "secret-row $tmp/row-other"
sed -e 's/^node .*/node x generation 1/' "$tmp/row" > "$tmp/badrow"
refused "a bad row: refused with the lines of both files" \
	"bad.conf:2: $tmp/badrow:2: node takes ID generation G" \
	"node 73 192.0.2.73" "secret-row $tmp/badrow"
refused "secret-row with secret insecure: refused" \
	'bad.conf:1: secret-row, but "secret insecure" (line 2)' "secret-row $tmp/row" "secret insecure"
[ "$("$fractctl" config show)" = "$before" ]
ok $? "after the bad files the running configuration is unchanged"

# as a user: no change, a clear error
if command -v setpriv >/dev/null; then
	chmod 755 "$tmp"; chmod 644 "$tmp/a.conf"
	setpriv --reuid 65534 --regid 65534 --clear-groups "$fractctl" config apply "$tmp/a.conf" \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	# a.conf's nodes differ from the running ones (71 moved): a change
	[ "$rc" = 1 ] && grep -q 'Operation not permitted\|CAP_NET_ADMIN\|Permission denied' "$tmp/err"
	ok $? "apply as an unprivileged user: refused (exit $rc)"
fi

"$fractctl" node del 71 >/dev/null 2>&1
nodes_after=$(count_nodes)
[ "$nodes_after" = "$nodes_before" ]; ok $? "the node list is back as it was ($nodes_after nodes)"

echo "1..$n"
[ "$failed" = 0 ]
