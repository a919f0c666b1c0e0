"""What an optional extra provides, checked at the door: a command or metric that needs a package from an extra
(`pip install 'radmetrics[train]'`, `[llm]`) says which in one line before any work, instead of an ImportError
after it. Checks look the package up (importlib.util.find_spec, importlib.metadata); nothing heavy is imported."""

from __future__ import annotations

import importlib.util
import re
from importlib.metadata import PackageNotFoundError, distribution, requires


class MissingExtraError(Exception):
    """A package from an optional extra is not installed (the CLI prints it as one line and exits 2)."""


def _install_hint(extra: str) -> str:
    return f"pip install 'radmetrics[{extra}]'"


def installed(module: str) -> bool:
    """Whether `module` (an import name, e.g. "optuna" or "sklearn") can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a module with no spec
        return False


def require(module: str, extra: str, for_what: str) -> None:
    """Raise MissingExtraError unless `module` is installed."""
    if not installed(module):
        raise MissingExtraError(
            f"{for_what} needs the `{module}` package from the `{extra}` extra: {_install_hint(extra)}"
        )


def extra_distributions(extra: str) -> list[str]:
    """The distributions radmetrics' installed metadata lists under `extra` (its optional-dependencies)."""
    try:
        declared = requires("radmetrics") or []
    except PackageNotFoundError as exc:
        raise MissingExtraError(
            f"radmetrics is not installed, so its `{extra}` extra cannot be checked: pip install -e '.[{extra}]'"
        ) from exc
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    names = []
    for line in declared:
        requirement, _, condition = line.partition(";")
        if marker.search(condition):
            names.append(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip()).group(0))
    if not names:
        raise ValueError(f"radmetrics declares no extra named {extra!r}")
    return names


def require_extra(extra: str, for_what: str) -> None:
    """Raise MissingExtraError, naming every missing package, unless each distribution of `extra` is installed."""
    missing = []
    for name in extra_distributions(extra):
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        raise MissingExtraError(
            f"{for_what} needs the `{extra}` extra ({', '.join(missing)} not installed): {_install_hint(extra)}"
        )
