#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pipekill_app (3 nodes, vm/run --nvme SIZE, last test of a run): the
# pipeline of pipekill.sh with the application's node (node 1) killed
# mid-batch, by node 2.
victim=1
. ./pipekill.sh
