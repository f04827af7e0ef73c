#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# relay (3 nodes): a man in the middle that holds no key (issue 28, item
# 3).  Node 3 runs ./relay: node 1 is told that node 2 is at node 3's
# address (port 18600, the relay's), node 2 that node 1 is at node 3's
# address.  The handshake passes through the relay unchanged, so both
# admit each other and node 1's pings to node 2 pass through it.  Then
# the relay sends node 2 a PING of its own, as node 1's next message (it
# counted them) with a tag it cannot compute: node 2 must end the
# connection, count a protocol error and answer nothing.  On a module
# without channel binding (wire version 6) the PING is answered.
. ./lib.sh
RPORT=18600
out=/tmp/relay.out

case $me in
3)
	./relay $RPORT "$(addr_of 2)" 18525 120 >$out 2>&1 &
	rpid=$!
	sleep 1
	kill -0 $rpid 2>/dev/null
	ok $? "node 3: the relay listens on port $RPORT"
	;;
2)
	out2=$(fosnet add 1 "$(addr_of 3)")
	ok $? "node 2: node 1 at node 3's address $(addr_of 3) $out2"
	;;
esac
barrier listening >/dev/null
if [ $me = 1 ]; then
	out1=$(fosnet add 2 "$(addr_of 3)" $RPORT)
	ok $? "node 1: node 2 at node 3's address, port $RPORT $out1"
fi
if [ $me != 3 ]; then
	other=$((3 - me))
	wait_up $other 60
	dmesg | grep -q "fractos: node $other up (.*authenticated)"
	ok $? "node $me: node $other admitted through the relay, authenticated"
fi
if [ $me = 1 ]; then
	p=$(fosnet ping 2 5)
	ok $? "node 1: 5 pings to node 2 through the relay ($p)"
fi
# node 2's counters once node 1's pings are answered, before the injection
barrier pinged >/dev/null
if [ $me = 2 ]; then
	pe0=$(kv proto_errors "$(fosnet list 1)")
	pr0=$(fosnet stat pings_rx)
fi
barrier counted >/dev/null
[ $me = 3 ] && kill -USR1 $rpid
case $me in
3)
	wait $rpid
	ok $? "node 3: the relay relayed and injected ($(tr '\n' ' ' <$out))"
	grep -q "b_cut=1" $out
	ok $? "node 3: node 2 ended the connection the relay injected into"
	;;
2)
	fosnet wait 1 down 30 >/dev/null
	ok $? "node 2: the connection to node 1 ended"
	pe1=$(kv proto_errors "$(fosnet list 1)")
	[ "$pe1" = $((pe0 + 1)) ]
	ok $? "node 2: one protocol error ($pe0 -> $pe1)"
	[ "$(fosnet stat pings_rx)" = "$pr0" ]
	ok $? "node 2: the injected PING was not answered (pings_rx $pr0)"
	dmesg | grep -q "fractos: node 1: protocol error: bad sequence number or tag"
	ok $? "node 2's log: bad sequence number or tag"
	;;
1)
	fosnet wait 2 down 30 >/dev/null
	ok $? "node 1: the connection to node 2 ended"
	;;
esac
barrier done >/dev/null
rm -f $out
finish
