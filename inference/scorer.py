"""The public import path `radmetrics.inference.scorer` (README, docs): the same module object as
`radmetrics.inference.scoring.scorer`, so that patching either patches both."""

import sys

from .scoring import scorer

sys.modules[__name__] = scorer
