#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Draw fractos-bench results (tools/bench.sh --plot DIR).

Reads every fractos-bench JSON file under DIR (written by
"tools/bench.sh --json FILE", one file per run), groups the runs by guest
kernel release and writes, into OUTDIR (default DIR):

  latency-<release>.svg  copy latency against size: fractos MEMORY_COPY
                         through the fabric, perftest ib_write_lat over the
                         same device, and the local MEMORY_COPY; the point
                         is the median over the runs of each run's t_p50
                         (perftest: t_typical), the bar the lowest and the
                         highest run.
  ratio.svg              fabric MEMORY_COPY / ib_write_lat against size,
                         one band per kernel: the line is the median over
                         the runs of each run's p50 ratio, the band spans
                         the lowest to the highest run.
  summary.txt            the numbers behind both, as a table.

gnuplot draws the pictures (Debian: gnuplot-nox); without it only the
summary is written and the exit status is 2.  Exit status 1 when DIR holds
no fractos-bench JSON with copy results.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys

SIZE_RE = re.compile(r"^(\d+)(B|KiB|MiB)$")
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}

# (series key, result-name prefix, legend)
SERIES = [
    ("fabric", "fabric MEMORY_COPY ", "fractos MEMORY_COPY, fabric (rxe)"),
    ("perftest", "perftest ib_write_lat ", "perftest ib_write_lat (rxe)"),
    ("local", "local MEMORY_COPY ", "fractos MEMORY_COPY, local"),
]
RATIO_PREFIX = "fabric MEMORY_COPY / ib_write_lat "


def size_of(label):
    m = SIZE_RE.match(label)
    return int(m.group(1)) * UNITS[m.group(2)] if m else None


def size_label(n):
    for unit, mult in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} B"


def load_runs(top):
    runs = []
    for root, _dirs, files in os.walk(top):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                print(f"bench-plot: skipping {path}: {e}", file=sys.stderr)
                continue
            if not isinstance(doc, dict) or doc.get("tool") != "fractos-bench":
                continue
            doc["_path"] = path
            runs.append(doc)
    return runs


def collect(runs):
    """kernel -> {"series": {key: {size: [values]}}, "ratio": {size: [v]}}"""
    out = {}
    for doc in runs:
        k = out.setdefault(doc.get("kernel", "unknown"),
                           {"series": {s[0]: {} for s in SERIES},
                            "ratio": {}, "runs": 0})
        k["runs"] += 1
        for r in doc.get("results", []):
            if "skipped" in r or "t_p50_us" not in r:
                continue
            for key, prefix, _ in SERIES:
                if r["name"].startswith(prefix):
                    n = size_of(r["name"][len(prefix):])
                    if n is not None:
                        k["series"][key].setdefault(n, []).append(
                            float(r["t_p50_us"]))
        for r in doc.get("ratios", []):
            if r.get("name", "").startswith(RATIO_PREFIX):
                n = size_of(r["name"][len(RATIO_PREFIX):])
                v = r.get("from_p50")
                if n is not None and isinstance(v, (int, float)) and v > 0:
                    k["ratio"].setdefault(n, []).append(float(v))
    return out


def stats(values):
    return statistics.median(values), min(values), max(values), len(values)


def write_dat(path, table):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# size_bytes median min max runs\n")
        for n in sorted(table):
            med, lo, hi, cnt = stats(table[n])
            f.write(f"{n} {med:.6g} {lo:.6g} {hi:.6g} {cnt}\n")


def fname_safe(s):
    return re.sub(r"[^A-Za-z0-9._+-]", "_", s)


def gp_quote(s):
    return "'" + s.replace("'", "''") + "'"


def gp_text(s):
    """A quoted gnuplot string shown in enhanced text mode: its markup
    characters taken literally."""
    return gp_quote(re.sub(r"([_^@&~{}])", r"\\\1", s))


def xtics(sizes):
    return "set xtics (" + ", ".join(
        f"{gp_quote(size_label(n))} {n}" for n in sorted(sizes)) + ")\n"


HEAD = ("set terminal svg size 760,460 dynamic enhanced "
        "font 'sans,12' background rgb 'white'\n"
        "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
        "set key top left box opaque\n"
        "set logscale x 2\n"
        "set xlabel 'copy size'\n")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 1
    top = argv[1]
    out = argv[2] if len(argv) > 2 else top
    runs = load_runs(top)
    data = {k: v for k, v in collect(runs).items()
            if any(v["series"][s] for s in ("fabric", "perftest"))}
    if not data:
        print(f"bench-plot: no fractos-bench JSON with copy results under {top}",
              file=sys.stderr)
        return 1
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, ".plot-data")
    os.makedirs(work, exist_ok=True)

    lines = []
    gp = []
    ratio_plots = []
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for i, (kernel, d) in enumerate(sorted(data.items())):
        tag = fname_safe(kernel)
        lines.append(f"kernel {kernel}: {d['runs']} run(s)")
        lines.append(f"  {'size':>8}  {'series':<10} {'median':>10} "
                     f"{'min':>10} {'max':>10} runs   (t_p50, us)")
        plots = []
        sizes = set()
        for j, (key, _prefix, legend) in enumerate(SERIES):
            table = d["series"][key]
            if not table:
                continue
            dat = os.path.join(work, f"{tag}-{key}.dat")
            write_dat(dat, table)
            sizes |= set(table)
            for n in sorted(table):
                med, lo, hi, cnt = stats(table[n])
                lines.append(f"  {size_label(n):>8}  {key:<10} {med:10.2f} "
                             f"{lo:10.2f} {hi:10.2f} {cnt:4d}")
            plots.append(f"{gp_quote(dat)} using 1:2:3:4 with yerrorlines "
                         f"lw 2 pt {5 + 2 * j} lc rgb '{palette[j]}' "
                         f"title {gp_text(legend)}")
        title = (f"Copy latency, guest kernel {kernel}, {d['runs']} run(s), "
                 "QEMU TCG + soft-RoCE")
        svg = os.path.join(out, f"latency-{tag}.svg")
        gp.append(HEAD + xtics(sizes) +
                  f"set output {gp_quote(svg)}\n"
                  "set logscale y 10\n"
                  "set ylabel 'latency, µs (median of runs; bars: range)'\n"
                  f"set title {gp_text(title)}\n"
                  "plot " + ", \\\n     ".join(plots) + "\n"
                  "unset logscale y\n")
        if d["ratio"]:
            dat = os.path.join(work, f"{tag}-ratio.dat")
            write_dat(dat, d["ratio"])
            lines.append(f"  {'size':>8}  {'ratio':<10} {'median':>10} "
                         f"{'min':>10} {'max':>10} runs   "
                         "(fabric MEMORY_COPY / ib_write_lat, p50)")
            for n in sorted(d["ratio"]):
                med, lo, hi, cnt = stats(d["ratio"][n])
                lines.append(f"  {size_label(n):>8}  {'ratio':<10} {med:10.2f} "
                             f"{lo:10.2f} {hi:10.2f} {cnt:4d}")
            c = palette[i % len(palette)]
            ratio_plots.append((dat, kernel, c, d["runs"], set(d["ratio"])))
        lines.append("")

    if ratio_plots:
        sizes = set().union(*(p[4] for p in ratio_plots))
        plots = []
        for dat, kernel, c, nruns, _ in ratio_plots:
            plots.append(f"{gp_quote(dat)} using 1:3:4 with filledcurves "
                         f"fs transparent solid 0.2 noborder lc rgb '{c}' "
                         f"title {gp_text(f'{kernel}: range over {nruns} run(s)')}")
            plots.append(f"{gp_quote(dat)} using 1:2 with linespoints lw 2 "
                         f"pt 7 lc rgb '{c}' "
                         f"title {gp_text(f'{kernel}: median')}")
        plots.append("1 with lines dt 2 lc rgb '#555555' title 'parity'")
        gp.append(HEAD + xtics(sizes) +
                  "set key bottom left box opaque\n"
                  f"set output {gp_quote(os.path.join(out, 'ratio.svg'))}\n"
                  "set logscale y 10\n"
                  "set ylabel 'fabric MEMORY\\_COPY / ib\\_write\\_lat (p50)'\n"
                  "set title 'fractos fabric copy against perftest, same rxe link'\n"
                  "plot " + ", \\\n     ".join(plots) + "\n")

    summary = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(summary)
    sys.stdout.write(summary)

    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("bench-plot: gnuplot not found (Debian: gnuplot-nox); "
              "wrote only summary.txt", file=sys.stderr)
        return 2
    script = os.path.join(work, "plot.gp")
    with open(script, "w", encoding="utf-8") as f:
        f.write("\n".join(gp))
    subprocess.run([gnuplot, script], check=True)
    for name in sorted(os.listdir(out)):
        if name.endswith(".svg"):
            print(f"bench-plot: wrote {os.path.join(out, name)}")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
