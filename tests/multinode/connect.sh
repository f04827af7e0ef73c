#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# connect (2 nodes): each node adds the other; both see the other UP with
# the epoch it reports itself; PING works; the connection is one shared RC
# QP, and it stays one QP with the same number while 50 processes ping at
# once (QPs are per peer, not per process); deleting the peer removes it.
. ./lib.sh
other=$((3 - me))

q0=$(qp_count)
add_peer $other
barrier added >/dev/null
wait_up $other 30
eval "$(barrier epochs "$(self_epoch)")"
eval "want=\$N$other"
e=$(fosnet get $other epoch)
[ -n "$want" ] && [ "$e" = "$want" ]
ok $? "node $me: node $other's epoch is $e, the one it reports ($want)"

qpn=$(fosnet get $other qpn)
q1=$(qp_count)
[ "$q1" = $((q0 + 1)) ]
ok $? "node $me: one RC QP for node $other ($q0 -> $q1 RC QPs, qpn $qpn)"
rdma res show qp 2>/dev/null | grep -q "lqpn $qpn "
ok $? "node $me: qp $qpn is in rdma res show qp"

out=$(fosnet ping $other 20)
ok $? "node $me: 20 pings to node $other ($out)"
barrier pinged >/dev/null

out=$(fosnet ping $other 4 50)
[ "$(kv errors "$out")" = 0 ] && [ "$(kv failed_procs "$out")" = 0 ]
ok $? "node $me: 50 processes x 4 pings to node $other ($(kv ok "$out") ok, $(kv timeouts "$out") answered after the 1 s PING timeout)"
[ "$(kv ok "$out")" = 200 ] || diag "$out"
sleep 2	# late PONGs
q2=$(qp_count)
[ "$q2" = "$q1" ] && [ "$(fosnet get $other qpn)" = "$qpn" ] &&
	[ "$(live conns)" = 1 ]
ok $? "node $me: still $q2 RC QP(s), qpn $qpn, $(live conns) connection"
line=$(fosnet list $other)
[ "$(kv state "$line")" = up ] && [ "$(kv proto_errors "$line")" = 0 ] &&
	[ "$(kv connects "$line")" = 1 ] && [ "$(kv disconnects "$line")" = 0 ] &&
	[ "$(kv pongs_rx "$line")" = "$(kv pings_tx "$line")" ]
ok $? "node $me: one connection, never dropped, no protocol errors, $(kv pongs_rx "$line") of $(kv pings_tx "$line") PINGs answered"
diag "$line"

barrier done >/dev/null
out=$(fosnet del $other)
ok $? "node $me: del node $other $out"
live_zero_within conns 10 && [ "$(qp_count)" = "$q0" ]
ok $? "node $me: connection and QP gone ($(live conns) conns, $(qp_count) RC QPs)"
finish
