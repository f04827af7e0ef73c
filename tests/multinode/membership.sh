#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# membership (3 nodes): the node list from etcd (fractos-membershipd).
# Node 1 runs etcd (Debian's etcd-server, unpacked by vm/install-deps);
# every node runs fractos-membershipd with a 4 s lease and no node
# configured by hand.  Checked:
#  - the three nodes join through etcd: each adds the others, all come UP;
#  - node 3 dies (its daemon SIGKILLed, its module unloaded): nodes 1 and
#    2 drop it when its lease expires, within two lease times;
#  - node 3 comes back (module loaded again: a new epoch, daemon started):
#    1 and 2 add it again and see it UP with its new epoch;
#  - node 2 leaves (SIGTERM: its lease revoked): 1 and 3 drop it at once;
#  - a malformed entry under the prefix is ignored.
. ./lib.sh
etcd_bin=${FRACTOS_ETCD:-/var/cache/fractos/etcd/usr/bin/etcd}
msd=../../tools/fractos-membershipd
ep=http://$(addr_of 1):2379
ttl=4
pid=
epid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	[ -n "$epid" ] && kill "$epid" 2>/dev/null
	rm -rf /tmp/etcd-test
}
trap cleanup EXIT

# present ID: node ID is configured here
present() { fosnet get "$1" state >/dev/null 2>&1; }
# wait_until SECS CMD...: poll CMD every 100 ms; prints the seconds taken
wait_until() {
	local t0 end
	t0=$(ms)
	end=$((t0 + $1 * 1000))
	shift
	while ! "$@"; do
		[ "$(ms)" -ge "$end" ] && { echo "timeout"; return 1; }
		sleep 0.1
	done
	echo "$(( ($(ms) - t0) / 100 ))" | sed 's/\(.\)$/.\1/'
}
not() { ! "$@"; }
start_msd() {
	"$msd" -a "$(addr_of "$me")" -e "$ep" -t $ttl >> /tmp/msd-$me.log 2>&1 &
	pid=$!
}

if [ ! -x "$etcd_bin" ] || [ ! -x "$msd" ]; then
	diag "no etcd ($etcd_bin: vm/install-deps) or no $msd (make userspace)"
	ok 1 "node $me: etcd and fractos-membershipd are there"
	finish
fi

if [ "$me" = 1 ]; then
	rm -rf /tmp/etcd-test
	"$etcd_bin" --data-dir /tmp/etcd-test --name n1 \
		--listen-client-urls "$ep" --advertise-client-urls "$ep" \
		--listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster n1=http://127.0.0.1:2380 > /tmp/etcd.log 2>&1 &
	epid=$!
	t=$(wait_until 60 curl -sf -X POST "$ep/v3/kv/range" -d '{"key":"AA=="}' -o /dev/null)
	ok $? "node 1: etcd serves at $ep (after $t s)" || tail -n 20 /tmp/etcd.log
	# an entry that is no node: ignored by every daemon
	curl -sf -X POST "$ep/v3/kv/put" -o /dev/null \
		-d "{\"key\":\"$(printf /fractos/nodes/9 | base64)\",\"value\":\"$(printf 'not json' | base64)\"}"
	ok $? "node 1: a malformed entry under the prefix"
fi
barrier etcd-up - 120 >/dev/null

del_all
start_msd
for i in $(seq 1 "$nodes"); do
	[ "$i" = "$me" ] && continue
	t=$(wait_until 60 present "$i")
	ok $? "node $me: node $i joined through etcd (after $t s)"
	wait_up "$i" 60
done
not present 9; ok $? "node $me: the malformed entry was not added"
eval "$(barrier joined "$(cat $PARAMS/epoch)")"
old3=$N3

# node 3 dies: its daemon and its module go
if [ "$me" = 3 ]; then
	kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
	rmmod fractos
	ok $? "node 3: fractos-membershipd killed, module unloaded"
fi
barrier killed >/dev/null
if [ "$me" != 3 ]; then
	t=$(wait_until $((2 * ttl + 4)) not present 3)
	ok $? "node $me: node 3 dropped when its lease expired (after $t s, lease $ttl s)"
fi
barrier dropped >/dev/null

# node 3 comes back with a new epoch
if [ "$me" = 3 ]; then
	insmod "$FRACTOS_KO" node_id=3 && set_secret
	ok $? "node 3: module loaded again (epoch $N3 -> $(cat $PARAMS/epoch))"
	start_msd
fi
eval "$(barrier back "$(cat $PARAMS/epoch)")"
if [ "$me" != 3 ]; then
	[ "$N3" != "$old3" ]; ok $? "node $me: node 3 has a new epoch ($old3 -> $N3)"
	t=$(wait_until 60 present 3)
	ok $? "node $me: node 3 added again (after $t s)"
	wait_up 3 60 "$N3"
else
	for i in 1 2; do
		t=$(wait_until 60 present "$i")
		ok $? "node 3: node $i added again (after $t s)"
		wait_up "$i" 60
	done
fi
barrier rejoined >/dev/null

# node 2 leaves cleanly: its lease is revoked, the others drop it at once
if [ "$me" = 2 ]; then
	kill -TERM "$pid"; wait "$pid"
	ok $? "node 2: fractos-membershipd stops on SIGTERM"
	pid=
	grep -q "lease .* revoked" /tmp/msd-2.log; ok $? "node 2: its lease revoked"
fi
barrier left >/dev/null
if [ "$me" != 2 ]; then
	t=$(wait_until 2 not present 2)
	ok $? "node $me: node 2 dropped at once when it left (after $t s)"
fi
barrier done >/dev/null

[ -n "$pid" ] && { kill -TERM "$pid"; wait "$pid"; pid=; }
if [ "$me" = 1 ]; then
	kill "$epid"; wait "$epid" 2>/dev/null; epid=
fi
sed "s/^/# node $me: /" /tmp/msd-$me.log | tail -n 12
finish
