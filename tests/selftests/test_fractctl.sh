#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: fractctl's fabric commands against the loaded module.
#
# The node is configured as its own peer at its eth0 address and the
# fabric port (rxe loopback, as the fabric test does): fractctl stats, node
# add / list / show / del, link and ping, each also with -j (checked with
# python3's json module), and the error cases: duplicate add (EEXIST),
# unknown node (ENOENT), bad address (usage error), no CAP_NET_ADMIN.
# Needs root, the module loaded, tools/fractctl built and python3.
# Prints TAP.
cd "$(dirname "$0")" || exit 1

fractctl=$(realpath ../../tools/fractctl 2>/dev/null)
params=/sys/module/fractos/parameters
tmp=$(mktemp -d /tmp/fos-fractctl.XXXXXX) || exit 1
id=
added=

# shellcheck source-path=SCRIPTDIR
. ./tap.sh
diag() { echo "# $*"; }
show() { printf '%s\n' "$out" | sed 's/^/#   /'; }	# $out as diagnostics

cleanup() {
	[ -n "$added" ] && "$fractctl" node del "$id" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# fc ARGS...: run fractctl; $rc, $out, $err
fc() {
	"$fractctl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# json EXPR: $out is valid JSON and EXPR (Python, over d = the document and
# the shell variables exported below) is true.
json() {
	EXPR=$1 python3 -c '
import json, os, sys
d = json.load(sys.stdin)
env = os.environ
sys.exit(0 if eval(env["EXPR"]) else 1)' <"$tmp/out" 2>>"$tmp/err"
}

has() { printf '%s\n' "$1" | grep -q -- "$2"; }

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -d /sys/class/misc/fractos ]; then
	echo "1..0 # SKIP needs root and the module loaded"
	exit 0
fi
if [ ! -x "$fractctl" ]; then
	echo "1..0 # SKIP tools/fractctl is not built"
	exit 0
fi
addr=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
if [ -z "$addr" ] || [ ! -d /sys/class/infiniband/rxe0 ]; then
	echo "1..0 # SKIP no IPv4 address on eth0 or no rxe0"
	exit 0
fi
echo "1..38"

id=$(cat $params/node_id)
epoch=$(cat $params/epoch)
port=$(cat $params/fabric_port)
export id epoch port addr
diag "node $id epoch $epoch, $addr port $port"

# ---- stats, link, empty node list
fc -j stats
[ $rc = 0 ] && json 'd["node"] == int(env["id"]) and d["epoch"] == int(env["epoch"]) and d["listen_port"] == int(env["port"]) and d["nodes"] == 0 and d["links"] >= 1 and all(k in d["stats"] for k in ("tx_msgs", "pings_tx", "refused", "tx_stalls"))'
ok $? "stats -j: node $id, epoch, listen port $port, no nodes"
fc stats
[ $rc = 0 ] && has "$out" "^node *$id\$" && has "$out" "^listen_port *$port\$"
ok $? "stats: text"

fc -j link
[ $rc = 0 ] && json 'any(l["name"] == "rxe0" and l["state"] == "ACTIVE" and l["ports"] >= 1 and l["conns"] == 0 and "index" in l for l in d)'
ok $? "link -j: rxe0, ACTIVE, no connections yet"

fc -j node list
[ $rc = 0 ] && json 'd == []'
ok $? "node list -j: empty to begin with"
fc node list
[ $rc = 0 ] && [ -z "$out" ]
ok $? "node list: prints nothing when there are no nodes"

# ---- add ourselves as our peer
fc -j node add "$id" "$addr:$port"
rc_add=$rc
[ $rc = 0 ] && added=1
[ $rc_add = 0 ] && json 'd["id"] == int(env["id"]) and d["address"] == env["addr"] and d["port"] == int(env["port"]) and d["family"] == "inet" and d["state"] in ("down", "connecting", "waiting", "up") and d["trust_uids"] is False'
ok $? "node add $id $addr:$port (-j: the node as configured)"

fc node add "$id" "$addr"
[ $rc = 1 ] && has "$err" "node add $id: EEXIST" && [ -z "$out" ]
ok $? "node add again: EEXIST, exit 1"

# Poll until it is up (30 s).
i=0
state=
while [ $i -lt 300 ]; do
	fc -j node show "$id"
	state=$(python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])' <"$tmp/out" 2>/dev/null)
	[ "$state" = up ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$state" = up ]
ok $? "node $id comes up (state $state after $((i / 10)).$((i % 10)) s)"

fc node list
[ $rc = 0 ] && has "$out" "^ID  *ADDRESS  *STATE  *EPOCH  *QPN  *CREDITS  *UIDS\$" &&
	has "$out" "^$id  *$addr:$port  *up  *$epoch  *[1-9][0-9]*  *[1-9][0-9]*  *-\$"
ok $? "node list: header and one line, up, our epoch"
fc node
[ $rc = 0 ] && has "$out" "^$id  *$addr:$port  *up "
ok $? "node (no subcommand) lists"

# ---- ping
fc ping "$id" -c 20
[ $rc = 0 ] && has "$out" "^node $id: 20 round trips, rtt min/avg/max = [0-9.]*/[0-9.]*/[0-9.]* us\$"
ok $? "ping $id -c 20: ${out:-no output}"
fc -j ping "$id" count 5
[ $rc = 0 ] && json 'd["node"] == int(env["id"]) and d["count"] == 5 and 0 < d["rtt_min_ns"] <= d["rtt_avg_ns"] <= d["rtt_max_ns"]'
ok $? "ping -j: 5 replies, 0 < min <= avg <= max"
fc ping "$id"
[ $rc = 0 ] && has "$out" "^node $id: 1 round trip,"
ok $? "ping: one round trip by default"

# ---- -j of everything with the node up
fc -j -s node list
[ $rc = 0 ] && json 'len(d) == 1 and d[0]["id"] == int(env["id"]) and d[0]["address"] == env["addr"] and d[0]["port"] == int(env["port"]) and d[0]["state"] == "up" and d[0]["epoch"] == int(env["epoch"]) and d[0]["qpn"] > 0 and d[0]["credits"] > 0 and d[0]["stats"]["connects"] >= 1 and d[0]["stats"]["pings_tx"] >= 26 and d[0]["stats"]["pongs_rx"] >= 26 and d[0]["stats"]["proto_errors"] == 0'
ok $? "node list -j -s: id, address, port, up, epoch, qpn, credits, counters"
fc -j node list
[ $rc = 0 ] && json 'len(d) == 1 and "stats" not in d[0]'
ok $? "node list -j: no counters without -s"
fc node list stats
[ $rc = 0 ] && has "$out" "^    tx_msgs  *[1-9]" && has "$out" " pongs_rx  *[1-9]"
ok $? "node list stats: counters in text"

# fabric_rx_softirq: 1 or 0 as set; -1 (the default) is on except over
# rxe on Linux 6.4 and later, where rxe completes in work items.
rxs=$(cat $params/fabric_rx_softirq)
kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
want=true
{ [ "$rxs" = 0 ] || { [ "$rxs" = -1 ] && [ "$kv" -ge 6004 ]; }; } && want=false
export WANT=$want
fc -j node list
[ $rc = 0 ] && json 'd[0]["rx_softirq"] is (env["WANT"] == "true")' &&
	fc node list stats && has "$out" "^    completions in $([ $want = true ] && echo softirq || echo 'a work item')\$"
ok $? "node list: completions in softirq is $want (fabric_rx_softirq=$rxs, $(uname -r))"
show
fc -j n s "$id"
[ $rc = 0 ] && json 'len(d) == 1 and d[0]["id"] == int(env["id"]) and d[0]["state"] == "up"'
ok $? "n s ID (prefixes): node show -j"
fc -j link
[ $rc = 0 ] && json 'any(l["name"] == "rxe0" and l["conns"] >= 1 for l in d)'
ok $? "link -j: rxe0 carries the connections"
fc link
[ $rc = 0 ] && has "$out" "^NAME  *INDEX  *PORTS  *STATE  *CONNS\$" && has "$out" "^rxe0  *[0-9]*  *[1-9]  *ACTIVE  *[1-9]"
ok $? "link: text"
show
fc -j stats
[ $rc = 0 ] && json 'd["nodes"] == 1 and d["stats"]["pings_tx"] >= 26 and d["stats"]["connects"] >= 1'
ok $? "stats -j: one node, fabric-wide counters"
fc stats
show

# ---- without CAP_NET_ADMIN
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$fractctl" node del "$id" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	err=$(cat "$tmp/err")
	[ $rc = 1 ] && [ "$err" = "fractctl: node del $id: must be root (CAP_NET_ADMIN)" ]
	ok $? "unprivileged node del: must be root, exit 1"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$fractctl" -j stats >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] && json 'd["nodes"] == 1'
	ok $? "unprivileged stats works"
else
	echo "ok $((n + 1)) # SKIP no setpriv"
	echo "ok $((n + 2)) # SKIP no setpriv"
	n=$((n + 2))
fi

# ---- delete
fc node del "$id"
[ $rc = 0 ] && [ -z "$out" ] && added=
ok $? "node del $id"
fc -j node list
[ $rc = 0 ] && json 'd == []'
ok $? "node list -j: empty again"
fc node show "$id"
[ $rc = 1 ] && has "$err" "node show $id: ENOENT" && [ -z "$out" ]
ok $? "node show $id: ENOENT, exit 1"
fc -j stats
[ $rc = 0 ] && json 'd["nodes"] == 0'
ok $? "stats -j: no nodes"

# ---- errors
fc node del "$id"
[ $rc = 1 ] && has "$err" "^fractctl: node del $id: ENOENT (No such file or directory); no such node\$"
ok $? "node del of an unknown id: ENOENT, exit 1"
fc ping "$id"
[ $rc = 1 ] && has "$err" "ping $id: ENOENT"
ok $? "ping of an unknown id: ENOENT, exit 1"
fc node add "$id" 10.0.2
[ $rc = 1 ] && has "$err" 'bad address "10.0.2"' && [ -z "$out" ]
ok $? "node add with a bad address: usage error, exit 1"
fc node add "$id" "$addr:0"
[ $rc = 1 ] && has "$err" "bad address"
ok $? "node add with port 0: usage error, exit 1"
fc -j node list
[ $rc = 0 ] && json 'd == []'
ok $? "the bad adds added nothing"
FRACTCTL_GENL_FAMILY=fractos-absent "$fractctl" node >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "fractos module is not loaded" "$tmp/err"
ok $? "no family: module not loaded, exit 1"

# IPv6: configure an address that is never reached, see it listed, delete it.
fc -j node add $((id + 1)) '[fd00::1]:9000'
[ $rc = 0 ] && json 'd["family"] == "inet6" and d["address"] == "fd00::1" and d["port"] == 9000'
rc6=$?
fc node del $((id + 1))
[ $rc6 = 0 ] && [ $rc = 0 ]
ok $? "node add [fd00::1]:9000 (IPv6) and del"

fc -j node add $((id + 2)) 10.9.9.9 trust-uids
[ $rc = 0 ] && json 'd["trust_uids"] is True'
rct=$?
fc node list
[ $rct = 0 ] && has "$out" "^$((id + 2)) .* 10.9.9.9:[0-9]* .* trusted\$"
rct=$?
fc node add $((id + 3)) 10.9.9.9 trust-everyone
[ $rc = 1 ] && has "$err" 'unexpected argument "trust-everyone"'
rcb=$?
fc node del $((id + 2))
[ $rct = 0 ] && [ $rcb = 0 ] && [ $rc = 0 ]
ok $? "node add ... trust-uids: listed as trusted (-j trust_uids); another word is a usage error"

# fractctl space: a real space with a contact and two stealable Memory
# objects (steal --hold), shown with its pid and fd; gone when it ends.
mkfifo "$tmp/hold.in"
./steal --hold <"$tmp/hold.in" >"$tmp/hold.out" &
hpid=$!
exec 8>"$tmp/hold.in"
i=0
while ! grep -q '^ready' "$tmp/hold.out" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
hfd=$(sed -n 's/^ready //p' "$tmp/hold.out")
fc space
has "$out" "^pid $hpid (steal) fd $hfd: caps 4 contacts 2 stealable 2\$"
rcs=$?
fc -j space
[ $rcs = 0 ] && [ $rc = 0 ] &&
	json "[x for x in d if x['pid'] == $hpid][0]['stealable'] == 2"
ok $? "space: pid $hpid fd $hfd, caps 4, contacts 2, stealable 2 (and -j)"

# fractctl space contacts: each contact with its Request's name as
# CAP_INFO gave it to the holder, its marks, and the revoked one as such;
# local Requests are not armed for node loss.
c1=$(sed -n 's/^contact 1 //p' "$tmp/hold.out")
c2=$(sed -n 's/^contact 2 //p' "$tmp/hold.out")
fc space contacts
has "$out" "^pid $hpid (steal) fd $hfd contact 1: request $c1 armed no stealable 2\$" &&
	has "$out" "^pid $hpid (steal) fd $hfd contact 2: request $c2 armed no stealable 0 revoked\$" &&
	[ "$(printf '%s\n' "$out" | grep -c "^pid $hpid ")" = 2 ]
rcs=$?
fc -j space contacts
export C1=$c1
[ -n "$c1" ] && [ $rcs = 0 ] && [ $rc = 0 ] && json "
[(x['id'], '%d:%d:%d' % (x['request']['node'], x['request']['epoch'],
  x['request']['oid']), x['armed'], x['stealable'], x['revoked'])
 for x in d if x['pid'] == $hpid][0] == (1, env['C1'], False, 2, False)"
ok $? "space contacts: ids 1 and 2 with their Requests ($c1, $c2), marks, the revoked one (and -j)"
exec 8>&-
wait $hpid
fc space
[ $rc = 0 ] && ! has "$out" "^pid $hpid "
ok $? "space: gone with its process"

echo "# Totals: pass:$((n - failed)) fail:$failed skip:0"
[ $failed = 0 ]
