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


def record_generate(records: list) -> None:
    """Record what every `generate` call receives and returns: each row's prompt token ids (sha256 and count), the
    generation settings (a GenerationConfig as its diff dict, without the transformers version) and each row's new
    token ids (`answers`, padding after the end included), so that a parity test can follow the reference's decoding
    step by step. Used on both sides of a parity check, so it imports only transformers."""
    import hashlib

    from transformers.generation.utils import GenerationMixin

    original = GenerationMixin.generate

    def setting(value):
        if hasattr(value, "to_diff_dict"):
            return {k: v for k, v in sorted(value.to_diff_dict().items()) if k != "transformers_version"}
        return value

    def generate(self, *args, **kwargs):
        ids, mask = kwargs["input_ids"], kwargs.get("attention_mask")
        rows = [row[mask[i].bool()] if mask is not None else row for i, row in enumerate(ids)]
        record = {
            "prompts": [hashlib.sha256(str(row.tolist()).encode()).hexdigest() for row in rows],
            "tokens": [len(row) for row in rows],
            "settings": {k: setting(v) for k, v in sorted(kwargs.items()) if k not in ("input_ids", "attention_mask")},
        }
        records.append(record)
        output = original(self, *args, **kwargs)
        sequences = getattr(output, "sequences", output)
        record["answers"] = [row[ids.shape[1] :].tolist() for row in sequences]
        return output

    GenerationMixin.generate = generate
