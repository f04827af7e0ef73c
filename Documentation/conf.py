# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration of fractos' Documentation/ (make htmldocs).  The
# kernel-doc directives are served by sphinx/kernel_doc.py, which runs the
# kernel's scripts/kernel-doc (from linux-source-6.1: the Makefile unpacks
# it into build/kernel-doc/ and names it in FOS_KERNELDOC).
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sphinx"))

project = "fractos"
author = "the fractos developers"
copyright = "the fractos developers; GPL-2.0"
extensions = ["kernel_doc"]
primary_domain = "c"
highlight_language = "none"
master_doc = "index"
exclude_patterns = ["output", "sphinx"]
html_theme = "alabaster"
html_static_path = []
# The tree the kernel-doc directives name their files from, and the script.
fos_srctree = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
fos_kerneldoc = os.environ.get("FOS_KERNELDOC", "")
