#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host test of fractctl against fake sysfs trees (FRACTCTL_ROOT moves
# /sys/... and /dev/fractos under a temporary directory).  No module needed.
# Usage: fractctl-test.sh [PATH-TO-FRACTCTL]
set -u
fractctl=$(realpath "${1:-./fractctl}")
. "$(dirname "$0")/tap.sh"

run() { # ROOT ARGS... -> $out $err $rc
	root=$1; shift
	FRACTCTL_ROOT=$root "$fractctl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

has() { printf '%s\n' "$1" | grep -q -- "$2"; }
lacks() { ! has "$1" "$2"; }
# Exit status RC and TEXT matching RE.  The output is passed as an
# argument, never pasted into a shell string: it may hold quotes.
rc_has() { [ "$rc" = "$1" ] && has "$2" "$3"; }
is_json() { printf '%s' "$1" | python3 -m json.tool >/dev/null; }

# A loaded module: version, parameters and the live counters.
loaded=$tmp/loaded
mkdir -p "$loaded/sys/module/fractos/parameters" "$loaded/sys/class/misc/fractos/live"
echo 0.3.0 >"$loaded/sys/module/fractos/version"
for p in max_caps:1048576 node_id:7 epoch:12345 max_queue:1024 max_pin_bytes:68719476736; do
	echo "${p#*:}" >"$loaded/sys/module/fractos/parameters/${p%%:*}"
done
i=1
for c in spaces objects caps memories pinned_pages capfds requests messages \
	names peers conns exports proxies grants monitors; do
	echo $i >"$loaded/sys/class/misc/fractos/live/$c"
	i=$((i + 1))
done

run "$loaded" status
check "status: device missing under the fake root is an error (exit 1)" [ "$rc" = 1 ]
check "status: says the module is loaded" has "$out" "^module *loaded"
check "status: version from /sys/module/fractos/version" has "$out" "^version *0.3.0"
check "status: node and epoch fall back on the parameters" has "$out" "^node *7"
check "status: every parameter is listed" has "$out" "^  max_queue *1024"
check "status: live counters" has "$out" "^  caps *3"
check "status: requests and messages counters" has "$out" "^  messages *8"
check "status: the device error is reported on stderr" has "$err" "device: ENOENT"

run "$loaded" -j status
check "-j status: exit 1 as above" [ "$rc" = 1 ]
check "-j status: one JSON object" has "$out" '^{"loaded":true,'
check "-j status: version string" has "$out" '"version":"0.3.0"'
check "-j status: params as numbers" has "$out" '"params":{"epoch":12345,"max_caps":1048576,"max_pin_bytes":68719476736,"max_queue":1024,"node_id":7}'
check "-j status: live counters" has "$out" '"live":{"spaces":1,"objects":2,"caps":3,"memories":4,"pinned_pages":5,"capfds":6,"requests":7,"messages":8,"names":9,"peers":10,"conns":11,"exports":12,"proxies":13,"grants":14,"monitors":15}'
if command -v python3 >/dev/null; then
	check "-j status: valid JSON" is_json "$out"
fi

run "$loaded" -json st
check "-json and a command prefix work (iproute2 style)" has "$out" '"loaded":true'

# No module.
run "$tmp/empty" status
check "no module: exit 2" [ "$rc" = 2 ]
check "no module: says so on stdout" has "$out" "^module *not loaded"
check "no module: explains on stderr" has "$err" "fractos module is not loaded"
run "$tmp/empty" -j status
check "no module, -j: {\"loaded\":false}" [ "$out" = '{"loaded":false}' ]

# A broken counter is reported, the rest still printed.
echo garbage >"$loaded/sys/class/misc/fractos/live/caps"
run "$loaded" status
check "bad counter: exit 1 with EINVAL" rc_has 1 "$err" 'live: EINVAL'

# Options.
run "$loaded" -V
check "-V prints the version" rc_has 0 "$out" libcaladan
run "$loaded" -x
check "unknown option: exit 1" rc_has 1 "$err" unknown
run "$loaded" frobnicate
check "unknown command: exit 1" [ "$rc" = 1 ]
run "$loaded" status extra
check "extra argument: exit 1" [ "$rc" = 1 ]
run "$loaded" help
check "help: exit 0, usage" rc_has 0 "$out" Usage

# Fabric commands (generic netlink).  Argument errors are found before any
# netlink traffic, so they need no module; a family name that cannot exist
# (FRACTCTL_GENL_FAMILY) stands for a module that is not loaded.
export FRACTCTL_GENL_FAMILY=fractos-absent
usage_err() { # ARGS...: exit 1, "try ... help" on stderr, nothing on stdout
	run "$tmp/empty" "$@"
	[ "$rc" = 1 ] && [ -z "$out" ] && has "$err" "try \"fractctl .* help\"" &&
		! has "$err" "not loaded"
}
for a in 1.2.3 1.2.3.4.5 10.0.2.15:0 10.0.2.15:65536 10.0.2.15: 10.0.2.15:x \
	host.example '[::1' '[::1]x' '[::1]:0' '[10.0.2.15]:1' 'fe80::1%eth0' ''; do
	check "node add 7 \"$a\": bad address, exit 1" usage_err node add 7 "$a"
done
check "node add: the message names the bad address" has "$err" 'bad address ""'
run "$tmp/empty" node add 7 1.2.3
check "node add: bad address message" has "$err" 'node add: bad address "1.2.3"'
check "node add x ADDR: bad id" usage_err node add x 10.0.2.15
check "node add -1 ADDR: bad id" usage_err node add -1 10.0.2.15
check "node add 4294967296 ADDR: bad id" usage_err node add 4294967296 10.0.2.15
check "node add ID: missing address" usage_err node add 7
check "node add: extra argument" usage_err node add 7 10.0.2.15 extra
check "node del: missing id" usage_err node del
check "node del x: bad id" usage_err node del x
check "node frobnicate: unknown node command" usage_err node frobnicate
check "node list extra: unexpected argument" usage_err node list foo
check "link extra: unexpected argument" usage_err link foo
check "stats extra: unexpected argument" usage_err stats foo
check "ping: missing id" usage_err ping
check "ping 7 -c: missing count" usage_err ping 7 -c
check "ping 7 -c 0: count out of range" usage_err ping 7 -c 0
check "ping 7 -c 10001: count out of range" usage_err ping 7 -c 10001
check "ping 7 8: two ids" usage_err ping 7 8

nofamily() { # ARGS...: exit 1, one line naming the missing module
	run "$tmp/empty" "$@"
	[ "$rc" = 1 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
		has "$err" "fractos module is not loaded"
}
check "node (no family): module not loaded, exit 1" nofamily node
check "node list (no family)" nofamily node list
check "n l, prefixes (no family)" nofamily n l
check "-j -s node show 7 (no family)" nofamily -j -s node show 7
check "node 7 is node show 7 (no family)" nofamily node 7
check "node add 7 10.0.2.15:18525 (no family)" nofamily node add 7 10.0.2.15:18525
check "node add 7 [fd00::1]:9000 (no family)" nofamily node add 7 '[fd00::1]:9000'
check "node add 7 fd00::1 (no family)" nofamily node add 7 fd00::1
check "node del 7 (no family)" nofamily node delete 7
check "link (no family)" nofamily link
check "link list (no family)" nofamily link list
check "stats (no family)" nofamily stats
check "-j stats (no family)" nofamily -j stats
check "ping 7 -c 3 (no family)" nofamily ping 7 -c 3
run "$tmp/empty" stats
check "no family: the message names the family" has "$err" 'no generic netlink family "fractos-absent"'
unset FRACTCTL_GENL_FAMILY

for c in node link stats ping; do
	run "$tmp/empty" $c help
	check "$c help: exit 0, usage on stdout" rc_has 0 "$out" "fractctl.* $c"
done
# blk: argument errors before any netlink; the host has no fractos_nvme.
run "$tmp/empty" blk help
check "blk help: exit 0, usage on stdout" rc_has 0 "$out" "fractctl blk attach DEVICE name NAME"
run "$tmp/empty" blk
check "blk (no module): exit 1, names the module" rc_has 1 "$err" 'fractos_nvme module is not loaded'
run "$tmp/empty" -j -s blk list
check "-j -s blk list (no module): exit 1" rc_has 1 "$err" 'no generic netlink family "fractos_blk"'
run "$tmp/empty" blk attach
check "blk attach without DEVICE: usage error" rc_has 1 "$err" 'a DEVICE is needed'
run "$tmp/empty" blk attach /dev/nvme0n1
check "blk attach without name: usage error" rc_has 1 "$err" 'name NAME is needed'
run "$tmp/empty" blk attach /dev/nvme0n1 name x uid -1
check "blk attach with a bad uid: usage error" rc_has 1 "$err" 'bad uid "-1"'
run "$tmp/empty" blk attach /dev/nvme0n1 name x frobnicate
check "blk attach with an unknown word: usage error" rc_has 1 "$err" 'unexpected "frobnicate"'
run "$tmp/empty" blk attach /dev/nvme0n1 name "$(printf '%0256d' 0)"
check "blk attach with a long name: usage error" rc_has 1 "$err" 'bad name'
run "$tmp/empty" blk detach
check "blk detach without ID: usage error" rc_has 1 "$err" 'ID or name NAME is needed'
run "$tmp/empty" blk detach 0
check "blk detach 0: usage error" rc_has 1 "$err" 'bad device id "0"'
run "$tmp/empty" blk frob
check "blk frob: usage error" rc_has 1 "$err" 'unknown command "frob"'

# config check: the parser of fractos.conf(5), no module needed
cat >"$tmp/good.conf" <<'CONF'
# a node of three
node-id 1
port 18525	# the listen port
secret-file /etc/fractos/secret
node 2 192.0.2.2
node 3 [2001:db8::3]:18526 trust-uids
param max_caps 65536
param fabric_loopback y
CONF
run "$tmp/empty" config check "$tmp/good.conf"
check "config check: a good file passes, silently" [ "$rc" = 0 ] && [ -z "$out$err" ]
cat >"$tmp/bad.conf" <<'CONF'
node-id x
port 0
node 2 192.0.2.2
node 2 192.0.2.3
node 4 host.example
node 5 192.0.2.5 trust
param nosuch 1
param max_caps -1
secret-file relative/path
bogus word

node-id 3
node-id 4
CONF
run "$tmp/empty" config check "$tmp/bad.conf"
check "config check: a bad file fails (exit 1)" [ "$rc" = 1 ]
check "config check: bad node-id, with its line" has "$err" 'bad.conf:1: node-id takes one number'
check "config check: port 0" has "$err" 'bad.conf:2: port takes one number, 1 to 65535'
check "config check: a node twice" has "$err" 'bad.conf:4: node 2 again'
check "config check: a host name is no address" has "$err" 'bad.conf:5: bad address "host.example"'
check "config check: a stray word after a node" has "$err" 'bad.conf:6: unexpected "trust"'
check "config check: an unknown parameter" has "$err" 'bad.conf:7: unknown parameter "nosuch"'
check "config check: a bad value" has "$err" 'bad.conf:8: bad value "-1" for max_caps'
check "config check: a relative secret file" has "$err" 'bad.conf:9: secret-file takes one absolute path'
check "config check: an unknown keyword" has "$err" 'bad.conf:10: unknown keyword "bogus"'
check "config check: a directive twice names the first line" has "$err" 'bad.conf:13: node-id again (first on line 12)'
check "config check: every error is reported, one line each" [ "$(printf '%s\n' "$err" | wc -l)" = 10 ]
run "$tmp/empty" config check "$tmp/nonexistent.conf"
check "config check: a missing file" rc_has 1 "$err" 'nonexistent.conf: No such file'
printf 'node 1 192.0.2.1\0\n' >"$tmp/nul.conf"
run "$tmp/empty" config check "$tmp/nul.conf"
check "config check: a NUL byte" rc_has 1 "$err" 'nul.conf:1: a NUL byte'
run "$tmp/empty" config apply "$tmp/bad.conf"
check "config apply: a bad file changes nothing (fails before netlink)" \
	rc_has 1 "$err" 'bad.conf:1:'
check "config apply: ... and never reached the module" lacks "$err" 'not loaded'
printf 'nodes managed\nnode 2 192.0.2.2\nnodes bogus\n' > "$tmp/managed.conf"
run "$tmp/empty" config check "$tmp/managed.conf"
check "config check: node lines with \"nodes managed\" name both lines" \
	rc_has 1 "$err" 'managed.conf:2: a node line, but "nodes managed" (line 1)'
check "config check: nodes takes static or managed" has "$err" 'managed.conf:3: nodes takes "static"'
printf 'nodes managed\nparam max_caps 4096\n' > "$tmp/managed2.conf"
run "$tmp/empty" config check "$tmp/managed2.conf"
check "config check: \"nodes managed\" alone is fine" [ "$rc" = 0 ]
run "$tmp/empty" config frob
check "config frob: usage error" rc_has 1 "$err" 'unknown command "frob"'

# secret derive: pair keys from a master key, no module needed.  The
# expected keys were computed once with Python's hmac module:
#   hmac.new(M, b"fractos v7 pair" + struct.pack("<III", min(i, j),
#            max(i, j), g), hashlib.sha256).hexdigest()
# with M = b"0123456789abcdef0123456789abcdef" (and, where openssl is
# installed, one is checked against "openssl dgst -mac HMAC" below).
umask 077
printf '0123456789abcdef0123456789abcdef' >"$tmp/master"
k111=606bcfc137d80b5b52b914b9270b02a8fd1ca1a3ec831086aa48609a3672bdb3
k121=1d24af70136e5f65decef4396e3b4ebe3b06e569650821d08d686072fa101ec5
k213=19a6ff8bc00205814e8d0ca3766c6278ca382556e72a081598a57c4c66af1a5b
kbig=507b1e74e314fbe5ac37e199cf11446b705241ea43909e775221a6afac5e417a
run "$tmp/empty" secret derive "$tmp/master" node 1 peers 2,1
printf '%s\n' '# fractos pair keys of node 1, generation 1 (fractctl secret derive): keep it secret' \
	'node 1 generation 1' "peer 1 $k111" "peer 2 $k121" >"$tmp/row1.want"
check "secret derive: node 1's row of generation 1, peers in order (known answer)" \
	[ "$rc" = 0 ] && [ -z "$err" ] && cmp -s "$tmp/out" "$tmp/row1.want"
cp "$tmp/out" "$tmp/row1"
run "$tmp/empty" secret derive "$tmp/master" peers 1 generation 3 node 2
check "secret derive: generation 3, K(2,1) = K(1,2), keywords in any order" \
	rc_has 0 "$out" "^node 2 generation 3\$" && has "$out" "^peer 1 $k213\$"
run "$tmp/empty" secret derive "$tmp/master" node 65537 peers 258 generation 16777217
check "secret derive: ids and generation as little-endian 32-bit words" \
	rc_has 0 "$out" "^peer 258 $kbig\$"
if command -v openssl >/dev/null; then
	printf 'fractos v7 pair\001\000\000\000\002\000\000\000\001\000\000\000' >"$tmp/msg"
	indep=$(openssl dgst -sha256 -mac HMAC -macopt key:0123456789abcdef0123456789abcdef \
		<"$tmp/msg" | sed 's/.*= *//')
	check "secret derive: K(1,2,1) is openssl's HMAC-SHA256 too" [ "$indep" = "$k121" ]
fi
printf '0123456789abcdef0123456789abcdef\n' >"$tmp/master-nl"
run "$tmp/empty" secret derive "$tmp/master-nl" node 1 peers 1-2
check "secret derive: the master's trailing newline is dropped, 1-2 is 1,2" \
	cmp -s "$tmp/out" "$tmp/row1.want"
check "secret derive: the master is never printed" \
	lacks "$out$err" 0123456789abcdef0123456789abcdef
FRACTCTL_ROOT=$tmp/empty "$fractctl" secret derive - node 1 peers 1,2 \
	<"$tmp/master" >"$tmp/out" 2>"$tmp/err"
check "secret derive -: the master from stdin" cmp -s "$tmp/out" "$tmp/row1.want"
run "$tmp/empty" secret derive "$tmp/master" node 0 peers 0-65535
check "secret derive: 65536 peers (the most)" \
	[ "$rc" = 0 ] && [ "$(wc -l <"$tmp/out")" = 65538 ]
derive_err() { # RE ARGS...: exit 1, RE on stderr, nothing on stdout
	re=$1; shift
	run "$tmp/empty" secret derive "$@"
	[ "$rc" = 1 ] && [ -z "$out" ] && has "$err" "$re"
}
check "secret derive: generation 0 refused" \
	derive_err 'bad generation "0"' "$tmp/master" node 1 peers 1 generation 0
check "secret derive: an empty peer list" derive_err 'an empty peer list' "$tmp/master" node 1 peers ''
check "secret derive: more than 65536 peers" \
	derive_err 'more than 65536 peers' "$tmp/master" node 1 peers 0-65535,70000
check "secret derive: a reversed range" derive_err 'bad peer list item "9-5"' "$tmp/master" node 1 peers 9-5
check "secret derive: a bad list item" derive_err 'bad peer list item "x"' "$tmp/master" node 1 peers 1,x
check "secret derive: no node" derive_err 'needs node ID' "$tmp/master" peers 1
check "secret derive: no peers" derive_err 'needs peers LIST' "$tmp/master" node 1
check "secret derive: a keyword twice" derive_err 'unexpected argument "node"' "$tmp/master" node 1 node 2 peers 1
head -c 15 /dev/zero >"$tmp/master15"
check "secret derive: a master of 15 bytes" \
	derive_err 'a master key has 16 to 128 bytes' "$tmp/master15" node 1 peers 1
head -c 129 /dev/zero >"$tmp/master129"
check "secret derive: a master of 129 bytes" \
	derive_err 'a master key has 16 to 128 bytes' "$tmp/master129" node 1 peers 1
check "secret derive: a missing master" derive_err 'No such file' "$tmp/nonexistent" node 1 peers 1
rm -f "$tmp/out"
umask 022
run "$tmp/empty" secret derive "$tmp/master" node 1 peers 1
check "secret derive: a warning when others may read the output file" \
	rc_has 0 "$err" 'others may read (mode 644): umask 077'
umask 077
rm -f "$tmp/out"

# secret row: the row file is parsed before any netlink traffic.
export FRACTCTL_GENL_FAMILY=fractos-absent
run "$tmp/empty" secret row "$tmp/row1"
check "secret row: a good row gets as far as netlink" \
	rc_has 1 "$err" 'secret row: the fractos module is not loaded'
sed -e 's/^node 1 generation 1$/node 1 generation 1 # the node/' -e '1a\
' "$tmp/row1" >"$tmp/row1c"
run "$tmp/empty" secret row "$tmp/row1c"
check "secret row: blank lines and comments" rc_has 1 "$err" 'not loaded'
cat >"$tmp/badrow" <<EOF
# a row with every mistake
node 1 generation 0
node 1
peer 1 $k111
peer 1 $k121
peer 2 ${k121%?}z
peer 3 ${k121%??}
peer $k121 4
peer 5
$k111
nodes 1 generation 1
peer 4294967296 $k111
EOF
run "$tmp/empty" secret row "$tmp/badrow"
check "secret row: a bad row fails before netlink" [ "$rc" = 1 ] && lacks "$err" 'not loaded'
check "secret row: bad generation, with its line" has "$err" 'badrow:2: node takes ID generation G'
check "secret row: a short node line" has "$err" 'badrow:3: node takes ID generation G'
check "secret row: a peer twice names the first line" has "$err" 'badrow:5: peer 1 again (first on line 4)'
check "secret row: a key with a non-hex digit" has "$err" 'badrow:6: peer 2: the key is not 64 hex digits'
check "secret row: a short key" has "$err" 'badrow:7: peer 3: the key is not 64 hex digits'
check "secret row: a key as the peer id" has "$err" 'badrow:8: bad peer id \[a long hex word, not shown\]'
check "secret row: a peer without a key" has "$err" 'badrow:9: peer takes ID KEY'
check "secret row: a bare key" has "$err" 'badrow:10: unknown line \[a long hex word, not shown\]'
check "secret row: an unknown keyword" has "$err" 'badrow:11: unknown line "nodes"'
check "secret row: a peer id out of range" has "$err" 'badrow:12: bad peer id "4294967296"'
check "secret row: no valid node line" has "$err" 'badrow: no "node ID generation G" line'
check "secret row: every error, one line each" [ "$(printf '%s\n' "$err" | wc -l)" = 11 ]
check "secret row: no error quotes a key" lacks "$err" "$(printf %.12s "$k111")"
printf '# nothing\n' >"$tmp/emptyrow"
run "$tmp/empty" secret row "$tmp/emptyrow"
check "secret row: an empty row" rc_has 1 "$err" 'emptyrow: no peer line'
run "$tmp/empty" secret row "$tmp/nonexistent"
check "secret row: a missing file" rc_has 1 "$err" 'nonexistent: No such file'
FRACTCTL_ROOT=$tmp/empty "$fractctl" secret row <"$tmp/badrow" >"$tmp/out" 2>"$tmp/err"
check "secret row: stdin without FILE" has "$(cat "$tmp/err")" 'stdin:5: peer 1 again'
for a in "node" "node x" "cluster all" "node 1 all x" "frob"; do
	check "secret forget $a: usage error" usage_err secret forget $a
done
check "secret forget node 1 all (no family)" nofamily secret forget node 1 all
check "secret forget cluster (no family)" nofamily secret forget cluster
unset FRACTCTL_GENL_FAMILY
run "$tmp/empty" secret help
check "secret help: derive, row and forget's forms" \
	rc_has 0 "$out" 'secret derive MASTER node ID peers LIST' &&
	has "$out" 'secret row \[ FILE \]' && has "$out" 'forget \[ all | cluster | node ID \[ all \] \]'

# config: secret-row
printf 'secret-file /etc/fractos/secret\nsecret-row /etc/fractos/row\n' >"$tmp/row.conf"
run "$tmp/empty" config check "$tmp/row.conf"
check "config check: secret-row beside secret-file (a migration)" [ "$rc" = 0 ] && [ -z "$out$err" ]
printf 'secret-row\nsecret-row row\nsecret-row /a\nsecret-row /b\nsecret insecure\n' >"$tmp/badrow.conf"
run "$tmp/empty" config check "$tmp/badrow.conf"
check "config check: secret-row without a path" rc_has 1 "$err" 'badrow.conf:1: secret-row takes one absolute path'
check "config check: a relative secret-row" has "$err" 'badrow.conf:2: secret-row takes one absolute path'
check "config check: secret-row twice" has "$err" 'badrow.conf:4: secret-row again (first on line 3)'
check "config check: secret-row with secret insecure" \
	has "$err" 'badrow.conf:3: secret-row, but "secret insecure" (line 5) forgets every key'

# space: two processes with spaces (one with two), one without, one unreadable
procs=$tmp/procs
mkdir -p "$procs/proc/100/fd" "$procs/proc/100/fdinfo" "$procs/proc/200/fd" \
	"$procs/proc/200/fdinfo" "$procs/proc/300/fd" "$procs/proc/self"
echo standby >"$procs/proc/100/comm"
ln -s /dev/fractos "$procs/proc/100/fd/3"
printf 'pos:\t0\nflags:\t02\nfractos-node:\t1\nfractos-caps:\t5\nfractos-contacts:\t0\nfractos-stealable:\t0\n' \
	>"$procs/proc/100/fdinfo/3"
ln -s /dev/null "$procs/proc/100/fd/4"
echo primary >"$procs/proc/200/comm"
ln -s /dev/fractos "$procs/proc/200/fd/7"
{
	printf 'fractos-caps:\t12\nfractos-contacts:\t2\nfractos-stealable:\t3\n'
	printf 'fractos-contact:\t1 2:305419896:18446744073709551615 armed 1 stealable 3 revoked 0\n'
	printf 'fractos-contact:\t4 1:7:42 armed 0 stealable 0 revoked 1\n'
	# a newer module's shapes: left out, not misread
	printf 'fractos-contact:\t5 1:7:42 armed 0 stealable 0 revoked 1 extra 9\n'
	printf 'fractos-contact:\t6 1:7 armed 0 stealable 0 revoked 0\n'
	printf 'fractos-contact:\t7 1:7:42 armed 2 stealable 0 revoked 0\n'
	printf 'fractos-contact:\t8 1:7:42 stealable 0 armed 0 revoked 0\n'
} >"$procs/proc/200/fdinfo/7"
ln -s /dev/fractos "$procs/proc/200/fd/9"
printf 'fractos-caps:\t1\n' >"$procs/proc/200/fdinfo/9"
ln -s /dev/fractos "$procs/proc/200/fd/11"	# closed meanwhile: no fdinfo
echo other >"$procs/proc/300/comm"
run "$procs" space
check "space: one line per space, in pid and fd order" rc_has 0 "$out" \
	'^pid 100 (standby) fd 3: caps 5 contacts 0 stealable 0$' &&
	[ "$(printf '%s\n' "$out" | wc -l)" = 3 ] &&
	[ "$(printf '%s\n' "$out" | sed -n 2p)" = "pid 200 (primary) fd 7: caps 12 contacts 2 stealable 3" ]
check "space: a kernel without the contact lines shows 0" \
	has "$out" '^pid 200 (primary) fd 9: caps 1 contacts 0 stealable 0$'
check "space: other files and fds without fdinfo are not spaces" lacks "$out" 'fd 4\|fd 11'
run "$procs" -j space list
check "-j space: an array of objects" rc_has 0 "$out" \
	'^\[{"pid":100,"comm":"standby","fd":3,"caps":5,"contacts":0,"stealable":0},{"pid":200,"comm":"primary","fd":7,"caps":12,"contacts":2,"stealable":3},'
if command -v python3 >/dev/null; then
	check "-j space: valid JSON" is_json "$out"
fi
run "$procs" space contacts
contacts_listed() {
	rc_has 0 "$out" '^pid 200 (primary) fd 7 contact 1: request 2:305419896:18446744073709551615 armed yes stealable 3$' &&
		has "$out" '^pid 200 (primary) fd 7 contact 4: request 1:7:42 armed no stealable 0 revoked$'
}
check "space contacts: one line per contact, with its Request and marks" contacts_listed
check "space contacts: lines of another shape are left out" \
	[ "$(printf '%s\n' "$out" | wc -l)" = 2 ]
run "$procs" -j space contacts
check "-j space contacts: objects with the request's node, epoch and oid" rc_has 0 "$out" \
	'^\[{"pid":200,"comm":"primary","fd":7,"id":1,"request":{"node":2,"epoch":305419896,"oid":18446744073709551615},"armed":true,"stealable":3,"revoked":false},{"pid":200,"comm":"primary","fd":7,"id":4,'
if command -v python3 >/dev/null; then
	check "-j space contacts: valid JSON" is_json "$out"
fi
run "$procs" space contacts extra
check "space contacts: an extra argument is a usage error" rc_has 1 "$err" 'unexpected argument "extra"'
run "$tmp/empty" space
check "space: no /proc, no spaces" rc_has 0 "$out" '^$'
run "$procs" space list extra
check "space list: an extra argument is a usage error" rc_has 1 "$err" 'unexpected argument "extra"'
run "$procs" space extra
check "space: an unknown subcommand is a usage error" rc_has 1 "$err" 'unknown command "extra"'

run "$tmp/empty" help
check "help lists space" rc_has 0 "$out" 'space \[ list | contacts \]'
check "help lists blk" rc_has 0 "$out" 'blk attach DEVICE'
check "help lists node add" rc_has 0 "$out" 'node add ID ADDR'
check "help lists ping" has "$out" 'ping ID'
run "$loaded" st
check "\"st\" is still status, not stats" has "$out" "^module *loaded"

tap_end
