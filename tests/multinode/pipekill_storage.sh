#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipekill_storage (3 nodes, vm/run --nvme SIZE, last test of a run): the
# pipeline of pipekill.sh with its storage node (node 3) killed mid-batch.
victim=3
. ./pipekill.sh
