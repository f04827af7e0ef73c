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
# protocol error.  Then the grace period is cut to 2 s and the link taken
# down for 8 s: the session ends, node 1's capability to R is revoked and
# invoking it fails with EKEYREVOKED, as when the node dies.
# timeout: 300
. ./lib.sh
other=$((3 - me))

echo 500 > $PARAMS/fabric_heartbeat_ms
echo 20000 > $PARAMS/fabric_grace_ms
add_peer $other
wait_up $other 30
epoch=$(fosnet get $other epoch)
barrier up >/dev/null
done_file=/tmp/flap-done.$$
rm -f "$done_file"
if [ $me = 1 ]; then
	(
		sleep 3
		for i in 1 2 3; do
			$CTL link 2 down >/dev/null
			sleep 4
			$CTL link 2 up >/dev/null
			sleep 6
		done
		touch "$done_file"
	) &
	flapper=$!
	out=$(./flap_node call "$done_file")
	rc=$?
	wait $flapper
else
	out=$(./flap_node serve)
	rc=$?
fi
echo "$out" | sed 's/^# //; s/^/# /'
ok $rc "node $me: every invocation served once across three link flaps"
line=$(fosnet list $other)
diag "$line"
[ "$(kv disconnects "$line")" -ge 1 ] && [ "$(kv link_grace "$line")" -ge 1 ]
ok $? "node $me: connections ended, the session kept ($(kv disconnects "$line") disconnects, $(kv link_grace "$line") grace periods, $(kv retransmits "$line") retransmitted, $(kv duplicates "$line") duplicates dropped)"
[ "$(kv session_ends "$line")" = 0 ] && [ "$(kv epoch_changes "$line")" = 0 ] &&
	[ "$(kv proto_errors "$line")" = 0 ] && [ "$(kv epoch "$line")" = "$epoch" ]
ok $? "node $me: no session ended, same epoch, no protocol error"
barrier streamed >/dev/null

# The grace period ends with the link still down.
echo 2000 > $PARAMS/fabric_grace_ms
if [ $me = 1 ]; then
	./flap_node expire > /tmp/flap-expire.$$ &
	exp=$!
	i=0
	while ! grep -q ready /tmp/flap-expire.$$ && [ $i -lt 300 ]; do
		sleep 0.2
		i=$((i + 1))
	done
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
echo 0 > $PARAMS/fabric_grace_ms
echo 1000 > $PARAMS/fabric_heartbeat_ms
barrier done >/dev/null
finish
