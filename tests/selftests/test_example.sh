#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: the starter example of Documentation/providers.rst
# ("Your first service", lib/examples/): hello-service publishes its Request, and
# hello-client looks it up, invokes it with a text and a continuation, and
# prints the answer that comes back through the continuation; then the
# client stops the service, and its name goes with it.  Also: a client of
# a name nobody published fails with ENOENT.  Then the key-value example
# (lib/examples/kv-*): a primary killed by SIGKILL, whose table the standby
# takes over by steal, and one that steps down and grants it.  Prints TAP.
cd "$(dirname "$0")" || exit 1
ex=../../lib/examples
# shellcheck source-path=SCRIPTDIR
. ./tap.sh
echo "TAP version 13"
if [ ! -x $ex/hello-service ] || [ ! -x $ex/hello-client ]; then
	echo "1..0 # SKIP lib/examples not built (make userspace)"
	exit 0
fi
tmp=$(mktemp -d /tmp/fos-example.XXXXXX)
svc=
cleanup() { [ -n "$svc" ] && kill -9 "$svc" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

$ex/hello-service hello-test > "$tmp/svc.out" 2>&1 &
svc=$!
i=0
until grep -q serving "$tmp/svc.out" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
grep -q 'serving as "hello-test"' "$tmp/svc.out"; ok $? "hello-service publishes its Request"

out=$($ex/hello-client "hello, world" hello-test 2>&1)
[ "$out" = "HELLO, WORLD" ]; ok $? "hello-client gets the answer through its continuation ($out)"
out=$($ex/hello-client "second call" hello-test 2>&1)
[ "$out" = "SECOND CALL" ]; ok $? "and again ($out)"

out=$($ex/hello-client "x" no-such-service 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "No such file"; ok $? "a name nobody published: ENOENT ($out)"

$ex/hello-client --stop hello-test
ok $? "hello-client --stop"
i=0
while kill -0 "$svc" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
wait "$svc"; rc=$?
svc=
[ "$rc" = 0 ]; ok $? "the service stops when asked, exit $rc"

out=$($ex/hello-client "x" hello-test 2>&1)
[ $? = 1 ]; ok $? "its name is gone with it ($out)"

# kv_round HOW: a standby, a primary that fills its table and ends by HOW
# (crash or handover); the standby prints the keys it took over.
kv_round() {
	$ex/kv-standby kv-test > "$tmp/kv.out" 2>&1 &
	svc=$!
	i=0
	until grep -q waiting "$tmp/kv.out" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
	$ex/kv-primary kv-test "$1" alpha=1 beta=two "gamma=3 3" > "$tmp/kvp.out" 2>&1
	prc=$?
	i=0
	while kill -0 "$svc" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	wait "$svc"; src=$?
	svc=
}
if [ -x $ex/kv-standby ] && [ -x $ex/kv-primary ]; then
	kv_round crash
	[ "$prc" = 137 ] && [ "$src" = 0 ] &&
		grep -q 'the primary is gone (killed, signal 9)' "$tmp/kv.out" &&
		grep -q 'took the table over by steal: 3 keys' "$tmp/kv.out" &&
		grep -q 'kv-standby:   gamma=3 3' "$tmp/kv.out"
	r=$?
	ok $r "kv: the primary killed, the standby maps its stolen table (3 keys)"
	[ $r = 0 ] || sed 's/^/# /' "$tmp/kv.out" "$tmp/kvp.out"
	kv_round handover
	[ "$prc" = 0 ] && [ "$src" = 0 ] &&
		grep -q 'took the table over by grant: 3 keys' "$tmp/kv.out" &&
		grep -q 'kv-standby:   beta=two' "$tmp/kv.out" &&
		! grep -q 'the primary is gone' "$tmp/kv.out"
	r=$?
	ok $r "kv: the primary steps down, the standby maps the granted table"
	[ $r = 0 ] || sed 's/^/# /' "$tmp/kv.out" "$tmp/kvp.out"
fi

echo "1..$n"
[ "$failed" = 0 ]
