#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# chain3 (3 nodes): tools/fractos-chain across nodes.  Node 2 serves stages
# 1 and 3, node 3 stage 2 (fractos-chain -S); node 1 is the client
# (fractos-chain -R 2,3,2), which builds the chain of continuations once
# and times it against the star, with every continuation derived at the
# owner of its stage (FRACTOS_CREATE_AT_OWNER) and, for comparison, here
# (-F: each hop of the chain forwarded through node 1).  Every node counts
# the remote-layer messages it sends around each run.  Checked: the values
# (the client checks each result), N + 1 = 4 INVOKEs a chain at the
# owners against 2N = 6 for the star (each with its ACK: 8 and 12
# messages, on all three nodes together), the forwarded chain's extra
# hops, and that nothing is left.  Times are printed, not checked.
# timeout: 600
. ./lib.sh

chain=../../tools/fractos-chain
fctl=../../tools/fractctl
n=${CHAIN3_N:-300}
w=20
runs="owner-chain owner-star here-chain here-star"

[ "$nodes" = 3 ] || { echo "Bail out! chain3 needs 3 nodes"; exit 1; }
for i in 1 2 3; do [ "$i" = "$me" ] || add_peer "$i"; done
for i in 1 2 3; do [ "$i" = "$me" ] || wait_up "$i" 60; done

# msgs: the remote-layer messages this node sent to its peers so far
msgs() {
	$fctl -j node list -s | python3 -c '
import json, sys
print(sum(n["stats"]["tx_remote_msgs"] for n in json.load(sys.stdin)
	  if n["id"] != int(sys.argv[1])))' "$me"
}

pid=""
case $me in
2) $chain -S 1,3 > /tmp/chain3.serve 2>&1 & pid=$! ;;
3) $chain -S 2 > /tmp/chain3.serve 2>&1 & pid=$! ;;
esac
barrier served - 60 >/dev/null

for r in $runs; do
	eval "$(barrier "pre-$r" "$(msgs)" 120)"
	pre=$((N1 + N2 + N3))
	if [ "$me" = 1 ]; then
		shape=${r#*-}
		flags="-k -s $shape"
		[ "${r%-*}" = here ] && flags="$flags -F"
		# shellcheck disable=SC2086
		$chain -R 2,3,2 $flags -n "$n" -w "$w" > "/tmp/chain3.$r" 2>&1
		ok $? "node 1: $r: $n iterations, every result right" ||
			sed 's/^/# /' "/tmp/chain3.$r"
		grep -E "^  (chain|star) " "/tmp/chain3.$r" | sed 's/^/# /'
	fi
	# every node counts once node 1's run is over (and the drops of
	# this run's capabilities, if any, have gone)
	barrier "ran-$r" - 300 >/dev/null
	sleep 1
	eval "$(barrier "post-$r" "$(msgs)" 120)"
	[ "$me" = 1 ] && echo "$r $((N1 + N2 + N3 - pre))" >> /tmp/chain3.msgs
done

if [ "$me" = 1 ]; then
	$chain -R 2,3,2 -X > /tmp/chain3.stop 2>&1
	ok $? "node 1: the stages are told to stop"
	# messages per iteration, all nodes together
	per() {
		awk -v r="$1" -v it=$((n + w)) '$1 == r { printf "%.2f", $2 / it }' \
			/tmp/chain3.msgs
	}
	oc=$(per owner-chain)
	os=$(per owner-star)
	hc=$(per here-chain)
	hs=$(per here-star)
	diag "messages per iteration (all nodes): chain $oc, star $os at the owners; chain $hc, star $hs derived here"
	python3 -c "import sys; sys.exit(not (7.9 <= $oc <= 8.5))"
	ok $? "node 1: a chain derived at the owners: $oc messages an iteration (4 INVOKEs, 4 ACKs)"
	python3 -c "import sys; sys.exit(not (11.9 <= $os <= 12.5))"
	ok $? "node 1: the star: $os messages an iteration (6 INVOKEs, 6 ACKs)"
	python3 -c "import sys; sys.exit(not ($hc >= 11.9))"
	ok $? "node 1: derived here the chain takes $hc (each hop forwarded through node 1)"
	python3 -c "import sys; sys.exit(not ($os >= 1.45 * $oc))"
	ok $? "node 1: the star sends $os / $oc = $(python3 -c "print('%.2f' % ($os / $oc))")x the chain's messages (2N / (N + 1))"
	rm -f /tmp/chain3.msgs
else
	wait "$pid"
	ok $? "node $me: its stages stopped ($(tr '\n' ' ' < /tmp/chain3.serve))"
fi
rm -f /tmp/chain3.*
barrier done - 120 >/dev/null
left=$(left_but_fabric 10)
[ -z "$left" ]
ok $? "node $me: nothing left but the fabric$left"
finish
