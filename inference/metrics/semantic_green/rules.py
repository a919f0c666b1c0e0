"""The plugin and back-compat path of the semantic GREEN teacher's word rules, which live in
`radmetrics.inference.text.word_rules` (below the metrics, so that findings/ and the data builders read them without
importing a metric). Code written against `radmetrics.inference.metrics.semantic_green.rules` keeps working; new code
imports `radmetrics.inference.text.word_rules`."""

from ...text.word_rules import *  # noqa: F403
from ...text.word_rules import _COMPARISON, _NORMAL, _words  # noqa: F401  (the module's private names, as before)
