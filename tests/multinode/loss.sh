#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# loss (2 nodes): 10% packet loss on both guests' egress (tc netem, vm/ctl).
# RC retransmission (rxe) hides it: every PING sent is received once and
# answered once (no loss, no duplicate), the connection stays up, and there
# is no protocol error.  A PING may come back after the 1 s PING timeout
# (a retransmission under rxe waits about half a second); those count as
# timeouts but their PONG must still arrive.  At this rate a packet and
# the peer's NAK of it are both lost now and then: without the fabric's
# send-queue stall guard rxe never resends it while pings keep the send
# queue busy, and the connection dies of the heartbeat (tx_stalls counts
# the pauses; see the Fabric DOC in kernel/fabric/main.c).
. ./lib.sh
other=$((3 - me))

add_peer $other
wait_up $other 30
barrier up >/dev/null
out=$($CTL netem loss 10%)
ok $? "node $me: netem loss 10% on eth0 ($out)"
barrier lossy >/dev/null
out=$(fosnet ping $other 30 4)
diag "pings under loss: $out"
[ "$(kv errors "$out")" = 0 ] && [ "$(kv failed_procs "$out")" = 0 ] &&
	[ "$(kv ok "$out")" -ge 60 ]
ok $? "node $me: 4 x 30 pings to node $other under 10% loss, only late ones fail ($(kv ok "$out") ok, $(kv timeouts "$out") late)"
barrier pinged >/dev/null
out=$($CTL netem off)
ok $? "node $me: netem off ($out)"
sleep 3	# late PONGs
line=$(fosnet list $other)
diag "$line"
diag "rdma counters: $(rdma_counters)"
diag "neighbours: $(ip -s neigh show dev eth0 | tr '\n' ';')"
tx=$(kv pings_tx "$line")
prx=$(kv pings_rx "$line")
pong=$(kv pongs_rx "$line")
eval "$(barrier counts "$tx:$prx:$pong")"
eval "theirs=\$N$other"
their_prx=$(echo "$theirs" | cut -d: -f2)
[ "$pong" = "$tx" ] && [ "$tx" -ge 120 ]
ok $? "node $me: every PING answered exactly once ($tx sent, $pong PONGs)"
[ "$their_prx" = "$tx" ]
ok $? "node $me: node $other received each exactly once ($their_prx received)"
[ "$(kv state "$line")" = up ] && [ "$(kv disconnects "$line")" = 0 ] &&
	[ "$(kv proto_errors "$line")" = 0 ]
ok $? "node $me: never disconnected, no protocol errors"
barrier done >/dev/null
finish
