#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdmadrop (2 nodes): sessions outlive connections that the network cuts
# without taking a link down.  Node 1 drops every RoCEv2 packet it
# receives (UDP port 4791, a tc flower filter: vm/ctl drop) twice for 4 s,
# each long enough for the heartbeat to end the connection, while the
# link, IP and the rxe port stay up, so that nothing but the fabric's own
# heartbeat and the QPs' retries can tell.  The cut is one-sided: what
# node 1 sends still reaches node 2, but neither the RC ACKs nor the
# fabric's acknowledgements come back: node 1 keeps what node 2 delivered
# as unacknowledged, and must learn from node 2's first header on the
# next connection that node 2 has it, not send it again.  Meanwhile
# flap_node streams numbered invocations both ways and copies node 2's
# Memory (stream_cut in lib.sh, as flap.sh does with the link): every
# number must be served exactly once on each side, every copy bring the
# right bytes, and the session survive with the same epoch; the filter
# must have dropped packets each time; node 2 must have sent again what
# the cuts lost of its own, and received nothing twice.
# timeout: 240
. ./lib.sh
other=$((3 - me))

# The cut, on node 1: the filter, then, a second in, the state of the
# link and of the rxe port under them.
drop_rdma() {
	$CTL drop rdma || return
	sleep 1
	echo "during: eth0 $(cat /sys/class/net/eth0/operstate)" \
		"rxe0 $(rdma link show rxe0/1 | grep -ow 'state [A-Z]*')" >> "$cut_log"
}

grace_up
stream_cut "two cuts of RDMA alone" drop_rdma "$CTL drop off" 3 2
if [ $me = 1 ]; then
	sed 's/^/# /' "$cut_log"
	[ "$(grep -c '^during: eth0 up rxe0 state ACTIVE$' "$cut_log")" = 2 ] &&
		[ "$(grep -c '^ok dropped=[1-9][0-9]*$' "$cut_log")" = 2 ]
	ok $? "node 1: RoCEv2 packets dropped in each cut, with eth0 up and the rxe port ACTIVE"
	rm -f "$cut_log"
else
	# Each side hears the other's first header, and its sack, before it
	# sends again: node 1 learns what node 2 delivered and resends none
	# of it, while node 2's own sends into the cut were lost and go again.
	line=$(fosnet list $other)
	[ "$(kv retransmits "$line")" -ge 1 ] && [ "$(kv duplicates "$line")" = 0 ]
	ok $? "node 2: its sends lost in the cuts sent again ($(kv retransmits "$line")), nothing node 1 had delivered sent twice (duplicates $(kv duplicates "$line"))"
fi
echo 0 > $PARAMS/fabric_grace_ms
echo 1000 > $PARAMS/fabric_heartbeat_ms
barrier done >/dev/null
finish
