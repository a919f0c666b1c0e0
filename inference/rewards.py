"""The public import path `radmetrics.inference.rewards` (README, docs): the same module object as
`radmetrics.inference.scoring.rewards`, so that patching either patches both."""

import sys

from .scoring import rewards

sys.modules[__name__] = rewards
