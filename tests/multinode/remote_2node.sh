#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# remote_2node [PROGRAM]: remote invocation, cross-node delegation,
# revocation and node death between real nodes.  PROGRAM is remote_node
# (the default; remote_node.c says what each node does) or chain_node (a
# 3-stage chain over three nodes, under loss, a lease, a node killed
# mid-chain; chain_node.c) or killchain (3 nodes: a chain whose processes
# are SIGKILLed at random points, 200 times; killchain.c) or blk_node (3
# nodes with --nvme: storage on node 3, client on node 1, continuation on
# node 2, node 3 killed mid-read; blk_node.c).
#
#   vm/run --nodes 2 --kernel 6.1 --timeout 600 -- tests/multinode/remote_2node.sh
#   vm/run --nodes 3 --kernel 6.1 --timeout 600 -- tests/multinode/remote_2node.sh
#   vm/run --nodes 3 --kernel 6.1 --timeout 600 -- tests/multinode/remote_2node.sh chain_node
#
# Every node reloads fractos.ko with node_id=FRACTOS_NODE and runs its
# part of PROGRAM (built on the host by make -C tests/multinode).  Node 1
# kills node 2 at the end (vm/ctl): node 2's own checks reach node 1
# before, in an invocation.
cd "$(dirname "$0")" || exit 1
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
me=${FRACTOS_NODE:?not a vm/run --nodes guest}

if [ "$(cat /sys/module/fractos/parameters/node_id 2>/dev/null)" != "$me" ]; then
	rmmod fractos 2>/dev/null
	insmod "${FRACTOS_KO:?}" node_id="$me" || { echo "Bail out! insmod"; exit 1; }
	../../tools/fractctl secret set "${FRACTOS_SECRET:?}" ||
		{ echo "Bail out! fractctl secret set"; exit 1; }
fi
# Three debug-kernel guests of one vCPU on two host cores run 5 to 10 times
# slower: there a peer is dead after 8 s of silence, not 4 (the programs
# read the interval: their bounds follow).  On 2026-11-26 chain_node's
# 1.5 s link flap cost node 3 its connection to node 2 on the debug kernel.
case $(uname -r) in
*-fosdebug) echo "${MULTINODE_DEBUG_HB_MS:-2000}" > /sys/module/fractos/parameters/fabric_heartbeat_ms ;;
esac
prog=${1:-remote_node}
case $prog in
remote_node|chain_node|killchain|blk_node) ;;
*) echo "Bail out! unknown program $prog"; exit 1 ;;
esac
bin=./$prog
[ -x "$bin" ] || { echo "Bail out! $bin is not built (make -C tests/multinode)"; exit 1; }
# Every node booted before the program starts (see run.sh).
./fosnet barrier boot - "${MULTINODE_BOOT_WAIT:-900}" >/dev/null ||
	echo "# node $me: not every node booted within ${MULTINODE_BOOT_WAIT:-900} s"
"$bin"
rc=$?
echo "# remote_2node: $prog on node $me exit $rc"
# One program per node, counted by suite.sh like run.sh's summary.
if [ $rc = 0 ]; then
	echo "# fractos: 1 passed, 0 failed"
else
	echo "# fractos: 0 passed, 1 failed"
fi
exit $rc
