# SPDX-License-Identifier: GPL-2.0
"""The ".. kernel-doc::" directive for fractos' Documentation/.

    .. kernel-doc:: kernel/fabric/wire.h
       :doc: Wire format, version 7        (one DOC: section, by title)
       :identifiers: fos_wire_hdr          (these names; empty: all of them,
                                            without the DOC: sections)
       :no-identifiers: fos_wire_hdr       (all but these)
       :export:                            (what the file EXPORT_SYMBOLs)

runs scripts/kernel-doc -rst on the file (the path is from the top of the
tree) and parses what it prints as part of the page.  A kernel-doc warning
is a Sphinx warning, so "sphinx-build -W" fails on it.  The same options
are checked without Sphinx by tools/check-docs.py (make kernel-doc).
"""
import os
import re
import subprocess

import sphinx
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import ViewList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

LOG = logging.getLogger(__name__)
LINENO = re.compile(r"^\.\. LINENO (\d+)$")


class KernelDoc(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {
        "doc": directives.unchanged_required,
        "identifiers": directives.unchanged,
        "functions": directives.unchanged,
        "no-identifiers": directives.unchanged,
        "export": directives.unchanged,
        "internal": directives.unchanged,
    }

    def command(self, path):
        cfg = self.env.config
        cmd = ["perl", cfg.fos_kerneldoc, "-rst", "-enable-lineno",
               "-sphinx-version", sphinx.__version__]
        opts = self.options
        if "doc" in opts:
            cmd += ["-function", opts["doc"]]
        for key in ("identifiers", "functions"):
            if key in opts:
                names = opts[key].split()
                for name in names:
                    cmd += ["-function", name]
                if not names:
                    # every identifier, but not the DOC sections, which
                    # a page pulls in by title (:doc:) where it wants them
                    cmd += ["-no-doc-sections"]
        for name in opts.get("no-identifiers", "").split():
            cmd += ["-nosymbol", name]
        if "export" in opts:
            cmd += ["-export"]
        if "internal" in opts:
            cmd += ["-internal"]
        return cmd + [path]

    def run(self):
        cfg = self.env.config
        rel = self.arguments[0]
        path = os.path.join(cfg.fos_srctree, rel)
        where = (self.env.docname, self.lineno)
        if not cfg.fos_kerneldoc or not os.path.isfile(cfg.fos_kerneldoc):
            LOG.warning("kernel-doc: no script (set FOS_KERNELDOC)", location=where)
            return []
        if not os.path.isfile(path):
            LOG.warning("kernel-doc: %s: no such file", rel, location=where)
            return []
        self.env.note_dependency(path)
        p = subprocess.run(self.command(path), cwd=cfg.fos_srctree,
                           capture_output=True, text=True)
        for line in p.stderr.splitlines():
            LOG.warning("kernel-doc: %s", line, location=where)
        if p.returncode:
            LOG.warning("kernel-doc: %s: exit status %d", rel, p.returncode,
                        location=where)
        text = ViewList()
        lineno = 0
        for line in p.stdout.splitlines():
            m = LINENO.match(line)
            if m:
                lineno = int(m.group(1)) - 1
                continue
            text.append(line, rel, lineno)
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, text, node)
        return node.children


def setup(app):
    app.add_config_value("fos_srctree", "", "env")
    app.add_config_value("fos_kerneldoc", "", "env")
    app.add_directive("kernel-doc", KernelDoc)
    return {"version": "1", "parallel_read_safe": True,
            "parallel_write_safe": True}
