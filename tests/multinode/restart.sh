#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# restart (2 nodes): node 2 unloads and reloads fractos.ko, which gives it
# a new epoch, and configures node 1 again.  Node 1 reconnects and sees the
# new epoch, with EPOCH_CHANGES counted once; pings work both ways.
. ./lib.sh
other=$((3 - me))

add_peer $other
wait_up $other 30
eval "$(barrier epochs "$(self_epoch)")"
old=$N2
if [ $me = 2 ]; then
	out=$(rmmod fractos 2>&1)
	ok $? "node 2: rmmod fractos $out"
	out=$(insmod "$FRACTOS_KO" node_id=2 2>&1)
	ok $? "node 2: insmod fractos.ko node_id=2 $out"
	set_secret
	ok $? "node 2: the cluster secret set again"
	new=$(self_epoch)
	[ "$new" != "$old" ]
	ok $? "node 2: new epoch $new (was $old)"
	add_peer 1
fi
eval "$(barrier reloaded "$(self_epoch)")"
new=$N2
wait_up $other 30 "$([ $me = 1 ] && echo "$new" || echo "$N1")"
if [ $me = 1 ]; then
	line=$(fosnet list 2)
	diag "$line"
	[ "$(kv epoch_changes "$line")" = 1 ] && [ "$(kv epoch "$line")" = "$new" ]
	ok $? "node 1: node 2's epoch changed once ($old -> $(kv epoch "$line"))"
	dmesg | grep -q "fractos: node 2 restarted"
	ok $? "node 1's log: node 2 restarted"
fi
out=$(fosnet ping $other 10)
ok $? "node $me: 10 pings to node $other ($out)"
barrier done >/dev/null
finish
