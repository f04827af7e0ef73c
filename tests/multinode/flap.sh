#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# flap (2 nodes): sessions outlive connections (fabric_grace_ms; the
# "Sessions" DOC in kernel/fabric/session.c).  Both nodes keep a session
# for 20 s after a link goes down, with a 500 ms heartbeat.  Node 1 takes
# node 2's link down three times for 4 s (vm/ctl), each long enough for
# both ends to end the connection, while flap_node streams numbered
# invocations both ways (node 1 invokes node 2's R with 0, 1, 2, ...; node
# 2 answers each through node 1's K).  Every invocation must succeed and
# every number must be served exactly once on each side, over connections
# that came and went, with no session ended, the same epoch, and no
# protocol error.  Meanwhile node 1 copies 256 KiB of node 2's Memory
# again and again, its RDMA READ held back 200 ms (debugfs
# fault_read_delay_ms) so that the flaps cut copies between their grant
# and their READ: every copy must succeed with the right bytes, the cut
# windows asked for again on the next connection (totals/pull_retries).  Then the grace period is cut to 2 s and the link taken
# down for 8 s: the session ends, node 1's capability to R is revoked and
# invoking it fails with EKEYREVOKED, as when the node dies.  Last, node
# 2 restarts (a new epoch) while node 1 has calls in flight to it, from
# four threads: node 1 takes the link down for 12 s, node 2 kills the
# process that serves the calls and reloads fractos.ko meanwhile.  Each
# pending call must fail once, with EKEYREVOKED, when the link is back;
# every call that succeeded must have been served once, and nothing
# served but what was called.
# timeout: 420
. ./lib.sh
other=$((3 - me))

grace_up
stream_cut "three link flaps" "$CTL link 2 down" "$CTL link 2 up" 4 3
barrier streamed >/dev/null

# The grace period ends with the link still down.
echo 2000 > $PARAMS/fabric_grace_ms
if [ $me = 1 ]; then
	./flap_node expire > /tmp/flap-expire.$$ &
	exp=$!
	wait_ready /tmp/flap-expire.$$
	$CTL link 2 down >/dev/null
	sleep 8
	$CTL link 2 up >/dev/null
	wait $exp
	rc=$?
	sed 's/^# //; s/^/# /' /tmp/flap-expire.$$
	ok $rc "node $me: the grace period over, node 2's Request is revoked (EKEYREVOKED)"
	rm -f /tmp/flap-expire.$$
else
	./flap_node hold 40
	ok $? "node $me: R held while the session ended"
fi
wait_up $other 45 "$epoch"
line=$(fosnet list $other)
[ "$(kv session_ends "$line")" -ge 1 ] && [ "$(kv proto_errors "$line")" = 0 ]
ok $? "node $me: the session ended ($(kv session_ends "$line")), the node is up again with the same epoch"

# Node 2 restarts with calls in flight.
echo 20000 > $PARAMS/fabric_grace_ms
served=/tmp/flap-served.$$
if [ $me = 2 ]; then
	./flap_node record "$served" &
	rec=$!
	grace0=$(kv link_grace "$(fosnet list 1)")
	barrier recording >/dev/null
	i=0
	while [ "$(kv link_grace "$(fosnet list 1)")" = "$grace0" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $rec
	wait $rec
	rmmod fractos && insmod "$FRACTOS_KO" node_id=2 && set_secret &&
		echo 500 > $PARAMS/fabric_heartbeat_ms && add_peer 1
	ok $? "node 2: restarted while the link was down ($(wc -l < "$served") numbers served), new epoch $(self_epoch)"
	result=-
else
	barrier recording >/dev/null
	./flap_node stream 4 > /tmp/flap-stream.$$ &
	st=$!
	wait_ready /tmp/flap-stream.$$
	sleep 1
	$CTL link 2 down >/dev/null
	sleep 12
	$CTL link 2 up >/dev/null
	wait $st
	rc=$?
	grep '^#' /tmp/flap-stream.$$
	result=$(sed -n 's/^result=//p' /tmp/flap-stream.$$)
	ok $rc "node 1: each of the four pending calls failed once, with EKEYREVOKED"
	rm -f /tmp/flap-stream.$$
fi
wait_up $other 45
eval "$(barrier restarted "$result")"
if [ $me = 2 ]; then
	# N1 is OK:SUM:F1,...: what node 1 saw succeed, and what failed.
	dup=$(sort -n "$served" | uniq -d | wc -l)
	check=$(sort -n "$served" | awk -v r="$N1" '
		BEGIN { split(r, a, ":"); nf = split(a[3], f, ",");
			for (i = 1; i <= nf; i++) failed[f[i]] = 1 }
		{ n++; s += $1; if ($1 in failed) { k++; ks += $1 } }
		END { printf "%s", (n == a[1] + k && s == a[2] + ks) ? "same" : "differ";
		      printf " served=%d failed_but_served=%d\n", n, k }')
	diag "node 1 says $N1; node 2's old epoch: $check, $dup served twice"
	[ "$dup" = 0 ] && [ "${check%% *}" = same ]
	ok $? "node 2: each call node 1 saw succeed was served once, nothing else but the calls that failed"
	rm -f "$served"
fi
echo 0 > $PARAMS/fabric_grace_ms
echo 1000 > $PARAMS/fabric_heartbeat_ms
barrier done >/dev/null
finish
