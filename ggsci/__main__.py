"""``python -m ggsci`` is the ``ggsci`` console script; so is ``spark-submit
.../ggsci/__main__.py ...`` (docs/cluster.md), which runs this file as a script."""

import os
import sys

if not __package__:  # a script: its directory must not hide top-level modules
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

from ggsci.cli import main

main()
