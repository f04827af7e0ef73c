#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: the fabric with its completions polled in softirq
# (fabric_rx_softirq=1, "Receiving in softirq" in kernel/fabric/rx.c),
# and in a work item (0), whatever the default (-1) picks for rxe0 on
# this kernel.  Runs the programs that drive the node's connection to
# itself hardest - fabric (flow control over 4 credits, flaps, teardown),
# remote (every remote operation) and hostile (a peer that lies) - with it
# on, each on connections made after it was set, and remote with it off.
# Checks: each passes; the kernel's IRQ_POLL softirq ran with it on (the
# CQs were polled there: nothing else in the guest uses irq_poll) and not
# with it off; values other than -1, 0 and 1 (and N, Y) are refused; the
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
echo "1..8"
old=$(cat $p)
trap 'echo "$old" > $p' EXIT
echo 1 > $p
[ "$(cat $p)" = 1 ]
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

# Only -1, 0 and 1 are taken (and N, Y: it was a bool), and a refused
# write changes nothing.
bad=
for v in 2 -2 maybe ""; do
	echo "$v" 2>/dev/null > $p && bad="$bad '$v'"
done
[ -z "$bad" ] && [ "$(cat $p)" = 1 ] && echo N > $p && [ "$(cat $p)" = 0 ] &&
	echo Y > $p && [ "$(cat $p)" = 1 ]
ok $? "fabric_rx_softirq refuses 2, -2, maybe and nothing${bad:+ (took$bad)}; N is 0, Y is 1"

# 0: the connections' completions run in a work item; nothing polls in
# softirq, whatever the device.
echo 0 > $p
before=$(irq_poll)
st=1
if [ -x ./remote ]; then
	./remote > /tmp/fos-softirq-remote0.out 2>&1
	st=$?
	grep -E '^(not ok|# Totals)' /tmp/fos-softirq-remote0.out | sed "s/^/# remote: /"
	rm -f /tmp/fos-softirq-remote0.out
fi
after=$(irq_poll)
ok $st "remote passes with completions in a work item"
[ "$after" = "$before" ]
ok $? "no IRQ_POLL softirq with fabric_rx_softirq=0: $before -> $after"
echo "$old" > $p
trap - EXIT
[ "$failed" = 0 ]
