"""`python -m benchmarks FAMILY [options]`: see benchmarks/README.md and `python -m benchmarks --help`."""

import sys

from .cli import main

sys.exit(main())
