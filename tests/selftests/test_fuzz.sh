#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timeout: 600
#
# make check's short fuzz run (tests/fuzz/): FUZZ_DURATION seconds (60) of
# the uAPI fuzzer, then FUZZ_LOOPBACK_DURATION (30) with fabric_loopback,
# then the same two with every limit of the module low (fosfuzz
# --low-limits: FUZZ_LOWLIMIT_DURATION, 30, and
# FUZZ_LOWLIMIT_LOOPBACK_DURATION, 20), each from a fresh seed it prints
# (tests/fuzz/run --seed N reproduces a run), after replaying every saved
# program of tests/fuzz/regress/.
cd "$(dirname "$0")/../fuzz" || exit 1
rc=0
./run --duration "${FUZZ_DURATION:-60}" || rc=1
./run --duration "${FUZZ_LOOPBACK_DURATION:-30}" --loopback || rc=1
./run --duration "${FUZZ_LOWLIMIT_DURATION:-30}" -- --low-limits || rc=1
./run --duration "${FUZZ_LOWLIMIT_LOOPBACK_DURATION:-20}" --loopback -- --low-limits || rc=1
exit $rc
