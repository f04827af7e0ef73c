#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# flap3 (3 nodes): forwarded invocations survive a flapping link.  Node 2
# derives D from node 3's Request R3 and publishes it; node 1 invokes D
# with 0, 1, 2, ... (flap_node via), so that node 2's kernel forwards each
# invocation to node 3 ("Forwarding" in kernel/remote/remote.c) and
# answers node 1 with node 3's answer.  Node 1 also copies, again and
# again, zeroes into node 3's M3, node 2's M into M3 (node 3 pulls from
# node 2, its RDMA READs held back 200 ms) and M3 back, checking the
# bytes.  Meanwhile node 1 takes node 3's link down twice for 4 s
# (vm/ctl): node 2's connection to node 3 ends with forwards in flight,
# node 1's to node 2 does not.  With a 20 s grace period on every node,
# every invocation and every copy must succeed, with the right bytes,
# node 3 must have asked again for the windows the cuts interrupted, and
# must see every number exactly once; nodes 2 and 3 must have kept their session
# through the connections that ended, with the same epochs and no
# protocol error, and node 2 must have sent again the forwards that a cut
# interrupted.
# timeout: 300
. ./lib.sh
[ "$nodes" = 3 ] || { echo "Bail out! flap3 needs 3 nodes"; exit 1; }
others=""
for i in 1 2 3; do [ $i = "$me" ] || others="$others $i"; done

echo 500 > $PARAMS/fabric_heartbeat_ms
echo 20000 > $PARAMS/fabric_grace_ms
for i in $others; do add_peer "$i"; done
for i in $others; do wait_up "$i" 40; done
eval "$(barrier up "$(self_epoch)")"

done_file=/tmp/flap3-done.$$
case $me in
3)
	delay=/sys/kernel/debug/fractos/fault_read_delay_ms
	retries=$(cat /sys/class/misc/fractos/totals/pull_retries)
	echo 200 > $delay || ok 1 "node 3: debugfs fault_read_delay_ms"
	out=$(./flap_node serve3)
	rc=$?
	echo 0 > $delay
	echo "$out" | sed 's/^# //; s/^/# /'
	ok $rc "node 3: every number node 1 sent through node 2 came once"
	retries=$(($(cat /sys/class/misc/fractos/totals/pull_retries) - retries))
	[ $retries -ge 1 ]
	ok $? "node 3: the copies' windows cut by the flaps were asked for again ($retries)"
	;;
2)
	./flap_node derive 240 > /tmp/flap3-derive.$$ &
	held=$!
	wait_ready /tmp/flap3-derive.$$
	grep -q ready /tmp/flap3-derive.$$
	ok $? "node 2: D derived from node 3's R3, published as \"flap.d\""
	barrier streamed >/dev/null
	kill $held
	wait $held
	rm -f /tmp/flap3-derive.$$
	;;
1)
	rm -f "$done_file"
	./flap_node via "$done_file" > /tmp/flap3-via.$$ &
	via=$!
	wait_ready /tmp/flap3-via.$$
	sleep 2
	for i in 1 2; do
		$CTL link 3 down >/dev/null
		sleep 4
		$CTL link 3 up >/dev/null
		sleep 8
	done
	touch "$done_file"
	wait $via
	rc=$?
	sed 's/^# //; s/^/# /' /tmp/flap3-via.$$
	ok $rc "node 1: every invocation of node 2's D, and every copy through node 3's M3, succeeded across node 3's link flaps, with the right bytes"
	rm -f /tmp/flap3-via.$$ "$done_file"
	;;
esac
[ $me = 2 ] || barrier streamed >/dev/null

# Nodes 2 and 3 kept their session through the cuts; node 1's link to
# node 2 never went down.
if [ $me != 1 ]; then
	peer=$((5 - me))
	eval "want=\$N$peer"
	session_kept $peer "$want"
fi
# Node 1's calls are one at a time, with a pause of 20 ms: each cut finds a
# forward in flight or sent into it before the link is found down, and
# either it (node 2's) or its answer (node 3's) goes again.
if [ $me = 1 ]; then
	diag "$(fosnet list 2)"
	eval "$(barrier counted -)"
else
	eval "$(barrier counted "$(kv retransmits "$line")")"
fi
if [ $me = 2 ]; then
	[ $((N2 + N3)) -ge 2 ] && [ "$(kv duplicates "$line")" = 0 ]
	ok $? "node 2: what each cut interrupted was sent again (forwards $N2, answers $N3), no duplicate from node 3"
fi
echo 0 > $PARAMS/fabric_grace_ms
echo 1000 > $PARAMS/fabric_heartbeat_ms
barrier done >/dev/null
finish
