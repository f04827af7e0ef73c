#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: the starter example of Documentation/providers.rst
# ("Your first service", lib/examples/): hello-service publishes its Request, and
# hello-client looks it up, invokes it with a text and a continuation, and
# prints the answer that comes back through the continuation; then the
# client stops the service, and its name goes with it.  Also: a client of
# a name nobody published fails with ENOENT.  Prints TAP.
cd "$(dirname "$0")" || exit 1
ex=../../lib/examples
n=0
failed=0
ok() {	# ok STATUS NAME...
	st=$1; shift
	n=$((n + 1))
	if [ "$st" = 0 ]; then echo "ok $n - $*"; else echo "not ok $n - $*"; failed=$((failed + 1)); fi
}
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

echo "1..$n"
[ "$failed" = 0 ]
