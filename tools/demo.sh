#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fractos demo, run by "make demo" in the guest (repository root as the
# working directory, module loaded).  The programs are built on the host
# ("make -C tools"): the guest sees the tree read-only.
#
#   a-c  fractos-demo: processes sharing a Memory view over an fd
#        (SCM_RIGHTS), a third-party copy, a revocation seen by the other
#        process, and a space's death revoking what it created.
#   d    fractos-chain: a 3-stage pipeline over four processes, built with
#        continuations (chain) and mediated by the client (star).
#
# Usage: tools/demo.sh [-n ITERATIONS]    (default 1000 pipeline iterations)
set -u
cd "$(dirname "$0")" || exit 1

iters=1000
if [ "${1:-}" = "-n" ] && [ -n "${2:-}" ]; then
	iters=$2
fi

for p in fractctl fractos-demo fractos-chain; do
	if [ ! -x "./$p" ]; then
		echo "demo.sh: tools/$p is not built: run \"make -C tools\" on the host first" >&2
		exit 1
	fi
done
if [ ! -e /dev/fractos ]; then
	echo "demo.sh: /dev/fractos does not exist: load the module first" >&2
	exit 1
fi

rc=0
echo "=== the fractos module"
./fractctl status || rc=1

echo
echo "=== (a-c) sharing, third-party copy and revocation between processes"
./fractos-demo || rc=1

echo
echo "=== (d) chain vs star: a 3-stage pipeline across four processes"
echo "The client builds the chain once from continuations; the stages then"
echo "pass each request along themselves.  In the star, the client gets every"
echo "intermediate result back and forwards it to the next stage."
./fractos-chain -n "$iters" || rc=1

echo
echo "=== afterwards: nothing is left alive"
./fractctl status | sed -n '/^live/,$p'
if [ $rc = 0 ]; then
	echo "demo: every part behaved as expected"
else
	echo "demo: FAILED"
fi
exit $rc
