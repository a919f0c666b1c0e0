"""The package list, found by setuptools rather than kept by hand. pyproject.toml maps the three code folders to the
subpackages of the namespace `radmetrics` (`package-dir`); every folder below them is a package here, found by
`find_namespace_packages`: a new metric folder ships without a line in pyproject.toml, and so does a folder that holds
only data (package data under `[tool.setuptools.package-data]`). Everything else is configured in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

try:
    import tomllib
except ImportError:  # Python 3.10
    from setuptools.compat.py310 import tomllib

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    """Each mapped package and every folder below it (caches left out), as dotted package names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = []
    for package, folder in config["package-dir"].items():
        below = find_namespace_packages(where=str(ROOT / folder), exclude=["*__pycache__*", "__pycache__"])
        found += [package, *(f"{package}.{name}" for name in below)]
    return found


if __name__ == "__main__":
    setup(packages=packages())
