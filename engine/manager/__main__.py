"""``python -m engine.manager``: the Manager daemon (engine.manager.main)."""

import sys

from engine.manager import main

sys.exit(main.main())
