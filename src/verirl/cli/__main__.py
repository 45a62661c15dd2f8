"""``python -m verirl.cli``: the same command line as the ``verirl`` script."""

import sys

from verirl.cli import main

sys.exit(main())
