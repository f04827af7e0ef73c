# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The TAP helper of the test_*.sh selftests, sourced after they cd to
# their directory (". ./tap.sh").  ok STATUS NAME... prints one TAP line,
# numbered in $n; STATUS 0 passes, anything else counts in $failed.  A
# failure also shows, as comments, what a script left of a command's
# output in $tmp/err and $tmp/out (when it set $tmp).  A script ends with
# [ "$failed" = 0 ] and prints its plan itself (1..N, before or after).
n=0
failed=0
ok() {	# ok STATUS NAME...
	st=$1; shift
	n=$((n + 1))
	if [ "$st" = 0 ]; then
		echo "ok $n - $*"
		return 0
	fi
	echo "not ok $n - $*"
	failed=$((failed + 1))
	if [ -n "${tmp:-}" ]; then
		[ -s "$tmp/err" ] && sed 's/^/# stderr: /' "$tmp/err"
		[ -s "$tmp/out" ] && sed 's/^/# stdout: /' "$tmp/out"
	fi
	return 0
}
