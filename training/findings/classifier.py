"""The findings extractor's recipe: a logistic head over the bundled MiniLM's sentence embedding and three rule
features, trained on silver finding labels of IU X-ray statements and clauses (data_builders/extractor_labels.py: NLM's
manual MeSH codes, never RadPref).

    radmetrics train findings/classifier --config configs/findings/classifier/small.yaml
    radmetrics export checkpoints/findings_classifier_small --out exports/findings_extractor

The encoder stays frozen (an adapter on MiniLM): the head is 387 numbers, small enough to ship in the repository
(inference/resources/findings_extractor/). Every candidate's embedding is cached in the run directory, so a rerun
with other head settings encodes nothing again; a run whose final/ is complete is not trained again.

Held out: the silver validation and test splits (by text), candidate-level precision, recall and F1 of the finding
class beside the other class, against two trivial baselines: today's statement rule (not normal and names an
abnormality) and the majority class. The thresholds that turn probabilities into the extractor's decisions
(`statement_threshold`, `clause_threshold`) are config values chosen on radpref_dev's 30 development cases with
`radmetrics meta-eval findings --extractor RUN_OR_EXPORT`; they do not change the head.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from transformers import TrainingArguments

from radmetrics.data_builders.extractor_labels import (
    FindingsSilverArguments,
    build_findings_silver,
    load_findings_silver,
)
from radmetrics.inference.files import atomic
from radmetrics.inference.findings.extractor import COMPONENT, FindingsHead, MemoEncoder, features

from ..common.logs import configure_logging, logger
from ..common.run_dir import is_complete, mark_complete, write_eval_results, write_run_manifest
from ..config import RecipeParser

RECIPE = "findings/classifier"


@dataclass
class FindingsHeadArguments:
    encoder: str = field(default="default", metadata={"help": "the frozen sentence encoder (default: bundled MiniLM)"})
    silver_dir: str | None = field(
        default=None, metadata={"help": "`radmetrics data findings` output (default: built into the run directory)"}
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "the first N training records only"})
    regularisation: float = field(default=1.0, metadata={"help": "inverse L2 strength C of the logistic head"})
    statement_threshold: float = field(
        default=0.5, metadata={"help": "probability from which a statement is a finding"}
    )
    clause_threshold: float = field(
        default=0.9, metadata={"help": "probability from which a clause is one (two or more split the statement)"}
    )
    radpref_develop: bool = field(
        default=True,
        metadata={
            "help": "measure extraction on radpref_dev's 30 development cases (never the 20 frozen ones) for the card"
        },
    )


ARGUMENT_TYPES = (FindingsHeadArguments, FindingsSilverArguments, TrainingArguments)


class CachedEncoder(MemoEncoder):
    """The extractor's memo encoder, its vectors also kept in a file of the run directory: the silver labelling and
    the head's features embed each text once, and a rerun embeds nothing already there. The sentence encoder loads
    only when a text is missing."""

    def __init__(self, encoder_name: str, cache: Path):
        super().__init__(None)
        self.name, self.cache = encoder_name, cache
        if cache.is_file():
            stored = np.load(cache, allow_pickle=False)
            self.known = dict(zip(json.loads(str(stored["texts"])), stored["vectors"]))

    def encode(self, texts, batch_size: int = 64, progress: bool = False, desc: str = "embedding") -> np.ndarray:
        before = len(self.known)
        if self.encoder is None and any(t not in self.known for t in texts):
            from radmetrics.inference.models.text_encoder import TextEncoder

            self.encoder = TextEncoder(self.name)
        vectors = super().encode(texts, batch_size, progress, desc)
        if len(self.known) > before:
            ordered = sorted(self.known)
            with atomic.atomic_write(self.cache, "wb") as fh:  # a crash leaves the old cache or the new one
                np.savez(fh, texts=json.dumps(ordered), vectors=np.stack([self.known[t] for t in ordered]))
        return vectors


def hash_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


def scores(predicted: np.ndarray, gold: np.ndarray, prefix: str) -> dict:
    """Precision, recall, F1, support and predicted count of each class (finding, other)."""
    results = {}
    for name, positive in (("finding", True), ("other", False)):
        p, g = predicted == positive, gold == positive
        tp = int((p & g).sum())
        precision = tp / p.sum() if p.sum() else 0.0
        recall = tp / g.sum() if g.sum() else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        results.update(
            {
                f"{prefix}precision_{name}": precision,
                f"{prefix}recall_{name}": recall,
                f"{prefix}f1_{name}": f1,
                f"{prefix}support_{name}": int(g.sum()),
                f"{prefix}predicted_{name}": int(p.sum()),
            }
        )
    return results


def evaluate(head: FindingsHead, split: list[dict], rows: np.ndarray, name: str) -> dict:
    """The head at the extractor's thresholds (statements and clauses each at theirs) and the two baselines."""
    gold = np.array([r["label"] == 1 for r in split])
    thresholds = np.array(
        [head.statement_threshold if r["kind"] == "statement" else head.clause_threshold for r in split]
    )
    predicted = head.probability(rows) >= thresholds if len(split) else np.zeros(0, dtype=bool)
    normal, abnormal = rows[:, -3], rows[:, -2]  # the rule features (is_normal, names_abnormality, is_comparison)
    rule = (normal == 0) & (abnormal == 1) if len(split) else np.zeros(0, dtype=bool)
    return {
        **scores(predicted, gold, f"{name}_"),
        **{f"{name}_rule_baseline_f1_finding": scores(rule, gold, "")["f1_finding"]},
        **{f"{name}_majority_baseline_f1_finding": scores(np.zeros_like(gold), gold, "")["f1_finding"]},
        f"{name}_records": len(split),
    }


def radpref_develop_extraction(head: FindingsHead, encoder) -> dict:
    """Extraction precision, recall and F1 against RadPref's listed findings on the development part of radpref_dev's
    frozen split (meta-eval findings' measure), for the card. The frozen part is never read here."""
    from radmetrics.inference.findings.extractor import FindingsExtractor
    from radmetrics.inference.meta_evaluation.findings_agreement import extraction_scores
    from radmetrics.inference.meta_evaluation.radpref import load_radpref, split_candidates
    from radmetrics.inference.text.sentences import expand_abbreviations

    candidates = split_candidates(load_radpref(), "develop")
    references = {c.case_id: (c.reference, c.reference_findings) for c in candidates}
    texts = [r for r, _ in references.values()] + [c.text for c in candidates]
    listed = [f for _, f in references.values()] + [c.findings for c in candidates]
    found = FindingsExtractor(head, encoder)([expand_abbreviations(t) for t in texts])
    scores = extraction_scores(found, listed, encoder)
    return {f"radpref_develop_extraction_{k}": scores[k] for k in ("precision", "recall", "f1", "listed")}


def main(argv: list[str] | None = None) -> Path:
    from sklearn.linear_model import LogisticRegression

    configure_logging()
    head_args, silver_args, training_args = RecipeParser(ARGUMENT_TYPES).parse_recipe_args(argv)
    run_dir = Path(training_args.output_dir)
    final = run_dir / "final"
    if is_complete(final):
        logger.info("%s is complete; nothing to train (delete it or use a new output_dir to train again)", final)
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    cache_name = (
        "embeddings.npz" if head_args.encoder == "default" else f"embeddings_{hash_text(head_args.encoder)}.npz"
    )
    encoder = CachedEncoder(head_args.encoder, run_dir / cache_name)  # one cache per encoder
    if head_args.silver_dir:
        silver = load_findings_silver(head_args.silver_dir)
        silver_source = head_args.silver_dir
    elif (run_dir / "silver" / "findings_test.jsonl").is_file():
        silver, silver_source = load_findings_silver(run_dir / "silver"), str(run_dir / "silver")
    else:
        silver = build_findings_silver(silver_args, encoder, run_dir / "silver")
        silver_source = str(run_dir / "silver")
    provenance = json.loads((Path(silver_source) / "findings_provenance.json").read_text(encoding="utf-8"))
    write_run_manifest(
        run_dir,
        component=COMPONENT,
        recipe=RECIPE,
        base_model=head_args.encoder,
        config={**asdict(head_args), **asdict(silver_args), "seed": training_args.seed},
        data_provenance={**provenance, "silver_dir": silver_source},
    )
    train = silver["train"][: head_args.max_train_samples] if head_args.max_train_samples else silver["train"]
    texts = sorted({r["text"] for split in (train, silver["validation"], silver["test"]) for r in split})
    table = dict(zip(texts, features(texts, encoder, progress=True)))

    def rows(split):
        return np.stack([table[r["text"]] for r in split]) if split else np.zeros((0, 1), dtype=np.float32)

    labels = np.array([r["label"] for r in train])
    if len(set(labels)) < 2:
        raise ValueError(f"the training split holds one class only ({len(labels)} records): use more reports")
    model = LogisticRegression(
        C=head_args.regularisation, class_weight="balanced", max_iter=5000, random_state=training_args.seed
    ).fit(rows(train), labels)
    head = FindingsHead(
        model.coef_[0].astype(np.float32),
        float(model.intercept_[0]),
        head_args.encoder,
        head_args.statement_threshold,
        head_args.clause_threshold,
    )
    results = {"train_records": len(train)}
    for name in ("validation", "test"):
        results.update(evaluate(head, silver[name], rows(silver[name]), name))
    if head_args.radpref_develop:
        results.update(radpref_develop_extraction(head, encoder))
    head.save(final, {"recipe": RECIPE})
    write_eval_results(run_dir, results)
    mark_complete(final)
    logger.info(
        "findings head: test F1 %.3f (rule %.3f) over %d records -> %s",
        results["test_f1_finding"],
        results["test_rule_baseline_f1_finding"],
        results["test_records"],
        final,
    )
    return run_dir


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
