#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kill (2 nodes, last test of a run): node 1 kills node 2's guest (vm/ctl:
# like a power cut) and must declare it down within the heartbeat bound
# (5 x fabric_heartbeat_ms, plus slack), then delete it cleanly.  Node 2
# connects and arms a contact on node 1 (lost_node arm: a killed child's
# contact first, which its own note tells and disarms), and waits to be
# killed (fractctl space contacts there lists it, armed); node 1's Request
# must then be told that node 2 was lost, once.
. ./lib.sh
other=$((3 - me))

add_peer $other
wait_up $other 30
out=/tmp/lost.$$
if [ $me = 1 ]; then
	./lost_node serve 60 > $out &
	lost=$!
else
	./lost_node arm > $out &
	lost=$!
fi
wait_ready $out
grep '^#' $out
listed=-
if [ $me != 1 ]; then
	# fractctl lists the space's one contact left, armed at node 1; its
	# verdict travels to node 1 in the barrier, since node 2 is killed.
	l=$(../../tools/fractctl space contacts | grep "^pid $lost ")
	diag "fractctl space contacts: $l"
	[ "$(printf '%s\n' "$l" | wc -l)" = 1 ] &&
		printf '%s\n' "$l" | grep -q "^pid $lost (lost_node) fd [0-9]* contact 2: request 1:[0-9]*:[0-9]* armed yes stealable 0\$"
	listed=$?
fi
b=$(barrier ready "$listed") || { diag "barrier failed"; finish; }
if [ $me != 1 ]; then
	sleep 120
	diag "node $me was not killed"
	exit 1
fi
# The armings come and go in the background: 1 for a whole second.
i=0
same=0
while [ $same -lt 10 ] && [ $i -lt 150 ]; do
	[ "$(live armed_contacts)" = 1 ] && same=$((same + 1)) || same=0
	sleep 0.1
	i=$((i + 1))
done
[ $same = 10 ]
ok $? "node 1: one contact of node 2's armed here (the killed child's and the removed one disarmed)"
printf '%s\n' "$b" | grep -Eq '(^|[[:space:]])N2=0([[:space:]]|$)'
ok $? "node 2: fractctl space contacts lists contact 2 only, node 1's Request, armed"
wait_down_bg 2 30 /tmp/down.$$
sleep 1.5
r=$($CTL kill 2)
ok $? "vm/ctl kill 2: $r"
check_down 2 /tmp/down.$$
wait $lost
rc=$?
grep '^#' $out | tail -n 3
ok $rc "node 1: the contact was told node 2 was lost (NODE_LOST, contact 2), once, after the killed child's own note"
[ "$(live armed_contacts)" = 0 ]
ok $? "node 1: no contact armed any more"
rm -f $out
out=$(fosnet del 2)
ok $? "node 1: del node 2 $out"
[ "$(live conns)" = 0 ] && [ "$(live peers)" = 0 ]
ok $? "node 1: no connection and no peer left"
finish
