#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# auth (2 nodes): admission with cluster secrets.  Node 1 initiates; both
# start with the run's secret S (vm/run).
# A. Same secret: up, and both logs say "authenticated".
# B. Rolling rotation: node 2 sets X (S kept as its previous secret); the
#    live connection is not touched, and a new handshake from node 1 (which
#    offers S) is admitted.  C. Node 1 sets X too: admitted with X.
#    D. Both forget S: still admitted.
# E. Node 2 holds only Y: node 1 is refused (node 2: refused_auth rises,
#    log "no shared secret"; node 1 never comes up).
# F. Node 2 insecure, node 1 with a secret: still refused.  G. Both
#    insecure: up, and the logs say INSECURE.
# H. Node 2 has node 1 at another address: refused (refused_address).
# I. Node 2 has the right address again: up.  No failed proof and no
#    epoch change on node 2 in all of this: a refusal changes nothing.
# J. Pair keys: each node derives its own row from a master M (fractctl
#    secret derive, as an admin would on another machine) and installs
#    it; node list shows the pair key, the same id on both ends; a new
#    handshake is admitted.  K. Both forget the cluster secret: admitted
#    with the pair key alone.  L. Node 2's row comes from another master:
#    refused.  M. Back to the run's secret S only: up.
. ./lib.sh
other=$((3 - me))
FC=../../tools/fractctl
x=/tmp/fos-auth-x
y=/tmp/fos-auth-y

key() { $FC -j secret | python3 -c 'import json,sys; print(json.load(sys.stdin).get("key_id", ""))'; }
prev() { $FC -j secret | python3 -c 'import json,sys; print(json.load(sys.stdin).get("previous_key_id", ""))'; }

# wait_stat NAME OLD SECS: fabric-wide counter NAME rises above OLD
wait_stat() {
	local i=0
	while [ "$(fosnet stat "$1")" -le "$2" ] && [ $i -lt $(($3 * 10)) ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ "$(fosnet stat "$1")" -gt "$2" ]
}

# readd: node 1 deletes node 2 and adds it again (a new handshake)
readd() { fosnet del 2 >/dev/null; fosnet add 2 "$(addr_of 2)" >/dev/null; }

# handshake TAG: node 1 re-adds node 2; both check that it comes up
# again, and neither goes on before node 1 has seen it up
handshake() {
	local c0
	c0=$(fosnet stat connects)
	barrier "$1-go" >/dev/null
	[ $me = 1 ] && readd
	wait_stat connects "$c0" 30
	ok $? "$1: node $me: a new connection comes up ($c0 -> $(fosnet stat connects) connects)"
	if [ $me = 1 ]; then
		out=$(fosnet wait 2 up 10)
		ok $? "$1: node 1 sees node 2 UP ($(kv state "$out"))"
	fi
	barrier "$1-done" >/dev/null
}

# refused TAG NAME: node 1 re-adds node 2 and is refused for NAME
refused() {
	local r0
	r0=$(fosnet stat "$2")
	barrier "$1-go" >/dev/null
	if [ $me = 1 ]; then
		readd
		out=$(fosnet wait 2 up 8)
		[ $? != 0 ]
		ok $? "$1: node 2 never comes UP ($(kv state "$out"))"
	else
		wait_stat "$2" "$r0" 15
		ok $? "$1: node 2 refuses node 1 ($2 $r0 -> $(fosnet stat "$2"))"
	fi
	barrier "$1-done" >/dev/null
}

epochs0=$(fosnet stat epoch_changes)
fail0=$(fosnet stat auth_failures)
s_key=$(key)

# A
mark=$(date +%s%N)
echo "fos-auth-$mark" >/dev/kmsg
add_peer $other
wait_up $other 30
dmesg | grep -q "fractos: node $other up (.*authenticated)"
ok $? "A: node $me's log: node $other up, authenticated"

# B: X is node 1's random value, shared through the barrier
eval "$(barrier B-secret "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')")"
printf '%s' "$N1" >$x
qpn0=$(fosnet get $other qpn)
if [ $me = 2 ]; then
	$FC secret set $x
	[ "$(key)" != "$s_key" ] && [ "$(prev)" = "$s_key" ]
	ok $? "B: node 2 sets X ($(key)), S ($s_key) kept as its previous secret"
fi
sleep 1
[ "$(fosnet get $other state)" = up ] && [ "$(fosnet get $other qpn)" = "$qpn0" ]
ok $? "B: node $me: the live connection is not touched (qpn $qpn0)"
handshake B

# C, D
[ $me = 1 ] && $FC secret set $x
handshake C
$FC secret forget
[ -z "$(prev)" ]
ok $? "D: node $me forgets S"
handshake D

# E: node 2 holds only Y
if [ $me = 2 ]; then
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >$y
	$FC secret set $y && $FC secret forget
fi
refused E refused_auth
if [ $me = 2 ]; then
	dmesg | grep -q "fractos: refused connection from node 1 .*: no shared secret"
	ok $? "E: node 2's log: no shared secret"
else
	dmesg | grep -q "fractos: node 2 refused the connection"
	ok $? "E: node 1's log: node 2 refused the connection"
fi

# F, G
[ $me = 2 ] && $FC secret insecure
refused F refused_auth
[ $me = 1 ] && $FC secret insecure
handshake G
dmesg | grep -q "fractos: node $other up (.*INSECURE)"
ok $? "G: node $me's log: node $other up, INSECURE"

# H: back to S; node 2 has node 1 at another address
set_secret && $FC secret forget
ok $? "H: node $me: the run's secret S again"
if [ $me = 2 ]; then
	fosnet del 1 >/dev/null
	fosnet add 1 10.0.2.99 >/dev/null
fi
refused H refused_address
[ $me = 2 ] && { dmesg | grep -q "refused connection from node 1 .*: not the node's address"
	ok $? "H: node 2's log: not the node's address"; }

# I
if [ $me = 2 ]; then
	fosnet del 1 >/dev/null
	add_peer 1
fi
barrier I >/dev/null
wait_up $other 30
if [ $me = 2 ]; then
	[ "$(fosnet stat epoch_changes)" = "$epochs0" ] &&
		[ "$(fosnet stat auth_failures)" = "$fail0" ]
	ok $? "I: node 2: no epoch change and no failed proof from the refusals"
fi
# J: pair keys, M shared through the barrier
eval "$(barrier J-master "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')")"
printf '%s' "$N1" >$x
$FC secret derive $x node $me peers 1-2 >/tmp/fos-row &&
	$FC secret row /tmp/fos-row >/dev/null
ok $? "J: node $me installs its row of pair keys"
pk=$($FC -j node list | python3 -c 'import json,sys
print(next((str(n.get("key_id", "")) for n in json.load(sys.stdin) if n.get("id") == int(sys.argv[1])), ""))' $other)
[ -n "$pk" ]
ok $? "J: node $me: node list shows node $other's pair key ($pk)"
eval "$(barrier J-key "$pk")"
[ "$N1" = "$N2" ]
ok $? "J: both ends name the same pair key ($N1, $N2)"
handshake J
# K
$FC secret forget cluster
[ -z "$(key)" ]
ok $? "K: node $me forgets the cluster secret"
handshake K
# L: node 2's row of another master
if [ $me = 2 ]; then
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >$y
	$FC secret derive $y node 2 peers 1-2 >/tmp/fos-row &&
		$FC secret row /tmp/fos-row >/dev/null && $FC secret forget
fi
refused L refused_auth
# M
$FC secret forget all && set_secret
ok $? "M: node $me: the run's secret S only"
handshake M
rm -f $x $y /tmp/fos-row
finish
