# SPDX-License-Identifier: GPL-2.0
#
# NVMe-oF over the guest's RDMA device, the baseline of the pipelines
# (tests/multinode/lib.sh) and of tools/bench-blk.sh; sourced by both.
# One subsystem NQN serving a block device on nvmet port 1 (rdma,
# ADDR:4420), and the host side over nvme-rdma.

nvmf_cfs=/sys/kernel/config/nvmet

# nvmf_export NQN ADDR [DEVICE]: export DEVICE (/dev/nvme0n1) through
# nvmet-rdma.
nvmf_export() {
	local s=$nvmf_cfs/subsystems/$1 p=$nvmf_cfs/ports/1
	modprobe nvmet-rdma &&
		{ mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
		mkdir "$s" &&
		echo 1 > "$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" &&
		printf %s "${3:-/dev/nvme0n1}" > "$s/namespaces/1/device_path" &&
		echo 1 > "$s/namespaces/1/enable" &&
		mkdir $p &&
		echo rdma > $p/addr_trtype &&
		echo ipv4 > $p/addr_adrfam &&
		echo "$2" > $p/addr_traddr &&
		echo 4420 > $p/addr_trsvcid &&
		ln -s "$s" "$p/subsystems/$1"
}

# nvmf_unexport NQN: undo nvmf_export (nothing to do without its port).
nvmf_unexport() {
	local s=$nvmf_cfs/subsystems/$1 p=$nvmf_cfs/ports/1
	[ -d $p ] || return 0
	rm -f "$p/subsystems/$1"
	rmdir $p
	echo 0 > "$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s"
}

# nvmf_connect NQN ADDR: connect over nvme-rdma; sets $nvmf_dev to the
# namespace's block device (empty if it did not come within 10 s).
nvmf_connect() {
	local i c
	nvmf_dev=""
	modprobe nvme-rdma &&
		echo "transport=rdma,traddr=$2,trsvcid=4420,nqn=$1" > /dev/nvme-fabrics
	for i in $(seq 50); do
		for c in /sys/class/nvme/nvme*; do
			[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] && nvmf_dev=/dev/${c##*/}n1
		done
		[ -b "$nvmf_dev" ] && return 0
		sleep 0.2
	done
	return 1
}

# nvmf_disconnect: delete every nvme-rdma controller.
nvmf_disconnect() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] && echo 1 > "$c/delete_controller"
	done
}
