#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host test of fractctl against fake sysfs trees (FRACTCTL_ROOT moves
# /sys/... and /dev/fractos under a temporary directory).  No module needed.
# Usage: fractctl-test.sh [PATH-TO-FRACTCTL]
set -u
fractctl=$(realpath "${1:-./fractctl}")
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

run() { # ROOT ARGS... -> $out $err $rc
	root=$1; shift
	FRACTCTL_ROOT=$root "$fractctl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

has() { printf '%s\n' "$1" | grep -q -- "$2"; }

# A loaded module: version, parameters and the live counters.
loaded=$tmp/loaded
mkdir -p "$loaded/sys/module/fractos/parameters" "$loaded/sys/class/misc/fractos/live"
echo 0.3.0 >"$loaded/sys/module/fractos/version"
for p in max_caps:1048576 node_id:7 epoch:12345 max_queue:1024 max_pin_bytes:68719476736; do
	echo "${p#*:}" >"$loaded/sys/module/fractos/parameters/${p%%:*}"
done
i=1
for c in spaces objects caps memories pinned_pages capfds requests messages; do
	echo $i >"$loaded/sys/class/misc/fractos/live/$c"
	i=$((i + 1))
done

run "$loaded" status
check "status: device missing under the fake root is an error (exit 1)" [ "$rc" = 1 ]
check "status: says the module is loaded" has "$out" "^module *loaded"
check "status: version from /sys/module/fractos/version" has "$out" "^version *0.3.0"
check "status: node and epoch fall back on the parameters" has "$out" "^node *7"
check "status: every parameter is listed" has "$out" "^  max_queue *1024"
check "status: live counters" has "$out" "^  caps *3"
check "status: requests and messages counters" has "$out" "^  messages *8"
check "status: the device error is reported on stderr" has "$err" "device: ENOENT"

run "$loaded" -j status
check "-j status: exit 1 as above" [ "$rc" = 1 ]
check "-j status: one JSON object" has "$out" '^{"loaded":true,'
check "-j status: version string" has "$out" '"version":"0.3.0"'
check "-j status: params as numbers" has "$out" '"params":{"epoch":12345,"max_caps":1048576,"max_pin_bytes":68719476736,"max_queue":1024,"node_id":7}'
check "-j status: live counters" has "$out" '"live":{"spaces":1,"objects":2,"caps":3,"memories":4,"pinned_pages":5,"capfds":6,"requests":7,"messages":8}'
if command -v python3 >/dev/null; then
	check "-j status: valid JSON" sh -c "printf '%s' '$out' | python3 -m json.tool >/dev/null"
fi

run "$loaded" -json st
check "-json and a command prefix work (iproute2 style)" has "$out" '"loaded":true'

# No module.
run "$tmp/empty" status
check "no module: exit 2" [ "$rc" = 2 ]
check "no module: says so on stdout" has "$out" "^module *not loaded"
check "no module: explains on stderr" has "$err" "fractos module is not loaded"
run "$tmp/empty" -j status
check "no module, -j: {\"loaded\":false}" [ "$out" = '{"loaded":false}' ]

# A broken counter is reported, the rest still printed.
echo garbage >"$loaded/sys/class/misc/fractos/live/caps"
run "$loaded" status
check "bad counter: exit 1 with EINVAL" sh -c "[ $rc = 1 ] && printf '%s' '$err' | grep -q 'live: EINVAL'"

# Options.
run "$loaded" -V
check "-V prints the version" sh -c "[ $rc = 0 ] && printf '%s' '$out' | grep -q 'libcaladan'"
run "$loaded" -x
check "unknown option: exit 1" sh -c "[ $rc = 1 ] && printf '%s' '$err' | grep -q 'unknown'"
run "$loaded" frobnicate
check "unknown command: exit 1" [ "$rc" = 1 ]
run "$loaded" status extra
check "extra argument: exit 1" [ "$rc" = 1 ]
run "$loaded" help
check "help: exit 0, usage" sh -c "[ $rc = 0 ] && printf '%s' '$out' | grep -q Usage"

echo "1..$n"
[ "$fail" = 0 ]
