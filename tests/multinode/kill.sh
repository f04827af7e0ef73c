#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kill (2 nodes, last test of a run): node 1 kills node 2's guest (vm/ctl:
# like a power cut) and must declare it down within the heartbeat bound
# (5 x fabric_heartbeat_ms, plus slack), then delete it cleanly.  Node 2
# only connects and waits to be killed.
. ./lib.sh
other=$((3 - me))

add_peer $other
wait_up $other 30
barrier ready >/dev/null || { diag "barrier failed"; finish; }
if [ $me != 1 ]; then
	sleep 120
	diag "node $me was not killed"
	exit 1
fi
wait_down_bg 2 30 /tmp/down.$$
sleep 1.5
out=$($CTL kill 2)
ok $? "vm/ctl kill 2: $out"
check_down 2 /tmp/down.$$
out=$(fosnet del 2)
ok $? "node 1: del node 2 $out"
[ "$(live conns)" = 0 ] && [ "$(live peers)" = 0 ]
ok $? "node 1: no connection and no peer left"
finish
