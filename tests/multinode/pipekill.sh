#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipekill (3 nodes, vm/run --nvme SIZE, last test of a run): the
# face-verification pipeline of pipeline.sh, and one of its nodes killed
# (vm/ctl: a power cut) once batches flow.  Node 3 serves the features
# (fractos_nvme, fractos-fsd), node 2 runs fractos-gpud, node 1 runs
# fractos-facever -m pipeline with batches without end.  $victim says
# whose death it is (pipekill_storage.sh and pipekill_app.sh set it):
#
# 2, the GPU node (pipekill): the batch in flight is never answered: node
#   3's read invokes the launch on node 2 (derived there, at its owner),
#   which fails.  What the application has instead is its watch
#   (monitor_receive on the GPU service's launch Request): the proxy is
#   revoked when node 1 declares node 2 down (a copy into the GPU node's
#   memory may fail first, with EKEYREVOKED, or a call that meets the
#   dying connection, with EHOSTUNREACH or ETIMEDOUT: the application
#   then takes the monitor's message to say whose death it was).
# 3, the storage node (pipekill_storage): the read in flight is never
#   answered; the watch on the file's read Requests says so.
#   In both, the application must stop naming the dead
#   node's service within the heartbeat bound (5 intervals after its last
#   message, plus 2 s: TCG and the monitor's delivery).
# 1, the application's node (pipekill_app; node 2 kills it): its
#   contexts on the GPU node are freed within that bound, fractos-gpud
#   still running (node 2's dmabufs back to zero: the contexts' device
#   memory), and the storage node's reads in flight end (node 1's read
#   Requests derived on node 3 go with node 1; a read in flight invokes
#   its launch on node 2, whose answer to node 1 fails).
#
# Then nothing is left on the survivors: their live counters are zero
# once the victim is deleted; node 3 stops its daemon, detaches and
# unloads fractos_nvme (every command finished); node 2 stops
# fractos-gpud.  The victim prints its summary first (run.sh) and waits to
# be killed.
. ./lib.sh

fctl=../../tools/fractctl
fscli=../../tools/fractos-fs
gpud=../../adaptors/gpu/fractos-gpud
app=../../tools/fractos-facever
ids=1024
dim=128
victim=${victim:-2}
killer=1
[ "$victim" = 1 ] && killer=2
survivors=$(for i in 1 2 3; do [ "$i" = "$victim" ] || printf '%s ' "$i"; done)

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

# among NAME: a barrier of the survivors
among() {
	FOSNET_NODES="$survivors" ./fosnet barrier "pipekill-$1" - 300 >/dev/null
}

# await_death: the victim's part, once its role is set up
await_death() {
	sleep 300
	diag "node $me was not killed"
	exit 1
}

# kill_victim: cut the victim's power; its "down" checked against the
# heartbeat bound; sets t0, the time of its last message (ms)
kill_victim() {
	wait_down_bg "$victim" 30 /tmp/pk.down
	out=$($CTL kill "$victim")
	ok $? "vm/ctl kill $victim: $out"
	check_down "$victim" /tmp/pk.down
	since=$(kv since_rx_ms "$(cat /tmp/pk.down)")
	t0=$(( $(ms) - since ))
	rm -f /tmp/pk.down
}

# forget_victim: delete the dead node; then this node's counters
forget_victim() {
	out=$(fosnet del "$victim")
	ok $? "node $me: del node $victim $out"
	zero_but_fabric
}

case $me in
3)
	ssd_attach
	st=/tmp/fsd-pk.meta
	fsd_serve "$st"
	pid=$fsd_pid
	barrier served - 300 >/dev/null
	[ "$victim" = 3 ] && await_death
	among stopped
	kill "$pid"
	wait "$pid" 2>/dev/null
	rm -f "$st"
	line=$($fctl -j blk list 2>/dev/null | tr -d '\n')
	diag "node 3: the adaptor after the kill: $line"
	$fctl blk detach name ssd
	ok $? "node 3: detach (every command finished)"
	rmmod fractos_nvme
	ok $? "node 3: rmmod fractos_nvme"
	forget_victim
	among done
	;;
2)
	modprobe vgem 2>/dev/null
	$gpud serve -N gpu0 -w >/dev/null 2>/tmp/gpud.err &
	pid=$!
	barrier served - 300 >/dev/null
	[ "$victim" = 2 ] && await_death
	if [ "$victim" = 1 ]; then
		# the application's node: killed once its batches flow
		FOSNET_NODES="1 2" ./fosnet barrier pipekill-flowing - 300 >/dev/null
		[ "$(live dmabufs)" -gt 0 ]
		ok $? "node 2: the application's contexts hold device memory ($(live dmabufs) dma-bufs)"
		kill_victim
		i=0
		while [ "$(live dmabufs)" != 0 ] && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		took=$(( $(ms) - t0 ))
		bound=$((5 * $(hb_ms) + 2000))
		[ "$(live dmabufs)" = 0 ] && [ "$took" -le $bound ] && kill -0 "$pid"
		ok $? "node 2: the dead client's contexts freed $took ms after its last message (bound $bound ms), fractos-gpud still serving"
	fi
	among stopped
	kill "$pid"
	wait "$pid" 2>/dev/null
	[ ! -s /tmp/gpud.err ]
	ok $? "node 2: fractos-gpud said nothing on stderr $(head -c 300 /tmp/gpud.err)"
	forget_victim
	among done
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
	if [ "$victim" = 1 ]; then
		FOSNET_NODES="1 2" ./fosnet barrier pipekill-flowing - 300 >/dev/null
		await_death
	fi
	kill_victim
	# the application's end, measured from the victim's last message
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
	service="the GPU service"
	[ "$victim" = 3 ] && service="the file service"
	[ $rc = 1 ] && [ "$took" -le $bound ] &&
		echo "$err" | grep -q "$service's Request was revoked.*\(EKEYREVOKED\|EHOSTUNREACH\|ETIMEDOUT\)"
	ok $? "node 1: the application stopped $took ms after node $victim's last message (bound $bound ms), exit $rc: $err"
	forget_victim
	among stopped
	among done
	rm -f /tmp/pk-refs /tmp/pk.out /tmp/pk.err
	;;
esac
finish
