#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fractos demo, run by "make demo" in the guest (repository root as the
# working directory, module loaded).  The programs are built on the host
# ("make -C tools"): the guest sees the tree read-only.
#
#   a-c  fractos-demo: processes sharing a Memory view over an fd
#        (SCM_RIGHTS), a third-party copy, a revocation seen by the other
#        process, and a space's death revoking what it created.
#   d    fractos-chain: a 3-stage pipeline over four processes, built with
#        continuations (chain) and mediated by the client (star).
#   e    storage (with vm/run --nvme SIZE): the NVMe namespace attached
#        to the block adaptor (fractctl blk), a file system served on its
#        volumes by fractos-fsd, a file put and got through the daemon (FS
#        mode) and straight from the device (DAX), with the adaptor's
#        counters showing where the bytes went.
#
# Usage: tools/demo.sh [-n ITERATIONS]    (default 1000 pipeline iterations)
set -u
cd "$(dirname "$0")" || exit 1

iters=1000
if [ "${1:-}" = "-n" ] && [ -n "${2:-}" ]; then
	iters=$2
fi

for p in fractctl fractos-demo fractos-chain; do
	if [ ! -x "./$p" ]; then
		echo "demo.sh: tools/$p is not built: run \"make -C tools\" on the host first" >&2
		exit 1
	fi
done
if [ ! -e /dev/fractos ]; then
	echo "demo.sh: /dev/fractos does not exist: load the module first" >&2
	exit 1
fi

# (e): attach, format, serve, put/get in both modes, then undo it all.
storage() {
	local fsd=../adaptors/fs/fractos-fsd st=/tmp/demo-fsd.meta pid src=0

	lsmod | grep -q '^fractos_nvme' ||
		insmod "$(dirname "$FRACTOS_KO")/../adaptors/nvme/fractos_nvme.ko" || return 1
	dd if=/dev/zero of=/dev/nvme0n1 bs=64k count=1 oflag=direct status=none
	echo "\$ fractctl blk attach /dev/nvme0n1 name ssd0 format"
	./fractctl blk attach /dev/nvme0n1 name ssd0 format || return 1
	rm -f "$st"
	echo "\$ fractos-fsd format ssd0; fractos-fsd serve ssd0 &"
	"$fsd" format ssd0 -s "$st" || src=1
	"$fsd" serve ssd0 -s "$st" -N fs0 &
	pid=$!
	i=0
	until ./fractos-fs ls >/dev/null 2>&1 || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	head -c 8000000 /dev/urandom > /tmp/demo-in
	echo "\$ fractos-fs put /tmp/demo-in big          # FS mode: through the daemon"
	./fractos-fs put /tmp/demo-in big || src=1
	echo "\$ fractos-fs -d get big /tmp/demo-out      # DAX: from the device, not the daemon"
	./fractos-fs -d get big /tmp/demo-out || src=1
	cmp /tmp/demo-in /tmp/demo-out && echo "the same 8000000 bytes came back" || src=1
	echo "\$ fractos-fs ls; fractos-fs stat big; fractos-fs fsck"
	./fractos-fs ls && ./fractos-fs stat big && ./fractos-fs fsck || src=1
	echo "\$ fractctl -s blk list"
	./fractctl -s blk list || src=1
	kill "$pid"
	wait "$pid" 2>/dev/null
	./fractctl blk detach name ssd0 || src=1
	rmmod fractos_nvme || src=1
	rm -f /tmp/demo-in /tmp/demo-out "$st"
	return $src
}

rc=0
echo "=== the fractos module"
./fractctl status || rc=1

echo
echo "=== (a-c) sharing, third-party copy and revocation between processes"
./fractos-demo || rc=1

echo
echo "=== (d) chain vs star: a 3-stage pipeline across four processes"
echo "The client builds the chain once from continuations; the stages then"
echo "pass each request along themselves.  In the star, the client gets every"
echo "intermediate result back and forwards it to the next stage."
./fractos-chain -n "$iters" || rc=1
echo "The same with the stages as threads of one process: no hop switches"
echo "address spaces, which a TCG guest pays for (Documentation/benchmarks.rst,"
echo "\"Chain against star: what a hop costs\")."
./fractos-chain -n "$iters" -t || rc=1

echo
echo "=== (e) storage: the block adaptor and the file-system service"
# QEMU's NVMe: its driver is not loaded at boot in the guest.
if [ ! -e /dev/nvme0n1 ] && modprobe nvme 2>/dev/null; then
	i=0
	while [ ! -e /dev/nvme0n1 ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
fi
if [ -e /dev/nvme0n1 ] && [ -n "${FRACTOS_KO:-}" ] && [ -x ../adaptors/fs/fractos-fsd ]; then
	storage || rc=1
else
	echo "(skipped: needs vm/run --nvme SIZE and adaptors/fs built)"
fi

echo
echo "=== afterwards: nothing is left alive"
./fractctl status | sed -n '/^live/,$p'
if [ $rc = 0 ]; then
	echo "demo: every part behaved as expected"
else
	echo "demo: FAILED"
fi
exit $rc
