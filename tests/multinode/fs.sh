#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fs (3 nodes, vm/run --nvme SIZE): the file-system service disaggregated
# as in the paper.  Node 3 is the storage node (fractos_nvme.ko, its NVMe
# namespace attached as "ssd"), node 2 runs fractos-fsd on node 3's device
# (every block call crosses the fabric), node 1 is the client (fractos-fs
# -n 2).  Node 1 puts a file and gets it back in FS mode and in DAX mode,
# byte for byte, and counts what it read from each peer (the fabric's
# rdma_read_bytes: a copy's destination reads its source): in FS mode the
# data comes from node 2 (node 3 -> node 2 -> node 1: twice across the
# fabric), in DAX mode straight from node 3 (once).  Node 2's counters
# show the first of FS mode's two crossings.  Then node 2's daemon is
# killed: the service is gone for node 1.
. ./lib.sh

fctl=../../tools/fractctl
fscli=../../tools/fractos-fs
size=6000000

# rx_from ID: bytes this node has RDMA-read from node ID.
rx_from() {
	$fctl -j -s node show "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d[0] if isinstance(d, list) else d
print(d["stats"]["rdma_read_bytes"])'
}

[ "$nodes" = 3 ] || { echo "Bail out! fs needs 3 nodes"; exit 1; }
for i in 1 2 3; do
	[ "$i" = "$me" ] && continue
	# Node 3 trusts node 2's uids: fsd (root) may look up "ssd", which
	# the adaptor publishes for uid 0 only.
	if [ "$me" = 3 ] && [ "$i" = 2 ]; then
		out=$(../../tools/fractctl node add 2 "$(addr_of 2)" trust-uids 2>&1)
		ok $? "node 3: add node 2, trusting its uids $out"
	else
		add_peer "$i"
	fi
done
for i in 1 2 3; do [ "$i" = "$me" ] || wait_up "$i" 60; done

case $me in
3)
	ssd_attach
	# Every node passes every barrier, in order.
	barrier attached >/dev/null
	barrier served - 300 >/dev/null
	barrier fsmode - 300 >/dev/null
	barrier kill - 300 >/dev/null
	barrier killed >/dev/null
	barrier done - 300 >/dev/null
	$fctl blk detach name ssd
	ok $? "node 3: detach"
	rmmod fractos_nvme
	ok $? "node 3: rmmod fractos_nvme"
	;;
2)
	barrier attached >/dev/null
	st=/tmp/fsd-node.meta
	fsd_serve "$st" -n 3
	pid=$fsd_pid
	r3=$(rx_from 3)
	barrier served - 300 >/dev/null
	barrier fsmode - 300 >/dev/null
	got=$(( $(rx_from 3) - r3 ))
	[ "$got" -ge $size ]
	ok $? "node 2: FS mode: the data crossed node 3 -> node 2 ($got bytes)"
	barrier kill - 300 >/dev/null
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	barrier killed >/dev/null
	barrier done - 300 >/dev/null
	rm -f "$st"
	;;
1)
	barrier attached >/dev/null
	barrier served - 300 >/dev/null
	head -c $size /dev/urandom > /tmp/fs-in
	out=$($fscli -n 2 put /tmp/fs-in f 2>&1)
	ok $? "node 1: fractos-fs -n 2 put ($out)"
	r2=$(rx_from 2)
	r3=$(rx_from 3)
	out=$($fscli -n 2 get f /tmp/fs-out 2>&1)
	cmp -s /tmp/fs-in /tmp/fs-out
	ok $? "node 1: FS-mode get: the same $size bytes ($out)"
	g2=$(( $(rx_from 2) - r2 ))
	g3=$(( $(rx_from 3) - r3 ))
	[ "$g2" -ge $size ] && [ "$g3" -lt $((size / 10)) ]
	ok $? "node 1: FS mode: the data came from node 2 ($g2 bytes), not node 3 ($g3)"
	barrier fsmode - 300 >/dev/null
	r2=$(rx_from 2)
	r3=$(rx_from 3)
	out=$($fscli -n 2 -d get f /tmp/fs-out2 2>&1)
	cmp -s /tmp/fs-in /tmp/fs-out2
	ok $? "node 1: DAX get: the same $size bytes ($out)"
	g2=$(( $(rx_from 2) - r2 ))
	g3=$(( $(rx_from 3) - r3 ))
	[ "$g3" -ge $size ] && [ "$g2" -lt $((size / 10)) ]
	ok $? "node 1: DAX: the data came from node 3 once ($g3 bytes), not through node 2 ($g2)"
	out=$($fscli -n 2 fsck 2>&1)
	ok $? "node 1: fsck through the service: $out"
	barrier kill - 300 >/dev/null
	barrier killed >/dev/null
	out=$($fscli -n 2 ls 2>&1)
	[ $? = 1 ]
	ok $? "node 1: the daemon is gone: ls fails ($out)"
	barrier done - 300 >/dev/null
	rm -f /tmp/fs-in /tmp/fs-out /tmp/fs-out2
	;;
esac
finish
