#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The multi-node transport suite on one kernel, from the host:
#
#   tests/multinode/suite.sh [6.1|6.12]
#
# Two guests run connect, refuse, auth, link, loss, restart, flap, fuzz and kill (in that
# order: kill ends the run), then three guests run mesh, fs (the
# file-system service disaggregated over them), membership, relay (a
# man in the middle of one connection), flap3 (forwarded invocations
# across a flapping link), chain3 (fractos-chain's chain against its star
# across the nodes, continuations derived at their owners), pipeline (the paper's
# storage -> GPU -> application pipeline against the star and NVMe-oF)
# and pipekill (its GPU node killed mid-batch: last), then three guests
# twice more for pipekill_storage and pipekill_app (its storage node, its
# application's node killed), then (MULTINODE_FIGURES=1) one guest for
# pipeline1 (the pipeline's time ratios over the loopback fabric), then
# three guests run remote_2node.sh four times (remote invocation and
# delegation; the 3-stage chain of chain_node.c, killchain, and the
# storage test of blk_node.c).  Every node prints
# its own "[nI] # fractos: N passed, N failed"; the sum is printed last,
# unprefixed, for .ci/run.  A vm/run failure outside the counted tests
# (a kernel WARNING, a refused rmmod, a timeout) counts as one failure.
# Environment: MULTINODE_TIMEOUT (seconds per vm/run, default 900; 2400
# on the debug kernel, which runs 5 to 10 times slower),
# MULTINODE_MODULE (a prebuilt fractos.ko for vm/run --module),
# MULTINODE_2 / MULTINODE_3 (the tests of each run), MULTINODE_ENV
# (VAR=VALUE words for every guest's command: make check's sizes, e.g.
# KC_ITER=50 FUZZ_DURATION=30), MULTINODE_APPS=0 (of the three-guest
# runs, mesh and relay only: make check runs the services' tests on its
# first kernel), MULTINODE_FIGURES=1 (also pipeline1, the pipeline's
# time ratios on one guest), MULTINODE_NO_REMOTE=1
# (skip the last runs: remote_2node.sh, remote invocation on three nodes),
# MULTINODE_DEADLINE (seconds since the epoch, set by .ci/run: the runs
# that add least to what the others check - pipekill_storage,
# pipekill_app, killchain - are skipped, each with a "# multinode: SKIP"
# line, when less than their estimate plus MULTINODE_RESERVE seconds,
# default 1200, would be left: the rest of the suite and the next kernel's
# must still fit).
set -u
cd "$(dirname "$0")/../.." || exit 1
kver=${1:-6.1}
timeout=${MULTINODE_TIMEOUT:-900}
[ "$kver" = debug ] && timeout=${MULTINODE_TIMEOUT:-2400}
pass=0
fail=0
rc=0
mkdir -p build

# The emulated NIC of a guest stopped sending (the guest kernel's
# "NETDEV WATCHDOG: ... transmit queue 0 timed out"), every node's
# transport then timing out on it: seen in the three-guest runs, whose
# guests have one vCPU each, until vm/run gave such a guest maxcpus=2
# (QEMU 7.2's TCG dropped a one-CPU guest's memory barriers, and virtio
# lost a kick: vm/run says how).  Should it happen again, the failed run
# says so, next to the fabric's messages.
nic_stalled() {
	grep -l "NETDEV WATCHDOG" "build/vm-$kver-multinode$1"-n*.log 2>/dev/null |
		head -n 1
}

run() {
	local n=$1 smp=$2 tag=${script:+-${prog:-remote}}
	# shellcheck disable=SC2206  # VAR=VALUE words, none with a space
	local env=(${MULTINODE_ENV:-})
	local out=build/multinode-$kver-$1$tag.out r p f stalled
	shift 2
	echo "=== multinode on $kver, $n nodes: ${script:-run.sh} $*"
	vm/run --kernel "$kver" --nodes "$n" --smp "$smp" \
		--timeout "$timeout" ${nvme:+--nvme "$nvme"} \
		${MULTINODE_MODULE:+--module "$MULTINODE_MODULE"} \
		--log "build/vm-$kver-multinode$n$tag.log" \
		-- env "${env[@]}" ${script:-tests/multinode/run.sh} "$@" 2>&1 | tee "$out"
	r=${PIPESTATUS[0]}
	# "[nI] # fractos: P passed, F failed" per node (one guest: no prefix)
	read -r p f < <(awk '/^(\[n[0-9]+\] )?# fractos: [0-9]+ passed, [0-9]+ failed/ {
		i = $1 == "#" ? 3 : 4; p += $i; f += $(i + 2) } END { print p + 0, f + 0 }' "$out")
	if [ "$r" != 0 ]; then
		rc=1
		if [ "$f" = 0 ]; then
			echo "# multinode: vm/run with $n nodes exited $r"
			f=1
		fi
	fi
	# A failed run: each node's last fabric messages, for the CI summary,
	# and whether an emulated NIC stalled.
	if [ "$f" != 0 ]; then
		fabric_log "build/vm-$kver-multinode$n$tag"
		stalled=$(nic_stalled "$n$tag")
		[ -z "$stalled" ] ||
			echo "# multinode: the emulated NIC stalled in $stalled (NETDEV WATCHDOG)"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
}

# fabric_log LOG: the fabric's last messages in each node's kernel log
# (connections up, down, failed, restarted), prefixed "# kernel nI: ".
fabric_log() {
	local l

	for l in "$1"-n*.log; do
		[ -f "$l" ] || continue
		grep -E 'fractos: (node [0-9]+ (up|down|restarted)|.*(no heartbeat|connection ends|failed: |QP event|refused|no send completion))' "$l" |
			tail -n 6 | sed "s|^|# kernel ${l##*-}: |; s|\.log: |: |"
	done
}

# late EST NAME: true (and says so) when running NAME, about EST seconds,
# would leave less than MULTINODE_RESERVE before MULTINODE_DEADLINE.
skipped=""
late() {
	local left

	[ -n "${MULTINODE_DEADLINE:-}" ] || return 1
	left=$(( MULTINODE_DEADLINE - $(date +%s) ))
	[ "$left" -lt $(( $1 + ${MULTINODE_RESERVE:-1200} )) ] || return 1
	echo "# multinode: SKIP $2 on $kver: $((left / 60)) minutes left before the deadline, it needs about $(( ($1 + ${MULTINODE_RESERVE:-1200}) / 60 )) with the reserve"
	skipped="$skipped $2"
}

# run_script N SMP SCRIPT [PROGRAM]: SCRIPT instead of run.sh on every node
run_script() {
	local script=$3 prog=${4:-}

	run "$1" "$2" ${prog:+"$prog"}
}

run 2 2 ${MULTINODE_2:-connect refuse auth link loss restart flap rdmadrop fuzz kill}
# one vCPU each: three guests on a small host; NVMe for fs (storage on
# node 3, fractos-fsd on node 2, the client on node 1)
# MULTINODE_APPS=0: the transport's tests only (mesh, relay, flap3), not
# the services' (fs, membership, the pipeline and its kills); chain3 in
# both
if [ "${MULTINODE_APPS:-1}" = 0 ]; then
	nvme=64M run 3 1 ${MULTINODE_3:-mesh relay flap3 chain3}
else
	nvme=64M run 3 1 ${MULTINODE_3:-mesh fs membership relay flap3 chain3 pipeline pipekill}
	# the pipeline's storage node, then its application's node, killed
	# mid-batch (each kill ends its run)
	late 240 pipekill_storage ||
		nvme=64M run_script 3 1 tests/multinode/run.sh pipekill_storage
	late 240 pipekill_app ||
		nvme=64M run_script 3 1 tests/multinode/run.sh pipekill_app
fi
# the pipeline on one guest, its own peer through fabric_loopback: the
# time ratios without three guests sharing the host's CPUs (figures:
# with MULTINODE_FIGURES=1 only, which make check sets with FULL=1)
if [ -n "${MULTINODE_FIGURES:-}" ]; then
	nvme=64M run_script 1 2 tests/multinode/run.sh pipeline1
fi
# remote invocation, delegation, forwarding and node death on three nodes
if [ -z "${MULTINODE_NO_REMOTE:-}" ]; then
	run_script 3 1 tests/multinode/remote_2node.sh
	# a 3-stage chain over the nodes: loss, a lease, a node killed mid-chain
	run_script 3 1 tests/multinode/remote_2node.sh chain_node
	# kill-anywhere: the chain's processes SIGKILLed at random points
	late 300 killchain || run_script 3 1 tests/multinode/remote_2node.sh killchain
	# storage on node 3 (NVMe), client node 1, continuation node 2
	nvme=64M run_script 3 1 tests/multinode/remote_2node.sh blk_node
fi
[ -z "$skipped" ] || echo "# multinode: skipped on $kver for time:$skipped"
echo "# fractos: $pass passed, $fail failed"
exit $rc
