#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mesh (3 or more nodes): every node adds every other; all come UP with the
# epochs they report; each pings each; every node has one RC QP per peer;
# after deleting the peers nothing is left.
. ./lib.sh
others=""
for i in $(seq 1 "$nodes"); do [ "$i" = "$me" ] || others="$others $i"; done

q0=$(qp_count)
for i in $others; do add_peer "$i"; done
barrier added >/dev/null
for i in $others; do wait_up "$i" 40; done
eval "$(barrier epochs "$(self_epoch)")"
for i in $others; do
	eval "want=\$N$i"
	e=$(fosnet get "$i" epoch)
	[ "$e" = "$want" ]
	ok $? "node $me: node $i's epoch is $e ($want)"
done
q1=$(qp_count)
[ "$q1" = $((q0 + nodes - 1)) ]
ok $? "node $me: one RC QP per peer ($q0 -> $q1)"
for i in $others; do
	out=$(fosnet ping "$i" 20)
	ok $? "node $me: 20 pings to node $i ($out)"
done
barrier pinged >/dev/null
for i in $others; do
	line=$(fosnet list "$i")
	[ "$(kv connects "$line")" = 1 ] && [ "$(kv proto_errors "$line")" = 0 ]
	ok $? "node $me: node $i: one connection, no protocol errors"
done
barrier done >/dev/null
for i in $others; do
	out=$(fosnet del "$i")
	ok $? "node $me: del node $i $out"
done
live_zero_within conns 10
bad=""
for f in "$LIVE"/*; do
	v=$(cat "$f")
	[ "$v" = 0 ] || bad="$bad $(basename "$f")=$v"
done
[ -z "$bad" ]
ok $? "node $me: every live-object counter is zero$bad"
finish
