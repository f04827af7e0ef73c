#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/tally.sh LOG RC: the one total line of a test run (make check,
# .ci/run), "N passed, N failed", after what failed when RC is not 0.
# Guest suites print "# fractos: N passed, N failed" (programs; the
# multi-node suite's sum, unprefixed); the host unit tests print gtest's
# "[  PASSED  ] N tests" / "[  FAILED  ] N tests".  A failure outside the
# counted tests (a build, a static check, a guest that died) counts as one.
set -u
log=$1 rc=${2:-0}

read -r p f < <(awk '
	/^# fractos: [0-9]+ passed, [0-9]+ failed/ { p += $3; f += $5 }
	/^\[  PASSED  \] [0-9]+ test/ { p += $4 }
	/^\[  FAILED  \] [0-9]+ test/ { f += $4 }
	END { print p + 0, f + 0 }' "$log")
# What failed, again at the end: only the tail of a CI log may be kept.
if [ "$rc" != 0 ]; then
	echo "=== failures"
	# the context first (node diagnostics, kernel lines, who exited),
	# then the failed checks themselves, last, so that a summary cut in
	# the middle still shows them, each under the stage it ran in (the
	# last "=== " line before it).  Indented, so that a tally of a log
	# that holds this one (.ci/run's holds make check's) counts nothing
	# twice.
	{
		grep -E '^(\[n[0-9]+\] )?# node [0-9]+: |^# kernel n[0-9]+|vm/run: |Bail out|exited [1-9]|\*\*\* ' "$log" |
			grep -v -e "asked '" -E -e 'fractos-membershipd: (node [0-9]+ (added|deleted)|registered|ignoring a malformed|left: )' |
			tail -n 40
		echo "=== the failed checks"
		awk '/^=== / { stage = $0; next }
		     /^(\[n[0-9]+\] )?not ok / && !/# TODO/ {
			if (stage != shown) { print stage; shown = stage }
			print }' "$log" | tail -n 24
	} | sed 's/^/  /'
	[ "$f" = 0 ] && f=1
fi
echo "$p passed, $f failed"
