#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run multi-node transport tests on this node of a vm/run --nodes N:
#
#   vm/run --nodes 2 -- tests/multinode/run.sh connect refuse link loss restart kill
#   vm/run --nodes 3 -- tests/multinode/run.sh mesh
#
# Every node runs the same command; each TEST.sh here is a TAP program
# that picks its role from FRACTOS_NODE.  run.sh first reloads fractos.ko
# with node_id=FRACTOS_NODE, runs the tests in order (after each one it
# forgets every peer and meets the other nodes at a barrier), checks that
# every live-object counter is zero, and prints "# fractos: N passed, N
# failed" (TAP programs, per node).  "kill" must come last: every node but
# node 1 prints its summary first and then waits to be killed by node 1;
# so must "pipekill" (its victim is node 2), "pipekill_storage" (node 3)
# and "pipekill_app" (node 1, killed by node 2).  A test has 240 s, or
# what its "# timeout: SECONDS" line asks for (TEST_TIMEOUT overrides).
cd "$(dirname "$0")" || exit 1
. ./lib.sh

pass=0
fail=0
failed=""
summary() {
	[ -n "$failed" ] && echo "# node $me failed:$failed"
	echo "# fractos: $pass passed, $fail failed"
}
count() {
	if [ "$1" = 0 ]; then
		pass=$((pass + 1)); echo "# PASS $2 (node $me)"
	else
		fail=$((fail + 1)); failed="$failed $2"
		echo "# FAIL $2 (node $me, exit $1)"
		# The console shows errors only: keep the rest of the story.
		dmesg | grep -e fractos -e rxe -e rdma | tail -n 30 |
			sed "s/^/# node $me dmesg: /"
		diag "node $me rdma counters: $(rdma_counters)"
		diag "node $me neighbours: $(ip -s neigh show | tr '\n' ';')"
	fi
}

if [ ! -x ./fosnet ]; then
	echo "# fosnet is not built (make userspace)"
	count 1 build; summary; exit 1
fi
if [ "$(cat $PARAMS/node_id 2>/dev/null)" != "$me" ]; then
	rmmod fractos 2>/dev/null
	if ! insmod "$FRACTOS_KO" node_id="$me" || ! set_secret; then
		count 1 insmod; summary; exit 1
	fi
fi
diag "node $me of $nodes: $(fosnet stats | cut -d' ' -f1-3), heartbeat $(hb_ms) ms"
# Every node booted before the first test: one guest of several may take
# minutes longer (the debug kernel under TCG; vm/run boots a hung one again).
fosnet barrier boot - "${MULTINODE_BOOT_WAIT:-900}" >/dev/null ||
	diag "node $me: not every node booted within ${MULTINODE_BOOT_WAIT:-900} s"

for t in "$@"; do
	echo "# ---- $t (node $me)"
	if [ ! -r "./$t.sh" ]; then
		count 1 "$t"; continue
	fi
	# The victims of the tests that end a run by killing a node print
	# their summary first.
	if { [ "$t" = kill ] && [ "$me" != 1 ]; } ||
	   { [ "$t" = pipekill ] && [ "$me" = 2 ]; } ||
	   { [ "$t" = pipekill_storage ] && [ "$me" = 3 ]; } ||
	   { [ "$t" = pipekill_app ] && [ "$me" = 1 ]; }; then
		summary
		exec sh "./$t.sh"
	fi
	start=$(ms)
	# A test may ask for more time with a "# timeout: SECONDS" line.
	to=$(sed -n 's/^# timeout: \([0-9][0-9]*\)$/\1/p' "./$t.sh" | head -n 1)
	timeout "${TEST_TIMEOUT:-${to:-240}}" sh "./$t.sh"
	count $? "$t"
	diag "$t took $(( ($(ms) - start) / 1000 )) s"
	del_all
	case $t in
	kill|pipekill*) ;;	# the run's last, with a node gone
	# A test's roles may end minutes apart on a slow host (the
	# pipeline's application node once ended 269 s after the others).
	*) barrier "after-$t" - 600 >/dev/null || diag "barrier after $t failed" ;;
	esac
done

# Nothing may outlive the tests: every live-object counter must be zero,
# within 5 s (kept regions are released once idle for copy_cache_ms).
bad=$(live_left 5)
if [ -z "$bad" ]; then
	count 0 live-objects-zero
else
	diag "live objects:$bad"
	count 1 live-objects-zero
fi
summary
[ $fail = 0 ]
