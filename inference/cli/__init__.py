"""The `radmetrics` console script.

Subcommands are plugins registered under the entry-point group `radmetrics.commands` (see
pyproject.toml): each names a module with `HELP`, `add_arguments(parser)` and `run(args)`. This keeps
the dependency direction of the design: inference never imports training or data_builders by name,
and a subcommand's heavy imports happen only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import entry_points

from ..files.output_paths import OutputPathError, check_output_arguments
from ..files.report_io import ReportFileError
from ..loading.checkpoint import CheckpointError
from ..loading.discovery import ComponentError
from ..loading.extras import MissingExtraError
from ..loading.hub import ModelLoadError
from ..loading.released import ArtefactError
from ..meta_evaluation.ranking import SuiteError
from ..metrics.base import OptionError
from ..scoring.registry import UnknownMetricError
from ..scoring.scorer import MissingComponentError, ScoringInputError

ORDER = ["data", "train", "rehearse", "export", "weights", "score", "compare", "meta-eval", "demo"]


def _commands() -> dict[str, str]:
    found = {ep.name: ep.value for ep in entry_points(group="radmetrics.commands")}
    if not found:
        raise SystemExit("radmetrics: no subcommands registered; is the package installed (pip install -e .)?")
    return dict(sorted(found.items(), key=lambda kv: (ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER), kv[0])))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="radmetrics",
        description="Train the learned models behind radiology-report metrics and score generated reports with them.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, target in _commands().items():
        module = importlib.import_module(target)
        sp = sub.add_parser(
            name,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sp)
        sp.set_defaults(_run=module.run)
    return parser


def option_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """{dest: its first option string} over the parser and every subparser, for messages that name a flag."""
    flags = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags.update({dest: flag for dest, flag in option_flags(sub).items() if dest not in flags})
        elif action.option_strings:
            flags.setdefault(action.dest, action.option_strings[-1])
    return flags


def user_errors() -> tuple[type[Exception], ...]:
    """Errors that describe bad input or a missing file: printed as one message, not a traceback."""
    return (
        ComponentError,
        ReportFileError,
        ScoringInputError,
        MissingComponentError,
        UnknownMetricError,
        CheckpointError,
        ArtefactError,
        ModelLoadError,
        OptionError,
        SuiteError,
        OutputPathError,
        MissingExtraError,
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        check_output_arguments(args, option_flags(parser))
        result = args._run(args)
    except user_errors() as exc:
        print(f"radmetrics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (`radmetrics score --list | head`): nothing left to say
        closed_stdout()
        return 0
    return int(result or 0)


def closed_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second BrokenPipeError."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
