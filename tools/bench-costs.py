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

    tools/bench-costs.py TRACE --timeline SUBSTR

With syscalls:sys_enter_ioctl and sys_exit_ioctl in the trace as well
(tools/bench.sh --costs with BENCH_TIMELINE=SUBSTR adds them), prints for
each benchmark whose name contains SUBSTR where one operation's time goes:
its operations are cut at fractos-bench's ioctls (the same number each),
the sequence of events most of them share is kept, and each step is shown
with the median time since the step before, and the running sum.
"""
import collections
import json
import os
import re
import sys

# "comm-pid [cpu] flags ts: ", before every event of the trace
PREFIX = (r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*\S+\)\s+)?\[(?P<cpu>\d+)\]"
          r"\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+")
LINE = re.compile(PREFIX + r"(?P<event>\w+):\s+(?P<rest>.*)$")
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


SWITCH = re.compile(r"prev_comm=(?P<prev>.+?) prev_pid=.*==> next_comm=(?P<next>.+?) next_pid=")
WAKE = re.compile(r"comm=(?P<comm>.+?) pid=")
IOCTL = re.compile(r"cmd: (?P<cmd>[0-9a-f]+)")
BENCH = "fractos-bench"


def ioctl_names():
    """FRACTOS_IOC_* by number, from the uAPI header next to this tool."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "uapi", "linux", "fractos.h")
    try:
        with open(path) as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return {}
    return {int(n, 16): name for name, n in re.findall(
        r"#define FRACTOS_IOC_(\w+)\s+_IOWR\(FRACTOS_IOC_MAGIC,\s*0x([0-9a-f]+)", text)}


IOCTLS = ioctl_names()


def task(comm):
    """A task's name without the worker's number (kworker/1:1H: kworker)."""
    return "kworker" if comm.startswith("kworker/") else comm


def label(comm, ev, rest, mine):
    """One event as a step of a timeline, or None for one that is not.
    @mine: it is the timed process's (the one that marks the stints)."""
    c = task(comm)
    if ev in ("sys_enter_ioctl", "sys_exit_ioctl"):
        if comm != BENCH:
            return None
        who = "ioctl" if mine else "peer's ioctl"
        if ev == "sys_exit_ioctl":
            return who + " out"
        m = IOCTL.search(rest)
        cmd = int(m.group("cmd"), 16) if m else 0
        name = IOCTLS.get(cmd & 0xff) if (cmd >> 8) & 0xff == 0xF7 else None
        return "%s %s in" % (who, name or "%x" % cmd)
    if ev in ("fos_msg_tx", "fos_msg_rx"):
        t = MSG.search(rest)
        return "%s %s (%s)" % (ev[-2:], t.group("type") if t else "?", c)
    if ev == "workqueue_execute_start":
        w = WORK.search(rest)
        return "work %s (%s)" % (w.group("fn") if w else "?", c)
    if ev == "sched_wakeup":
        w = WAKE.search(rest)
        return "wake %s (by %s)" % (task(w.group("comm")) if w else "?", c)
    if ev == "sched_switch":
        w = SWITCH.search(rest)
        return "switch %s -> %s" % ((task(w.group("prev")), task(w.group("next")))
                                    if w else ("?", "?"))
    # what BENCH_EVENTS added, e.g. irq:softirq_entry [action=NET_RX]
    a = re.search(r"action=(\w+)", rest)
    return "%s%s (%s)" % (ev, " " + a.group(1) if a else "", c)


# syscalls' events print "sys_ioctl(fd: 3, cmd: ...)" and "sys_ioctl -> 0x0"
SYSCALL = re.compile(PREFIX + r"sys_ioctl(?P<rest>\(.*\)| -> .*)$")


def event(line):
    """(comm, pid, µs, event, rest) of a trace line, or None."""
    m = LINE.match(line)
    if m:
        return (m.group("comm"), m.group("pid"), float(m.group("ts")) * 1e6,
                m.group("event"), m.group("rest"))
    m = SYSCALL.match(line)
    if m:
        rest = m.group("rest")
        ev = "sys_exit_ioctl" if rest.startswith(" -> ") else "sys_enter_ioctl"
        return (m.group("comm"), m.group("pid"), float(m.group("ts")) * 1e6,
                ev, rest)
    return None


def timelines(lines, want):
    """Per benchmark whose name has @want: [(ops kept, ops, steps)]."""
    cur, ops, me, stints = None, None, None, collections.OrderedDict()
    for line in lines:
        e = event(line)
        if not e:
            continue
        comm, pid, ts, ev, rest = e
        if ev == "tracing_mark_write":
            if rest.startswith("fbench begin "):
                name = rest[len("fbench begin "):].strip()
                cur = name if want in name else None
                ops, me = [], pid
            elif rest.startswith("fbench end ") and cur is not None:
                n = int(rest.rpartition("|")[2])
                stints.setdefault(cur, []).append((n, ops))
                cur = None
            continue
        if cur is None:
            continue
        lab = label(comm, ev, rest, pid == me)
        if lab:
            ops.append((ts, lab))
    out = []
    for name, runs in stints.items():
        seqs = []
        for n, evs in runs:
            starts = [i for i, (_, lab) in enumerate(evs)
                      if lab.startswith("ioctl") and lab.endswith(" in")]
            if not n or len(starts) % n:
                continue
            k = len(starts) // n
            cut = starts[::k] + [len(evs)]
            for a, b in zip(cut, cut[1:]):
                op = evs[a:b]
                # the op ends with fractos-bench's last ioctl returning
                last = max(i for i, (_, lab) in enumerate(op)
                           if lab.startswith("ioctl") or i == 0)
                seqs.append(op[:last + 1])
        if not seqs:
            continue
        common = collections.Counter(tuple(l for _, l in s) for s in seqs)
        sig, kept = common.most_common(1)[0]
        steps = []
        for i, lab in enumerate(sig):
            d = sorted(s[i][0] - s[i - 1][0] if i else 0.0
                       for s in seqs if tuple(l for _, l in s) == sig)
            steps.append((lab, d[len(d) // 2]))
        out.append((name, kept, len(seqs), steps))
    return out


def main():
    argv = sys.argv[1:]
    want = None
    if "--timeline" in argv:
        i = argv.index("--timeline")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        want = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if a != "-j"]
    if len(args) != 1:
        sys.exit(__doc__)
    if want is not None:
        with open(args[0], errors="replace") as f:
            for name, kept, n, steps in timelines(f, want):
                print("%s: %d of %d operations in this order (median µs: "
                      "the step, the running sum)" % (name, kept, n))
                total = 0.0
                for lab, d in steps:
                    total += d
                    print("  %8.1f %8.1f  %s" % (d, total, lab))
        return
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
