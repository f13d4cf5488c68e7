"""``python -m ndplane``: the same as the ``ndplane`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # not when a documentation tool imports every module
    sys.exit(main())
