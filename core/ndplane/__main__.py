"""``python -m ndplane``: the same as the ``ndplane`` command."""

import sys

from .cli import main

sys.exit(main())
