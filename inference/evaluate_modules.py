"""The public import path `radmetrics.inference.evaluate_modules` (README, docs): the same module object as
`radmetrics.inference.scoring.evaluate_modules`, so that patching either patches both."""

import sys

from .scoring import evaluate_modules

sys.modules[__name__] = evaluate_modules
