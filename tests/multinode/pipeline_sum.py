#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sum up pipeline.sh's runs on node 1, in one process.

Under TCG a process costs tens of milliseconds: the shell functions this
replaces (a tr, sed and cut pipeline per counter, a python3 per JSON
field) started about 1500 of them and took minutes on a slow host.

Reads, in DIR (/tmp):
  pl.pre-RUN, pl.post-RUN   "N1=F:F:... N2=... N3=..." (fosnet barrier):
                            per node "MSGS:BYTES:R1:R2:R3:WIRE:SENDS:W1:W2:W3"
  pl.out.SHAPE-NB           the application's JSON, NB batches
  pl.q4.SHAPE               the same, 4 batches in flight
  pl.bSIZE.SHAPE            the same, 8 batches of SIZE pairs

Prints one line per check, "ok<TAB>RC<TAB>description" (RC 0 passed),
and one per diagnostic, "diag<TAB>text"; pipeline.sh feeds them to
lib.sh's ok and diag.  Exits 0 unless an input is missing or malformed
(then every check it could not make is printed as failed).
"""

import argparse
import json
import os
import sys

SHAPES = ("pipeline", "star", "nvmeof")
# counted only (no runs in flight, no sizes): the pipeline derived on node 1
COUNTED = SHAPES + ("pipefwd",)


class Runs:
    """The snapshots and the application's outputs of one pipeline.sh run."""

    def __init__(self, d, nb):
        self.d = d
        self.nb = nb
        self.snaps = {}

    def _snap(self, tag):
        if tag not in self.snaps:
            nodes = {}
            with open(os.path.join(self.d, "pl." + tag)) as f:
                for word in f.read().split():
                    key, _, val = word.partition("=")
                    if key.startswith("N") and key[1:].isdigit():
                        nodes[int(key[1:])] = [int(v) for v in val.split(":")]
            self.snaps[tag] = nodes
        return self.snaps[tag]

    def delta(self, node, run, field):
        """Field FIELD (1-based) of node NODE's snapshot, post - pre."""
        pre = self._snap("pre-" + run)[node][field - 1]
        post = self._snap("post-" + run)[node][field - 1]
        return post - pre

    def per(self, node, shape, field):
        """Per batch: (the run of nb batches - the run of none) / nb
        (not rounded: a message every other batch counts as 0.5)."""
        a = self.delta(node, "%s-%d" % (shape, self.nb), field)
        b = self.delta(node, shape + "-0", field)
        return (a - b) / self.nb

    def flow(self, src, dst, shape):
        """Per batch, the bytes that went from node SRC to node DST: those
        DST read from SRC (field 2 + SRC) and those SRC wrote into DST's
        Memory (field 7 + DST)."""
        return self.per(dst, shape, 2 + src) + self.per(src, shape, 7 + dst)

    def sum_per(self, shape, field):
        return sum(self.per(n, shape, field) for n in (1, 2, 3))

    def json(self, name):
        with open(os.path.join(self.d, "pl." + name)) as f:
            return json.load(f)

    def out(self, shape):
        return self.json("out.%s-%d" % (shape, self.nb))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--nb", type=int, required=True)
    ap.add_argument("--bsz", type=int, required=True)
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--sizes", required=True, help="pairs a batch, e.g. '16 64 256'")
    ap.add_argument("--runs", required=True, help="every run, e.g. 'pipeline-0 pipeline-16'")
    a = ap.parse_args()
    r = Runs(a.dir, a.nb)
    bb = a.bsz * a.dim * 4

    def ok(cond, text):
        print("ok\t%d\t%s" % (0 if cond else 1, text))

    def diag(text):
        print("diag\t" + text)

    def check(fn, text):
        """A check whose inputs may be missing: a failure, not a crash.
        FN returns (passed, what to add to TEXT)."""
        try:
            cond, detail = fn()
        except (OSError, ValueError, KeyError, IndexError) as e:
            cond, detail = False, " (%s: %s)" % (type(e).__name__, e)
        ok(cond, text + detail)

    for m in SHAPES:
        def verdicts(m=m):
            j, q = r.out(m), r.json("q4." + m)
            return (j["mismatches"] == 0 and j["pairs"] == a.nb * a.bsz and
                    q["mismatches"] == 0 and q["pairs"] == 32 * a.bsz), ""
        check(verdicts, "node 1: %s: every verdict equals the CPU reference, "
              "1 and 4 batches in flight" % m)

    # bytes from node to node, read by one or written by the other
    def features():
        p32, p31 = r.flow(3, 2, "pipeline"), r.flow(3, 1, "pipeline")
        return (p32 >= bb and p31 < bb // 4,
                " (%d bytes a batch), not to node 1 (%d)" % (p32, p31))
    check(features, "node 1: pipeline: the features went node 3 -> node 2")

    def probes():
        p21 = r.flow(1, 2, "pipeline")
        return bb <= p21 < bb * 2, " (%d bytes a batch)" % p21
    check(probes, "node 1: pipeline: only the probes went node 1 -> node 2")

    def star():
        s31, s21 = r.flow(3, 1, "star"), r.flow(1, 2, "star")
        return (s31 >= bb and s21 >= bb * 2,
                " (%d bytes a batch) and went on to node 2 with the probes (%d)"
                % (s31, s21))
    check(star, "node 1: star: the features came to node 1")

    def wakeups():
        w, ws = r.out("pipeline")["wakeups"], r.out("star")["wakeups"]
        return (w == a.nb and ws == 2 * a.nb,
                " (%d), twice in the star (%d)" % (w, ws))
    check(wakeups, "node 1: the application woke once a batch in the pipeline")

    def moved():
        pb, sb = r.sum_per("pipeline", 2), r.sum_per("star", 2)
        return pb < sb, " (%d) than in the star (%d)" % (pb, sb)
    check(moved, "node 1: a batch moves fewer bytes in the pipeline")

    def fewer():
        p, f, st = (r.sum_per(m, 1) for m in ("pipeline", "pipefwd", "star"))
        return (p < f and p < st,
                " (%.1f) than derived on node 1 (%.1f) and than the star (%.1f)"
                % (p, f, st))
    check(fewer, "node 1: a batch of the pipeline sends fewer fractos messages")

    def fwd_verdicts():
        j = r.out("pipefwd")
        return j["mismatches"] == 0 and j["pairs"] == a.nb * a.bsz, ""
    check(fwd_verdicts, "node 1: pipefwd: every verdict equals the CPU reference")

    def wire():
        pw, nw = r.sum_per("pipeline", 6), r.sum_per("nvmeof", 6)
        return pw < nw, " (%d) than over NVMe-oF (%d)" % (pw, nw)
    check(wire, "node 1: a batch puts fewer bytes on the wire in the pipeline")

    # the figures: a missing input ends them, the checks above said so
    try:
        diag("facever: per batch of %d pairs (dim %d, %d bytes of features):"
             % (a.bsz, a.dim, bb))
        diag("facever: shape     fractos-msgs  fabric-bytes  rdma-sends  "
             "wire-bytes  latency-us  batches/s(1)  batches/s(4)")
        for m in COUNTED:
            j = r.out(m)
            q4 = r.json("q4." + m)["batches_per_s"] if m in SHAPES else float("nan")
            diag("facever: %-8s  %12.1f  %12.0f  %10.1f  %10.0f  %10.0f  %12.1f  %12.1f" % (
                m, r.sum_per(m, 1), r.sum_per(m, 2), r.sum_per(m, 7),
                r.sum_per(m, 6), j["latency_us"]["mean"], j["batches_per_s"], q4))
        for m in COUNTED:
            diag("facever: %s fractos messages per batch sent by node 1, 2, "
                 "3: %.1f %.1f %.1f" % (m, r.per(1, m, 1), r.per(2, m, 1), r.per(3, m, 1)))
        diag("facever: latency per batch, p50 us, by pairs a batch:   "
             "pipeline      star    nvmeof")
        for b in a.sizes.split():
            p50 = ["%.0f" % r.json("b%s.%s" % (b, m))["latency_us"]["p50"]
                   for m in SHAPES]
            diag("facever: %4s pairs (%7d bytes of features)         %8s  %8s  %8s"
                 % (b, int(b) * a.dim * 4, *p50))
        for run in a.runs.split():
            sent = ["%d/%d/%d" % (r.delta(n, run, 1), r.delta(n, run, 7),
                                  r.delta(n, run, 6)) for n in (1, 2, 3)]
            diag("facever: run %s, node 1, 2, 3 sent (fractos messages/rdma "
                 "SENDs/eth0 bytes): %s" % (run, " ".join(sent)))
    except (OSError, ValueError, KeyError, IndexError) as e:
        diag("facever: no figures: %s: %s" % (type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
