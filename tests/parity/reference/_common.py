"""Shared by the reference runners (which run inside the reference packages' own environments, not radmetrics')."""

import argparse
import json
import platform
import sys
from importlib.metadata import PackageNotFoundError, version


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, help="the look-alikes folder (tests/parity/lookalikes.py)")
    parser.add_argument("--inputs", required=True, help="JSON with the report pairs and extra inputs")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def environment(*packages: str) -> dict:
    found = {"python": platform.python_version()}
    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def save(path: str, value: dict) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(value, fh, indent=1)
    print(f"wrote {path}", file=sys.stderr)
