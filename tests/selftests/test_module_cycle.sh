#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 1200
#
# fractos selftest: unload and reload the module CYCLES times (default 50).
#
# Before cycling, rmmod must be refused while a space is open, whether the
# fd is held by this shell or by another process.  Every cycle checks that
# rmmod works with nothing open and removes /dev/fractos and
# /sys/module/fractos, that insmod brings /dev/fractos back with a new
# epoch and all live counters zero, and (every 10th cycle) that a space
# opened on the fresh module blocks rmmod again.  The module is left
# loaded.  The .ko comes from $FRACTOS_KO (set by vm/run).  Prints TAP.
cd "$(dirname "$0")" || exit 1

CYCLES=${CYCLES:-50}
ko=${FRACTOS_KO:-${FRACTOS_KO_LOAD:-}}
[ -n "$ko" ] || ko=../../build/$(uname -r)/kernel/fractos.ko
dev=/dev/fractos
live=/sys/class/misc/fractos/live
epochf=/sys/module/fractos/parameters/epoch

# shellcheck source-path=SCRIPTDIR
. ./tap.sh
diag() { echo "# $*"; }

loaded() { grep -q '^fractos ' /proc/modules; }

# Wait up to 2 s for PATH to exist (yes) or to be gone (no).
wait_path() {
	i=0
	while [ $i -lt 40 ]; do
		if [ "$2" = yes ]; then [ -e "$1" ] && return 0
		else [ -e "$1" ] || return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

counters_zero_now() {
	for f in "$live"/*; do
		[ "$(cat "$f")" = 0 ] || { [ -n "${1:-}" ] && diag "$(basename "$f")=$(cat "$f")"; return 1; }
	done
	return 0
}

# The counters reach zero within 10 s: what the tests before us released
# goes asynchronously (a deleted node's DOWN work, connection teardown).
counters_zero() {
	zi=0
	while ! counters_zero_now && [ $zi -lt 200 ]; do
		sleep 0.05
		zi=$((zi + 1))
	done
	counters_zero_now diag
}

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -f "$ko" ] || ! loaded; then
	echo "1..0 # SKIP needs root, the module loaded and its .ko ($ko)"
	exit 0
fi
echo "1..$((CYCLES + 8))"
diag "module $ko, $CYCLES cycles"

counters_zero
ok $? "nothing in use before cycling"

# A space held by this shell blocks rmmod.
exec 3<>"$dev"
out=$(rmmod fractos 2>&1)
rc=$?
loaded && [ -c "$dev" ] && [ $rc != 0 ]
ok $? "rmmod refused while this shell holds a space (rc $rc: $out)"
exec 3>&-

# A space held by another process blocks rmmod.
fifo=$(mktemp -u /tmp/fos-cycle.XXXXXX)
mkfifo "$fifo" || exit 1
( exec 3<>"$dev"; echo open > "$fifo"; exec sleep 600 ) &
holder=$!
read -r _ < "$fifo"
rmmod fractos 2>/dev/null
rc=$?
loaded && [ $rc != 0 ]
ok $? "rmmod refused while another process holds a space (rc $rc)"
kill "$holder"
wait "$holder" 2>/dev/null
rm -f "$fifo"
wait_path /proc/$holder no
i=0
while [ "$(cat $live/spaces)" != 0 ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
counters_zero
ok $? "the holder's space is gone once it is killed"

# Load from tmpfs, not from the 9p-mounted tree.
tko=$(mktemp /tmp/fos-cycle.XXXXXX.ko) && cp "$ko" "$tko" && ko=$tko

prev=$(cat "$epochf")
start=$(date +%s)
c=1
while [ $c -le "$CYCLES" ]; do
	why=""
	t0=$(date +%s.%N)
	if ! out=$(rmmod fractos 2>&1); then
		why="$why rmmod failed ($out);"
	else
		wait_path "$dev" no || why="$why $dev still there;"
		[ -e /sys/module/fractos ] && why="$why /sys/module/fractos still there;"
	fi
	t1=$(date +%s.%N)
	if ! out=$(insmod "$ko" 2>&1); then
		why="$why insmod failed ($out);"
	else
		wait_path "$dev" yes || why="$why no $dev;"
		[ -c "$dev" ] || why="$why $dev is not a char device;"
		ep=$(cat "$epochf")
		[ "$ep" != "$prev" ] && [ "$ep" != 0 ] ||
			why="$why epoch $ep not new (was $prev);"
		prev=$ep
		counters_zero || why="$why counters not zero;"
		if [ $((c % 10)) = 0 ]; then
			exec 3<>"$dev" || why="$why open failed;"
			[ "$(cat $live/spaces)" = 1 ] || why="$why spaces != 1;"
			rmmod fractos 2>/dev/null && why="$why rmmod with a space open;"
			exec 3>&-
		fi
	fi
	t2=$(date +%s.%N)
	[ "$c" = 1 ] && diag "cycle 1: rmmod $(echo "$t1 - $t0" | bc 2>/dev/null) s, insmod $(echo "$t2 - $t1" | bc 2>/dev/null) s"
	[ -z "$why" ]
	ok $? "cycle $c${why:+:$why}"
	if ! loaded; then
		insmod "$ko" 2>/dev/null	# keep going with a loaded module
	fi
	c=$((c + 1))
done
diag "$CYCLES cycles in $(( $(date +%s) - start )) s"
[ "$ko" = "${tko:-}" ] && rm -f "$tko"

loaded && [ -c "$dev" ]
ok $? "the module is left loaded"
exec 3<>"$dev"
rc=$?
[ $rc = 0 ] && [ "$(cat $live/spaces)" = 1 ]
ok $? "the reloaded module works (open a space)"
exec 3>&-
[ "$(cat /sys/module/fractos/parameters/max_caps)" = 1048576 ]
ok $? "parameters are back to their defaults after reload"

# A reloaded module has no secret (it admits nobody); the tests after this
# one find the run's secret again, as vm/run's guest-init set it.
fractctl=../../tools/fractctl
if [ -x $fractctl ]; then
	[ "$($fractctl secret)" = "none (no secret: every node is refused)" ] &&
		{ [ -z "${FRACTOS_SECRET:-}" ] || $fractctl secret set "$FRACTOS_SECRET"; }
	ok $? "a reloaded module has no secret; the run's is set again"
else
	ok 0 "# SKIP tools/fractctl is not built"
fi

echo "# Totals: pass:$((n - failed)) fail:$failed skip:0"
[ $failed = 0 ]
