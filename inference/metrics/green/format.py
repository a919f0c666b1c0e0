"""GREEN's answer format under GREEN's own path: the module lives in `radmetrics.inference.metrics.shared.green_format`
(below the metrics, since the semantic GREEN teacher writes the same format). Code written against
`radmetrics.inference.metrics.green.format` keeps working; this module re-exports it whole."""

from ..shared.green_format import *  # noqa: F403
from ..shared.green_format import _category_counts, _section, _strip_period  # noqa: F401  (private names, as before)
