# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of the ocq documentation (make htmldocs).
#
# The API reference is pulled from the sources by the kernel's kernel-doc
# script through the kernel's own Sphinx extension (Documentation/sphinx/
# kerneldoc.py).  Both come from a kernel source tree named by the
# environment variable KERNEL_SPHINX_SRC (make htmldocs points it at the
# copy it extracts from Debian's linux-source-6.1).

import os
import sys

import sphinx

ocq_root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
ksrc = os.environ.get('KERNEL_SPHINX_SRC')
if not ksrc:
    sys.exit('conf.py: KERNEL_SPHINX_SRC (a kernel source tree) is not set; '
             'run "make htmldocs"')
sys.path.insert(0, os.path.join(ksrc, 'Documentation', 'sphinx'))

project = 'ocq'
copyright = 'The ocq authors'
with open(os.path.join(ocq_root, 'VERSION')) as f:
    version = release = f.read().strip()

extensions = ['kerneldoc']
# kernel-doc runs from the repository root: paths in ".. kernel-doc::" are
# relative to it, as they are to the kernel tree in the kernel's documents.
kerneldoc_bin = os.path.join(ksrc, 'scripts', 'kernel-doc')
kerneldoc_srctree = ocq_root
# show kernel-doc's own warnings (make htmldocs fails on them too)
kerneldoc_verbosity = 1

# as the kernel's conf.py: C is the primary domain, and the C domain knows
# the kernel's attribute macros
primary_domain = 'c'
highlight_language = 'none'
c_id_attributes = [
    '__must_check', '__always_inline', 'noinline', '__init', '__exit',
    '__cold', '__pure', '__printf', '__acquires', '__releases', '__must_hold',
    'notrace', 'asmlinkage', '__sched',
]

master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = ['output']
templates_path = []
html_theme = 'alabaster'
html_title = 'ocq %s' % release
html_static_path = []
html_show_sourcelink = False
html_copy_source = False
