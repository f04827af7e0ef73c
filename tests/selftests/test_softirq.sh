#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: the fabric with its completions polled in softirq
# (fabric_rx_softirq=1, "Receiving in softirq" in kernel/fabric/rx.c),
# which is off by default.  Runs the programs that drive the node's
# connection to itself hardest - fabric (flow control over 4 credits,
# flaps, teardown), remote (every remote operation) and hostile (a peer
# that lies) - with it on, each on connections made after it was set.
# Checks: each passes; the kernel's IRQ_POLL softirq ran meanwhile (the
# CQs were polled there: nothing else in the guest uses irq_poll); the
# parameter is restored.  Prints TAP.
# timeout: 600
cd "$(dirname "$0")" || exit 1

p=/sys/module/fractos/parameters/fabric_rx_softirq
# shellcheck source-path=SCRIPTDIR
. ./tap.sh

# The IRQ_POLL row of /proc/softirqs, summed over the CPUs.
irq_poll() {
	awk '$1 == "IRQ_POLL:" { s = 0; for (i = 2; i <= NF; i++) s += $i; print s }' /proc/softirqs
}

if [ ! -w $p ] || [ -z "$(irq_poll)" ]; then
	echo "1..0 # SKIP no fabric_rx_softirq parameter, or no IRQ_POLL in /proc/softirqs"
	exit 0
fi
progs="fabric remote hostile"
echo "1..5"
old=$(cat $p)
trap 'echo "$old" > $p' EXIT
echo 1 > $p
[ "$(cat $p)" = Y ]
ok $? "fabric_rx_softirq set to 1 (was $old)"
before=$(irq_poll)
for t in $progs; do
	if [ ! -x "./$t" ]; then
		ok 1 "$t: not built"
		continue
	fi
	out=/tmp/fos-softirq-$t.out
	"./$t" > "$out" 2>&1
	st=$?
	grep -E '^(not ok|# Totals)' "$out" | sed "s/^/# $t: /"
	ok $st "$t passes with completions in softirq"
	rm -f "$out"
done
after=$(irq_poll)
[ "$after" -gt "$before" ]
ok $? "IRQ_POLL softirqs ran: $before -> $after"
echo "$old" > $p
trap - EXIT
[ "$failed" = 0 ]
