#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The CUDA backend's own tests on a machine with an NVIDIA GPU and no
# fractos module, as Documentation/accelerators.rst records them.  Build
# here with "make -C adaptors/gpu portable" (it needs nvcc), copy the tree
# there, and run this from adaptors/gpu.  Writes device.log and
# gpud-cuda-N.json into $OUT (default: the current directory).
#
#   tests/run-on-gpu.sh [RUNS]    the whole suite RUNS times (default 3)
set -u
out=${OUT:-.}
runs=${1:-3}
log=$out/device.log

{
	echo "== the machine"
	uname -srm
	ldd --version 2>&1 | head -1
	nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader 2>&1
	head -1 /proc/driver/nvidia/version 2>&1
	echo "== fractos-gpud info -b cuda"
	./fractos-gpud info -b cuda
	./fractos-gpud info -b cuda -j
	rc=0
	for i in $(seq 1 "$runs"); do
		echo "== tests/gpud-cuda, run $i of $runs"
		FRACTOS_GPUD_REQUIRE_GPU=1 timeout 300 ./tests/gpud-cuda \
			--gtest_output=json:"$out/gpud-cuda-$i.json" || rc=1
	done
	echo "== result: $([ $rc = 0 ] && echo pass || echo FAIL)"
	exit $rc
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
