"""`python -m radmetrics.inference.cli ...` runs the console script."""

import sys

from . import main

sys.exit(main())
