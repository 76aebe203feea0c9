"""``python -m ggsci`` is the ``ggsci`` console script."""

from ggsci.cli import main

main()
