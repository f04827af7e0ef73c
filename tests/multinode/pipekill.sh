#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipekill (3 nodes, vm/run --nvme SIZE, last test of a run): the
# face-verification pipeline of pipeline.sh, and its GPU node killed in the
# middle of it.  Node 3 serves the features (fractos_nvme, fractos-fsd),
# node 2 runs fractos-gpud, node 1 runs fractos-facever -m pipeline with
# batches without end.  Once batches flow, node 1 kills node 2's guest
# (vm/ctl: a power cut).  The batch in flight is never answered: node 3's
# read invokes the launch through node 1, whose forward to node 2 fails.
# What the application has instead is its watch (monitor_receive on the
# GPU service's launch Request): the proxy is revoked when node 1 declares
# node 2 down (a copy into the GPU node's memory may fail first, with
# EKEYREVOKED: the application then takes the monitor's message to say
# whose death it was), so the application must stop with EKEYREVOKED
# naming the GPU service within the heartbeat bound (5 intervals after node 2's last
# message, plus 2 s: TCG and the monitor's delivery).  Then nothing is
# left: node 1's live counters are zero once node 2 is deleted, and node 3
# stops its daemon, detaches and unloads fractos_nvme (every command
# finished, the failed continuation counted) with its counters at zero.
# Node 2 prints its summary first (run.sh) and waits to be killed.
. ./lib.sh

fctl=../../tools/fractctl
fscli=../../tools/fractos-fs
gpud=../../adaptors/gpu/fractos-gpud
app=../../tools/fractos-facever
ids=1024
dim=128

[ "$nodes" = 3 ] || { echo "Bail out! pipekill needs 3 nodes"; exit 1; }
for i in 1 2 3; do [ "$i" = "$me" ] || add_peer "$i"; done
for i in 1 2 3; do [ "$i" = "$me" ] || wait_up "$i" 60; done

# zero_but_fabric: every live counter of this node but peers and conns is
# zero within 10 s
zero_but_fabric() {
	local left
	left=$(left_but_fabric 10)
	[ -z "$left" ]
	ok $? "node $me: every live counter but the fabric's back to zero${left:+ (left:$left)}"
}

case $me in
3)
	ssd_attach
	st=/tmp/fsd-pk.meta
	fsd_serve "$st"
	pid=$fsd_pid
	barrier served - 300 >/dev/null
	# node 2 is gone from here on
	FOSNET_NODES="1 3" ./fosnet barrier pipekill-stopped - 300 >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null
	rm -f "$st"
	line=$($fctl -j blk list 2>/dev/null | tr -d '\n')
	diag "node 3: the adaptor after the kill: $line"
	$fctl blk detach name ssd
	ok $? "node 3: detach (every command finished)"
	rmmod fractos_nvme
	ok $? "node 3: rmmod fractos_nvme"
	fosnet del 2 >/dev/null
	zero_but_fabric
	FOSNET_NODES="1 3" ./fosnet barrier pipekill-done - 300 >/dev/null
	;;
2)
	$gpud serve -N gpu0 -w >/dev/null 2>&1 &
	barrier served - 300 >/dev/null
	sleep 300
	diag "node 2 was not killed"
	exit 1
	;;
1)
	barrier served - 300 >/dev/null
	out=$($app -i $ids -D $dim gen /tmp/pk-refs 2>&1) &&
		out=$($fscli -n 3 put /tmp/pk-refs refs 2>&1)
	ok $? "node 1: the reference features of $ids ids in fs0 on node 3 ($out)"
	$app -i $ids -D $dim -b 64 -n 1000000 -m pipeline -f 3 -g 2 run refs \
		> /tmp/pk.out 2> /tmp/pk.err &
	apid=$!
	sleep 3
	kill -0 $apid
	ok $? "node 1: batches flow (the application runs, $(head -c 200 /tmp/pk.err))"
	wait_down_bg 2 30 /tmp/pk.down
	out=$($CTL kill 2)
	ok $? "vm/ctl kill 2: $out"
	check_down 2 /tmp/pk.down
	# the application's end, measured from node 2's last message
	since=$(kv since_rx_ms "$(cat /tmp/pk.down)")
	t0=$(( $(ms) - since ))
	i=0
	while kill -0 $apid 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	took=$(( $(ms) - t0 ))
	kill -9 $apid 2>/dev/null
	wait $apid
	rc=$?
	err=$(cat /tmp/pk.err)
	bound=$((5 * $(hb_ms) + 2000))
	[ $rc = 1 ] && [ "$took" -le $bound ] &&
		echo "$err" | grep -q "the GPU service's Request was revoked.*EKEYREVOKED"
	ok $? "node 1: the application stopped $took ms after node 2's last message (bound $bound ms), exit $rc: $err"
	out=$(fosnet del 2)
	ok $? "node 1: del node 2 $out"
	zero_but_fabric
	FOSNET_NODES="1 3" ./fosnet barrier pipekill-stopped - 300 >/dev/null
	FOSNET_NODES="1 3" ./fosnet barrier pipekill-done - 300 >/dev/null
	rm -f /tmp/pk-refs /tmp/pk.out /tmp/pk.err /tmp/pk.down
	;;
esac
finish
