#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# link (2 nodes): node 1 takes node 2's link down (vm/ctl, on the host's
# bridge).  Both ends must declare the other dead by the heartbeat bound
# documented in kernel/fabric/main.c: silence for FOS_HB_MISSES (4) intervals, checked
# once per interval, so at most 5 x fabric_heartbeat_ms after the last
# message (plus scheduling slack under TCG).  Then the link comes back:
# node 1 reconnects, both see UP with the same epoch, pings work.
. ./lib.sh
other=$((3 - me))
iv=$(hb_ms)

add_peer $other
wait_up $other 30
epoch=$(fosnet get $other epoch)
barrier go >/dev/null
wait_down_bg $other 30 /tmp/down.$$
if [ $me = 1 ]; then
	sleep 1.5
	out=$($CTL link 2 down)
	ok $? "vm/ctl link 2 down: $out"
fi
check_down $other /tmp/down.$$
det=$(ms)
if [ $me = 1 ]; then
	# let node 2 see it too (within an interval of us) before the link is back
	while [ $(($(ms) - det)) -lt $((2 * iv + 1000)) ]; do sleep 0.2; done
	out=$($CTL link 2 up)
	ok $? "vm/ctl link 2 up: $out"
fi
wait_up $other 45 "$epoch"
out=$(fosnet ping $other 10)
ok $? "node $me: 10 pings after the link came back ($out)"
line=$(fosnet list $other)
[ "$(kv epoch_changes "$line")" = 0 ] && [ "$(kv proto_errors "$line")" = 0 ]
ok $? "node $me: same epoch, no protocol errors ($(kv connects "$line") connects)"
barrier done >/dev/null
finish
