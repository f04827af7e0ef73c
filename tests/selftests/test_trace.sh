#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fractos selftest: the tracepoints (kernel/fabric/fos_trace.h).  With the
# fractos events enabled in tracefs, the node admits itself (fos_conn_state
# up, on both ends of its connection to itself), pings (fos_msg_tx and
# fos_msg_rx of the PING and of its PONG, all four with the ping's cookie),
# and is deleted (fos_conn_state down).  Prints TAP.
cd "$(dirname "$0")" || exit 1

fractctl=$(realpath ../../tools/fractctl 2>/dev/null)
params=/sys/module/fractos/parameters
# shellcheck source-path=SCRIPTDIR
. ./tap.sh

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -d /sys/class/misc/fractos ] || [ ! -x "$fractctl" ]; then
	echo "1..0 # SKIP needs root, the module loaded and tools/fractctl"
	exit 0
fi
tr=/sys/kernel/tracing
[ -d $tr/events ] || mount -t tracefs tracefs $tr 2>/dev/null
addr=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
if [ ! -d $tr/events/fractos ] || [ -z "$addr" ]; then
	echo "1..0 # SKIP no tracefs events for fractos, or no eth0 address"
	exit 0
fi
echo "1..6"
id=$(cat $params/node_id)
cleanup() {
	echo 0 > $tr/events/fractos/enable
	"$fractctl" node del "$id" >/dev/null 2>&1
}
trap cleanup EXIT

: > $tr/trace
echo 1 > $tr/events/fractos/enable
ok $? "enable the fractos events"
"$fractctl" node add "$id" "$addr" >/dev/null
i=0
while [ $i -lt 300 ] && ! "$fractctl" node show "$id" | grep -q " up "; do
	sleep 0.1; i=$((i + 1))
done
"$fractctl" ping "$id" -c 3 >/dev/null
ok $? "node $id comes up and pings itself"
"$fractctl" node del "$id" >/dev/null
sleep 1
t=$(cat $tr/trace)
[ "$(printf '%s\n' "$t" | grep -c "fos_conn_state: node=$id .* up ")" -ge 2 ]
ok $? "fos_conn_state: up, for both ends of the connection"
printf '%s\n' "$t" | grep -q "fos_conn_state: node=$id .* down "
ok $? "fos_conn_state: down after node del"
c=$(printf '%s\n' "$t" |
	sed -n "s/.*fos_msg_tx: node=$id .* ping len=[0-9]* cookie=\([0-9a-fx]*\).*/\1/p" | head -n 1)
[ -n "$c" ] &&
	printf '%s\n' "$t" | grep -q "fos_msg_rx: node=$id .* ping len=[0-9]* cookie=$c\$" &&
	printf '%s\n' "$t" | grep -q "fos_msg_tx: node=$id .* pong len=[0-9]* cookie=$c\$" &&
	printf '%s\n' "$t" | grep -q "fos_msg_rx: node=$id .* pong len=[0-9]* cookie=$c\$"
ok $? "fos_msg_tx/rx: a PING and its PONG, sent and received, share the cookie ${c:-(none)}"
! printf '%s\n' "$t" | grep -q "fos_proto_error"
ok $? "no fos_proto_error"
printf '%s\n' "$t" | grep fos_ | head -n 4 | sed 's/^/# /'
[ "$failed" = 0 ]
