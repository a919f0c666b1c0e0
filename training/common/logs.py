"""Training's log: library modules log through `logging.getLogger("radmetrics.training")`, on the main process only.

`configure_logging()` is what an entry point calls, as transformers' example scripts do: INFO on the main process,
WARNING on the others (so a message is written once, not once per rank), to the process's current standard output
(a launcher's log file, or pytest's capture).
"""

from __future__ import annotations

import logging
import sys

logger = logging.getLogger("radmetrics.training")


class _CurrentStdout(logging.StreamHandler):
    """Writes to whatever sys.stdout is when a record is emitted, not when the handler was made."""

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, _value):
        pass


def configure_logging() -> None:
    from .distributed import is_main_process

    if not any(isinstance(h, _CurrentStdout) for h in logger.handlers):
        handler = _CurrentStdout()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(logging.INFO if is_main_process() else logging.WARNING)
