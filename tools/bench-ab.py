#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A/B of fractos-bench runs made by tools/bench.sh --ab PARAM=V1[,V2,...]

    bench-ab.py [-j] PARAM V1 [V2 ...] -- FILE...

Each FILE is one run's JSON (fractos-bench -j), named ab-ROUND-VALUE.json.
For every benchmark and every ratio that fractos-bench printed, this prints
the median over the rounds of its p50 per value, with the range, and the
ratio of each value's median to V1's (with one value: rounds of one
setting, no ratio).  -j prints the same as JSON.
"""
import json
import os
import re
import statistics
import sys


def load(files, values):
    """{value: [run, ...]} from the files named ab-ROUND-VALUE.json."""
    runs = {v: [] for v in values}
    for f in files:
        m = re.match(r"ab-(\d+)-(.+)\.json$", os.path.basename(f))
        if not m or m.group(2) not in runs:
            sys.exit(f"bench-ab.py: {f}: not an ab-ROUND-VALUE.json of these values")
        with open(f, encoding="utf-8") as fh:
            runs[m.group(2)].append(json.load(fh))
    for v, r in runs.items():
        if not r:
            sys.exit(f"bench-ab.py: no run with value {v}")
    return runs


def series(runs, key, field):
    """{name: [value per run]} of one list (results or ratios)."""
    out = {}
    for run in runs:
        for e in run.get(key, []):
            x = e.get(field)
            if isinstance(x, (int, float)):
                out.setdefault(e["name"], []).append(float(x))
    return out


def table(runs, values, key, field):
    per = {v: series(runs[v], key, field) for v in values}
    rows = []
    for name in per[values[0]]:
        if name.startswith("perftest "):
            continue
        row = {"name": name, "values": {}}
        base = None
        for v in values:
            xs = per[v].get(name)
            if not xs:
                continue
            med = statistics.median(xs)
            if base is None:
                base = med
            row["values"][v] = {
                "median": med, "min": min(xs), "max": max(xs), "runs": len(xs),
                "vs_first": med / base if base else None,
            }
        rows.append(row)
    return rows


def main(argv):
    as_json = argv[:1] == ["-j"]
    if as_json:
        argv = argv[1:]
    if "--" not in argv or argv.index("--") < 2:
        sys.exit(__doc__)
    sep = argv.index("--")
    param, values, files = argv[0], argv[1:sep], argv[sep + 1:]
    runs = load(files, values)
    out = {
        "param": param,
        "values": values,
        "rounds": {v: len(runs[v]) for v in values},
        "results_p50_us": table(runs, values, "results", "t_p50_us"),
        "ratios_from_p50": table(runs, values, "ratios", "from_p50"),
    }
    if as_json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    print(f"A/B of {param}: " + ", ".join(
        f"{v} ({out['rounds'][v]} runs)" for v in values) +
        "; medians over the runs [range], then / the first value")
    for key, unit in (("results_p50_us", "p50 us"), ("ratios_from_p50", "ratio")):
        print(f"\n{unit}:")
        for row in out[key]:
            cells = []
            for v in values:
                c = row["values"].get(v)
                if not c:
                    cells.append(f"{param}={v}: -")
                    continue
                cells.append(f"{param}={v}: {c['median']:.4g} [{c['min']:.4g}-{c['max']:.4g}]"
                             + (f" {c['vs_first']:.2f}x" if v != values[0] and c["vs_first"] else ""))
            print(f"  {row['name']:<48} " + "  ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
