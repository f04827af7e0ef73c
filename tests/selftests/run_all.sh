#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run every fractos selftest in the guest (vm/run loads the module first).
# Programs: every executable built from a *.c/*.cpp here, then every
# test_*.sh script.  Prints each program's TAP output, one summary line per
# program (and the seconds it took) and, last, "# fractos: N passed, N failed" (programs).
# Usage: run_all.sh [NAME...]    (default: all)
# Environment: TEST_TIMEOUT (seconds per program, else its "# timeout:"
# line or 300), FOS_TEST_ARGS_<name> (arguments for one program).
cd "$(dirname "$0")" || exit 1

live=/sys/class/misc/fractos/live
pass=0
fail=0
failed=""

if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=""
	for c in *.c *.cpp; do
		[ -e "$c" ] || continue
		# a source without main() is linked into tests (wirepeer.c)
		grep -q '^int main' "$c" || continue
		tests="$tests ${c%.*}"
	done
	for s in test_*.sh; do
		[ -e "$s" ] && tests="$tests $s"
	done
fi

for t in $tests; do
	echo "# ---- $t"
	if [ ! -x "./$t" ]; then
		echo "# $t: not built"
		fail=$((fail + 1)); failed="$failed $t"
		continue
	fi
	# A test may ask for more time with a "# timeout: SECONDS" line.
	to=$(sed -n 's/^# timeout: \([0-9][0-9]*\)$/\1/p' "./$t" 2>/dev/null | head -n 1)
	# FOS_TEST_ARGS_<name> (non-alphanumerics as _) gives it arguments,
	# e.g. FOS_TEST_ARGS_exitrace="-i 50" (the debug stage scales down).
	var=FOS_TEST_ARGS_$(printf %s "$t" | tr -c 'A-Za-z0-9_' _)
	eval "args=\${$var:-}"
	# shellcheck disable=SC2086  # word splitting of the arguments is meant
	t0=$(date +%s)
	timeout "${TEST_TIMEOUT:-${to:-300}}" "./$t" $args
	rc=$?
	echo "# $t took $(( $(date +%s) - t0 )) s"
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "# PASS $t"
	else
		fail=$((fail + 1)); failed="$failed $t"
		echo "# FAIL $t (exit $rc)"
	fi
done

# Nothing may outlive the tests: every live-object counter must be zero,
# within 5 s (kept regions are released once idle for copy_cache_ms, their
# grants when the RELEASE arrives; objects are freed after a grace period).
if [ -d "$live" ]; then
	i=0
	while :; do
		bad=""
		for f in "$live"/*; do
			v=$(cat "$f")
			[ "$v" = 0 ] || bad="$bad $(basename "$f")=$v"
		done
		[ -z "$bad" ] || [ $i -ge 50 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$bad" ]; then
		pass=$((pass + 1)); echo "# PASS live-objects-zero"
	else
		fail=$((fail + 1)); failed="$failed live-objects-zero"
		echo "# FAIL live-objects-zero:$bad"
	fi
fi

[ -n "$failed" ] && echo "# failed:$failed"
echo "# fractos: $pass passed, $fail failed"
[ $fail -eq 0 ]
