# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by the host tests of tools/tests/: a temporary directory ($tmp,
# removed on exit) and check(), which prints one TAP line; the test ends
# with tap_end.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0

check() { # NAME COND...
	name=$1; shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		fail=$((fail + 1))
	fi
}

# The plan, and the exit status: 0 when every check passed.
tap_end() {
	echo "1..$n"
	[ "$fail" = 0 ]
}
