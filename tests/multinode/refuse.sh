#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# refuse (2 nodes).  The node with the smaller id initiates, so:
# A. node 2 adds node 1, node 1 has nothing configured: node 2 waits and
#    nothing connects (no refusal on node 1).
# B. node 1 adds node 2, node 2 has nothing configured: node 2 refuses the
#    request (its REFUSED counter rises, dmesg says so), node 1 logs the
#    rejection, counts failed attempts and never comes UP.
# C. node 2 then adds node 1: both come UP (node 1 keeps retrying).
. ./lib.sh
other=$((3 - me))

# A
r0=$(fosnet stat refused)
if [ $me = 2 ]; then
	add_peer 1
	sleep 3
	s=$(fosnet get 1 state)
	[ "$s" = waiting ]
	ok $? "A: node 2 waits for node 1 (state $s)"
	fosnet del 1
else
	sleep 3
	r1=$(fosnet stat refused)
	[ "$r1" = "$r0" ] && [ "$(fosnet stat nodes)" = 0 ]
	ok $? "A: node 1, configured with nothing, was not contacted ($r0 -> $r1 refusals)"
fi
barrier A >/dev/null

# B
r0=$(fosnet stat refused)
barrier B >/dev/null
if [ $me = 1 ]; then
	add_peer 2
	out=$(fosnet wait 2 up 8)
	[ $? != 0 ]
	ok $? "B: node 2 never comes UP ($(echo "$out" | cut -d' ' -f3-7))"
	ce=$(fosnet get 2 connect_errors)
	[ "$ce" -ge 1 ]
	ok $? "B: node 1 counts $ce failed connection attempt(s)"
	dmesg | grep -q "fractos: node 2 refused the connection"
	ok $? "B: node 1's log: node 2 refused the connection"
	dmesg | grep "refused the connection" | tail -1 | sed 's/^/# /'
else
	i=0
	while [ "$(fosnet stat refused)" = "$r0" ] && [ $i -lt 150 ]; do
		sleep 0.1; i=$((i + 1))
	done
	r1=$(fosnet stat refused)
	[ "$r1" -gt "$r0" ]
	ok $? "B: node 2 refuses node 1 (REFUSED $r0 -> $r1)"
	dmesg | grep -q "fractos: refused connection from node 1 "
	ok $? "B: node 2's log: refused connection from node 1"
	dmesg | grep "refused connection from" | tail -1 | sed 's/^/# /'
fi
barrier B-seen >/dev/null

# C
[ $me = 2 ] && add_peer 1
wait_up $other 30
out=$(fosnet ping $other 5)
ok $? "C: node $me pings node $other ($out)"
barrier C >/dev/null
finish
