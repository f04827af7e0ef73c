#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the kernel-doc directives of Documentation/*.rst.

    tools/check-docs.py --kernel-doc build/kernel-doc/scripts/kernel-doc Documentation/*.rst

Every ".. kernel-doc:: FILE" must name a file of the tree, and its options
what that file documents: ":doc: TITLE" a DOC section of that title, and
":identifiers:", ":functions:" or ":no-identifiers:" names that have a
kernel-doc comment there.  Each is asked of kernel-doc itself, as the
kernel's Sphinx extension asks it (Documentation/sphinx/kerneldoc.py:
":doc: TITLE" is "-function TITLE"), so that what passes here is what a
documentation build would include.  Any kernel-doc warning fails too.
Exits 1 with one line per problem.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIRECTIVE = re.compile(r"^\.\.\s+kernel-doc::\s*(\S+)\s*$")
OPTION = re.compile(r"^\s+:([\w-]+):\s*(.*?)\s*$")
# The dialect kernel-doc writes for it: Debian 12's Sphinx.
SPHINX = "5.3.0"


def directives(path):
    """(line, file, {option: value}) of every kernel-doc directive in path."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        opts = {}
        for opt in lines[i + 1:]:
            o = OPTION.match(opt)
            if not o:
                break
            opts[o.group(1)] = o.group(2)
        out.append((i + 1, m.group(1), opts))
    return out


def kernel_doc(kd, args, src):
    """kernel-doc -rst ARGS SRC: (stdout, stderr)."""
    p = subprocess.run(["perl", kd, "-rst", "-sphinx-version", SPHINX] + args + [src],
                       cwd=ROOT, capture_output=True, text=True)
    return p.stdout, p.stderr.strip()


def check(kd, rst):
    problems = []
    where = os.path.relpath(rst, ROOT)
    for line, src, opts in directives(rst):
        at = f"{where}:{line}: {src}"
        if not os.path.isfile(os.path.join(ROOT, src)):
            problems.append(f"{at}: no such file")
            continue
        known = {"doc", "export", "internal", "identifiers", "no-identifiers", "functions"}
        for o in opts:
            if o not in known:
                problems.append(f"{at}: unknown option :{o}:")
        if "doc" in opts:
            title = opts["doc"]
            if not title:
                problems.append(f"{at}: :doc: without a title")
                continue
            out, err = kernel_doc(kd, ["-function", title], src)
            if err:
                problems.append(f"{at}: kernel-doc: {err}")
            if not out.strip():
                problems.append(f'{at}: no "DOC: {title}" section')
            continue
        names = (opts.get("identifiers") or opts.get("functions") or "").split()
        names += opts.get("no-identifiers", "").split()
        for name in names:
            out, err = kernel_doc(kd, ["-function", name], src)
            if not out.strip():
                problems.append(f"{at}: no kernel-doc comment for {name}")
        out, err = kernel_doc(kd, [], src)
        if err:
            problems.append(f"{at}: kernel-doc: {err}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel-doc", required=True, help="the kernel's scripts/kernel-doc")
    ap.add_argument("rst", nargs="+")
    a = ap.parse_args()
    kd = os.path.abspath(a.kernel_doc)
    problems = []
    n = 0
    for rst in a.rst:
        n += len(directives(rst))
        problems += check(kd, os.path.abspath(rst))
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-docs: {len(problems)} problems in {n} kernel-doc directives", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
