"""The metric authors' released weights: what exists, where it lives, and how to get it offline-first.

`ARTEFACTS` lists every published artefact radmetrics can score with (`radmetrics weights list`). `fetch`
resolves a name or a path to local files: an existing path is used as it is; a catalogue name is looked up
in the Hugging Face cache and, unless HF_HUB_OFFLINE is set, downloaded from the Hub. A missing file is an
error that names the file, the repository it comes from and where to put it.

Each kind of component (`chexbert`, `radgraph`, `rate_ner`, `green`, `crimson`) accepts either a radmetrics export
(a directory with `radmetrics.json`) or a released artefact in its published format; `identify` tells
which one a path holds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .checkpoint import MANIFEST_NAME, resolve_checkpoint, sha256_file

KINDS = ("chexbert", "radgraph", "rate_ner", "green", "crimson")


@dataclass(frozen=True)
class Artefact:
    name: str
    kind: str  # one of KINDS, or "encoder" for a model another artefact loads by name
    repo_id: str
    filename: str | None  # one file of the repository, or None for the whole repository
    size: str  # as published; "≈" marks an estimate from the architecture
    licence: str
    metrics: tuple[str, ...]
    reference: str  # the package whose behaviour radmetrics reproduces with it
    base_models: tuple[str, ...] = ()  # Hub repos whose config/tokenizer the reference loads by name


_RRG = "StanfordAIMI/RRG_scorers"
_GREEN_METRICS = ("green",)
_GREEN_REF = "radeval==2.2.1 (radeval.metrics.green_score, from Stanford-AIMI/GREEN)"

ARTEFACTS: dict[str, Artefact] = {
    a.name: a
    for a in (
        Artefact(
            "chexbert",
            "chexbert",
            _RRG,
            "chexbert.pth",
            "≈ 1.3 GB (BERT-base + 14 heads, with optimizer state)",
            "Stanford research licence (CheXbert, stanfordmlgroup/CheXbert): non-commercial research use",
            ("chexbert", "radcliq"),
            "f1chexbert==0.0.2",
            ("bert-base-uncased",),
        ),
        Artefact(
            "radgraph",
            "radgraph",
            _RRG,
            "radgraph.tar.gz",
            "≈ 420 MB (BERT-base DyGIE)",
            "as stated on StanfordAIMI/RRG_scorers; the RadGraph data is under the PhysioNet Credentialed Health Data"
            " Licence",
            ("radgraph", "radcliq"),
            "radgraph==0.1.18 (model_type='radgraph')",
            ("microsoft/BiomedNLP-PubMedBERT-base-uncased-abstract-fulltext",),
        ),
        Artefact(
            "radgraph-xl",
            "radgraph",
            _RRG,
            "radgraph-xl.tar.gz",
            "416,179,571 bytes",
            "as stated on StanfordAIMI/RRG_scorers; the RadGraph data is under the PhysioNet Credentialed Health Data"
            " Licence",
            ("radgraph", "radcliq"),
            "radgraph==0.1.18 (model_type='radgraph-xl', its default)",
            ("microsoft/BiomedVLP-CXR-BERT-general",),
        ),
        Artefact(
            "modern-radgraph-xl",
            "radgraph",
            _RRG,
            "modern-radgraph-xl.tar.gz",
            "≈ 600 MB (ModernBERT DyGIE)",
            "as stated on StanfordAIMI/RRG_scorers; the RadGraph data is under the PhysioNet Credentialed Health Data"
            " Licence",
            ("radgraph", "radcliq"),
            "radgraph==0.1.18 (model_type='modern-radgraph-xl')",
            ("the ModernBERT named in its config.json",),
        ),
        Artefact(
            "rate-ner-deberta",
            "rate_ner",
            "Angelakeke/RaTE-NER-Deberta",
            None,
            "735 MB (model.safetensors)",
            "as stated on the model card (Angelakeke/RaTE-NER-Deberta)",
            ("ratescore",),
            "ratescore==0.6.0",
            ("FremyCompany/BioLORD-2023-C",),
        ),
        Artefact(
            "biolord-2023-c",
            "encoder",
            "FremyCompany/BioLORD-2023-C",
            None,
            "438 MB (model.safetensors)",
            "BioLORD-2023 terms (model card): built with SNOMED CT and UMLS, whose own licences apply",
            ("ratescore",),
            "ratescore==0.6.0 (entity embeddings)",
        ),
        Artefact(
            "green-radllama2-7b",
            "green",
            "StanfordAIMI/GREEN-RadLlama2-7b",
            None,
            "≈ 13.5 GB (7B, bf16)",
            "Llama 2 Community Licence",
            _GREEN_METRICS,
            _GREEN_REF,
        ),
        Artefact(
            "green-mistral-7b",
            "green",
            "StanfordAIMI/GREEN-Mistral-7b",
            None,
            "≈ 14.5 GB (7B, bf16)",
            "Apache-2.0 (model card)",
            _GREEN_METRICS,
            _GREEN_REF,
        ),
        Artefact(
            "green-llama2-7b",
            "green",
            "StanfordAIMI/GREEN-Llama2-7b",
            None,
            "≈ 13.5 GB (7B, bf16)",
            "Llama 2 Community Licence (Llama-2 base)",
            _GREEN_METRICS,
            _GREEN_REF,
        ),
        Artefact(
            "green-phi2",
            "green",
            "StanfordAIMI/GREEN-Phi2",
            None,
            "≈ 5.6 GB (2.7B)",
            "MIT (model card)",
            _GREEN_METRICS,
            _GREEN_REF,
        ),
        Artefact(
            "green-radphi2",
            "green",
            "StanfordAIMI/GREEN-RadPhi2",
            None,
            "≈ 5.6 GB (2.7B)",
            "none stated on the card; its base RadPhi-2 is CC BY-NC 4.0",
            _GREEN_METRICS,
            _GREEN_REF,
        ),
        Artefact(
            "medgemma-4b-it-crimson",
            "crimson",
            "rajpurkarlab/medgemma-4b-it-crimson",
            None,
            "≈ 8.6 GB (MedGemma-4B-it, 4.3B, bf16)",
            "Health AI Developer Foundations terms of use (MedGemma's, which a model derived from MedGemma carries; "
            "accept them on the Hub before downloading)",
            ("crimson",),
            "crimson-score==0.2.0 (CRIMSONScore(api='hf'), its default model)",
        ),
    )
}

# The artefact `--components released` uses for each kind (the reference packages' own defaults).
DEFAULT_ARTEFACT = {
    "chexbert": "chexbert",
    "radgraph": "radgraph-xl",
    "rate_ner": "rate-ner-deberta",
    "green": "green-radllama2-7b",
    "crimson": "medgemma-4b-it-crimson",
}


class ArtefactError(RuntimeError):
    """A released artefact could not be found or is not in the format its kind expects."""


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}


def get_artefact(name: str) -> Artefact:
    try:
        return ARTEFACTS[name]
    except KeyError:
        raise ArtefactError(
            f"unknown released artefact {name!r}; known: {', '.join(ARTEFACTS)} (or give a local path)"
        ) from None


def _hint(artefact: Artefact) -> str:
    target = f"{artefact.repo_id} {artefact.filename}" if artefact.filename else artefact.repo_id
    return (
        f"download it where the Hub is reachable (`huggingface-cli download {target}`, then copy the Hugging Face "
        f"cache, HF_HOME={os.environ.get('HF_HOME', '~/.cache/huggingface')}), or pass a local path"
    )


def fetch(name_or_path: str | os.PathLike, revision: str | None = None) -> Path:
    """A component's local path: the path itself if it exists, a catalogue entry from the Hugging Face cache
    (downloaded from the Hub unless HF_HUB_OFFLINE is set), or another Hub repo id (a radmetrics export)."""
    local = Path(name_or_path).expanduser()
    if local.exists():
        return local
    by_repo = {a.repo_id: a.name for a in ARTEFACTS.values() if a.filename is None}
    name_or_path = by_repo.get(str(name_or_path), name_or_path)  # a whole-repository release named by its Hub id
    if str(name_or_path) not in ARTEFACTS and str(name_or_path).count("/") == 1:  # a Hub repo id (an export)
        return resolve_checkpoint(name_or_path, revision)
    artefact = get_artefact(str(name_or_path))
    from huggingface_hub import hf_hub_download, snapshot_download

    try:
        if artefact.filename:
            return Path(
                hf_hub_download(artefact.repo_id, artefact.filename, revision=revision, local_files_only=offline())
            )
        return Path(snapshot_download(artefact.repo_id, revision=revision, local_files_only=offline()))
    except Exception as exc:  # huggingface_hub raises several unrelated types here
        where = "in the local Hugging Face cache (HF_HUB_OFFLINE is set)" if offline() else "on the Hub"
        what = f"{artefact.filename} of {artefact.repo_id}" if artefact.filename else artefact.repo_id
        raise ArtefactError(
            f"released artefact {artefact.name!r}: {what} was not found {where}; "
            f"{_hint(artefact)}. ({type(exc).__name__}: {exc})"
        ) from exc


def resolve_model_dir(name_or_path: str | os.PathLike, needed_by: str) -> Path:
    """A base model that reference code loads by Hub name (e.g. `bert-base-uncased`): a local directory as
    given, else its snapshot in the Hugging Face cache (fetched unless HF_HUB_OFFLINE is set)."""
    local = Path(name_or_path).expanduser()
    if local.is_dir():
        return local
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                str(name_or_path),
                local_files_only=offline(),
                allow_patterns=["*.json", "*.txt", "*.model", "*.py", "*.jinja"],
            )
        )
    except Exception as exc:
        where = "in the local Hugging Face cache (HF_HUB_OFFLINE is set)" if offline() else "on the Hub"
        raise ArtefactError(
            f"{needed_by} loads the base model {name_or_path!r} (its config and tokenizer), which was not "
            f"found {where}; download it where the Hub is reachable (`huggingface-cli download "
            f"{name_or_path}`) or pass a local directory. ({type(exc).__name__}: {exc})"
        ) from exc


def identify(kind: str, path: str | os.PathLike) -> str:
    """ "export" for a radmetrics export, else "released" if `path` holds `kind`'s published format."""
    path = Path(path)
    if (path / MANIFEST_NAME).is_file():
        return "export"
    published = {
        "chexbert": lambda p: p.is_file() and p.suffix in (".pth", ".pt") or (p / "chexbert.pth").is_file(),
        "radgraph": lambda p: p.name.endswith(".tar.gz") and p.is_file() or (p / "weights.th").is_file(),
        "rate_ner": lambda p: _token_classifier(p),
        "green": lambda p: (p / "config.json").is_file(),
        "crimson": lambda p: (p / "config.json").is_file(),
    }
    if kind not in published:
        raise ArtefactError(f"unknown component kind {kind!r}; expected one of {', '.join(KINDS)}")
    if published[kind](path):
        return "released"
    expected = {
        "chexbert": "chexbert.pth",
        "radgraph": (
            "a RadGraph tarball (radgraph-xl.tar.gz) or its unpacked folder (config.json, weights.th, vocabulary/)"
        ),
        "rate_ner": "a RaTE-NER token classifier folder (config.json with B-/I- labels, model.safetensors, tokenizer)",
        "green": "a causal LM folder (config.json, weights, tokenizer)",
        "crimson": "a causal LM folder (config.json, weights, tokenizer)",
    }[kind]
    raise ArtefactError(f"{path} is neither a radmetrics export (no {MANIFEST_NAME}) nor {expected}")


def _token_classifier(path: Path) -> bool:
    config = path / "config.json"
    if not config.is_file():
        return False
    labels = json.loads(config.read_text(encoding="utf-8")).get("id2label", {})
    return any(str(label).startswith("B-") for label in labels.values())


def sha256_of(path: Path) -> str:
    """sha256 of a file, or of a directory's files (sorted relative paths and their digests)."""
    import hashlib

    if path.is_file():
        return sha256_file(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
        digest.update(f"{file.relative_to(path).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()
