#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fuzz (2 nodes): both nodes run the uAPI fuzzer at the same time, each
# with --peer set to the other, for FUZZ_DURATION seconds (60): their
# programs look names up on the other node and invoke, copy, revoke and
# forward each other's objects through proxies, while workers and their
# children are killed.  Each fuzzer checks its own invariants (documented
# errnos, no splat, what is its own back to zero after each program); once
# both are done, every live counter but the configured peer and its
# connection must be back to zero on both nodes.
. ./lib.sh
other=$((3 - me))
dur=${FUZZ_DURATION:-60}

add_peer $other
wait_up $other 30
barrier ready >/dev/null
../fuzz/fosfuzz --peer $other --duration "$dur" --out "${FRACTOS_SAVE:-/tmp}" \
	--seed "$(( $(date +%s) * 10 + me ))" > /tmp/fuzz.$$ 2>&1
rc=$?
# what is not an ok line, as "# node N: " lines: a CI summary keeps those
grep -v -e '^ok ' -e 'per op, succeeded' /tmp/fuzz.$$ | head -n 40 | sed "s/^/# node $me: /"
ok $rc "node $me: fosfuzz --peer $other for ${dur}s: $(grep -c '^ok ' /tmp/fuzz.$$) checks passed"
barrier fuzzed >/dev/null
left=$(left_but_fabric 30)
[ -z "$left" ]
ok $? "node $me: every counter back to zero once both fuzzers are done${left:+ (left:$left)}"
barrier checked >/dev/null
del_all
finish
