#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What each fractos-bench operation costs, counted from the kernel's trace.

    tools/bench-costs.py TRACE [-j]

TRACE is the text of /sys/kernel/tracing/trace after "fractos-bench -T"
ran with these events on (tools/bench.sh --costs does it all):
fractos:fos_msg_tx, fractos:fos_msg_rx, workqueue:workqueue_execute_start,
sched:sched_wakeup, sched:sched_switch.  fractos-bench writes
"fbench begin NAME" and "fbench end NAME|OPS" around each timed stint;
every event between the two counts for NAME, and the totals are divided by
its operations.  Printed per benchmark: the fabric messages sent per
operation by type (one node: fabric_loopback sends to itself, so what it
receives is the same), the work items run per operation by function (the
module's, the IB core's CQ polling, rxe's), the wake-ups of a task, the
context switches, and among them the idle exits (a CPU leaving its idle
task: under TCG, and on hardware in a deep C-state, the dearest part of a
wake-up, and what busy polling saves) per operation.  Background
(heartbeats, other tasks) counts where it falls; a long stint makes it
small.
"""
import collections
import json
import re
import sys

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*\S+\)\s+)?\[(?P<cpu>\d+)\]"
                  r"\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s+(?P<rest>.*)$")
MSG = re.compile(r"node=\d+ qpn=\d+ (?P<type>\S+) len=")
WORK = re.compile(r"function (?P<fn>\S+)")
IDLE = re.compile(r"(?:^|\s)prev_pid=0\s")


def parse(lines):
    cur = None
    order = []
    stats = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        ev, rest = m.group("event"), m.group("rest")
        if ev == "tracing_mark_write":
            if rest.startswith("fbench begin "):
                cur = rest[len("fbench begin "):].strip()
                if cur not in stats:
                    order.append(cur)
                    stats[cur] = {"ops": 0, "tx": collections.Counter(),
                                  "work": collections.Counter(),
                                  "wakeups": 0, "switches": 0, "idle": 0}
            elif rest.startswith("fbench end "):
                name, _, ops = rest[len("fbench end "):].strip().rpartition("|")
                if name in stats:
                    stats[name]["ops"] += int(ops)
                cur = None
            continue
        if cur is None:
            continue
        s = stats[cur]
        if ev == "fos_msg_tx":
            t = MSG.search(rest)
            if t:
                s["tx"][t.group("type")] += 1
        elif ev == "workqueue_execute_start":
            w = WORK.search(rest)
            if w:
                s["work"][w.group("fn")] += 1
        elif ev == "sched_wakeup":
            s["wakeups"] += 1
        elif ev == "sched_switch":
            s["switches"] += 1
            if IDLE.search(rest):
                s["idle"] += 1
    return [(n, stats[n]) for n in order if stats[n]["ops"]]


def per_op(counter, ops):
    return {k: round(v / ops, 2) for k, v in sorted(counter.items(), key=lambda kv: -kv[1])
            if v / ops >= 0.05}


def main():
    args = [a for a in sys.argv[1:] if a != "-j"]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], errors="replace") as f:
        rows = parse(f)
    out = []
    for name, s in rows:
        ops = s["ops"]
        out.append({"name": name, "ops": ops,
                    "msgs": round(sum(s["tx"].values()) / ops, 2),
                    "tx": per_op(s["tx"], ops),
                    "work": per_op(s["work"], ops),
                    "wakeups": round(s["wakeups"] / ops, 2),
                    "switches": round(s["switches"] / ops, 2),
                    "idle_exits": round(s["idle"] / ops, 2)})
    if "-j" in sys.argv[1:]:
        print(json.dumps(out, indent=1))
        return
    for r in out:
        fmt = lambda d: ", ".join("%s %g" % kv for kv in d.items()) or "-"
        print("%s (%d ops)" % (r["name"], r["ops"]))
        print("  messages sent  %g: %s" % (r["msgs"], fmt(r["tx"])))
        print("  work items     %g: %s" % (sum(r["work"].values()), fmt(r["work"])))
        print("  wake-ups %g, context switches %g (idle exits %g)"
              % (r["wakeups"], r["switches"], r["idle_exits"]))


if __name__ == "__main__":
    main()
