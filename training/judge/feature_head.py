"""The judge recipe's `pair_features` architecture: a small network over what two findings say about each attribute
(inference/findings/pair_features.py) and their cosine under the bundled MiniLM (frozen), trained on the same finding
pairs as the cross-encoder. It trains full-batch in seconds on a CPU; the epoch kept is the one with the best label
macro F1 on the validation split, checked every `eval_every` epochs. Its export is a few kilobytes
(inference/findings/feature_judge.py).

Held out: the test split, per label and per decision, beside the majority label and the word rules, as the
cross-encoder's; every test prediction goes to test_predictions.jsonl.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from radmetrics.inference.findings.feature_judge import FeatureHead, cosines, evidence_mask, feature_rows
from radmetrics.inference.findings.judge_labels import JUDGE_LABELS

from ..common.logs import configure_logging, logger
from ..common.run_dir import is_complete, mark_complete, write_eval_results, write_run_manifest
from ..findings.classifier import CachedEncoder, hash_text
from .data import held_out_scores, judge_scores

COMPONENT = "finding_judge"


def split_rows(data: dict, encoder) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """split -> (feature rows, label ids)."""
    label_ids = {label: i for i, label in enumerate(JUDGE_LABELS)}
    rows = {}
    for split, records in data.items():
        pairs = [(r["reference"], r["candidate"]) for r in records]
        features = feature_rows(pairs, cosines(pairs, encoder))
        rows[split] = features, np.array([label_ids[r["label"]] for r in records], dtype=np.int64)
    return rows


def evidenced(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training pairs whose label the features give evidence for (evidence_mask); the others are pairs the frame
    cannot read (an edit in words it does not know), logged and left out."""
    keep = evidence_mask(x)[np.arange(len(y)), y]
    if not keep.all():
        missed = np.bincount(y[~keep], minlength=len(JUDGE_LABELS))
        detail = ", ".join(f"{JUDGE_LABELS[k]} {n}" for k, n in enumerate(missed) if n)
        logger.info(
            "%d of %d training pairs have no evidence for their label in the features: %s",
            (~keep).sum(),
            len(y),
            detail,
        )
    return x[keep], y[keep]


def class_weights(labels: np.ndarray, power: float) -> np.ndarray:
    """Each label's loss weight, (1 / its training frequency) ** power, scaled to mean 1 (both architectures)."""
    counts = np.bincount(labels, minlength=len(JUDGE_LABELS)).astype(np.float64).clip(min=1)
    weights = (counts.sum() / counts) ** power
    return (weights / weights.mean()).astype(np.float32)


def macro_f1(head: FeatureHead, rows: np.ndarray, labels: np.ndarray) -> float:
    predicted = [JUDGE_LABELS[k] for k in head.probabilities(rows).argmax(axis=1)]
    return judge_scores([JUDGE_LABELS[k] for k in labels], predicted, "", per_label=False)["macro_f1"]


def fit(rows: dict, hidden_size: int, training_args, power: float, eval_every: int, encoder: str) -> FeatureHead:
    """Full-batch AdamW on the training split; the head of the epoch with the best validation macro F1."""
    import torch

    torch.manual_seed(training_args.seed)
    x, y = evidenced(*rows["train"])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    inputs, targets = torch.tensor((x - mean) / scale), torch.tensor(y)
    masked = torch.tensor(~evidence_mask(x))
    network = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], hidden_size), torch.nn.Tanh(), torch.nn.Linear(hidden_size, len(JUDGE_LABELS))
    )
    optimiser = torch.optim.AdamW(
        network.parameters(), lr=training_args.learning_rate, weight_decay=training_args.weight_decay
    )
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(class_weights(y, power)))
    best, best_f1 = None, -1.0
    for epoch in range(1, int(training_args.num_train_epochs) + 1):
        optimiser.zero_grad()
        loss = loss_fn(network(inputs).masked_fill(masked, float("-inf")), targets)
        loss.backward()
        optimiser.step()
        if epoch % eval_every and epoch != int(training_args.num_train_epochs):
            continue
        head = head_of(network, mean, scale, encoder)
        f1 = macro_f1(head, *rows["validation"])
        logger.info("epoch %d: loss %.4f, validation label macro F1 %.4f", epoch, loss.item(), f1)
        if f1 > best_f1:
            best, best_f1 = head, f1
    return best


def head_of(network, mean: np.ndarray, scale: np.ndarray, encoder: str) -> FeatureHead:
    hidden, output = network[0], network[2]
    return FeatureHead(
        mean.astype(np.float32),
        scale.astype(np.float32),
        hidden.weight.detach().numpy().T.copy(),
        hidden.bias.detach().numpy().copy(),
        output.weight.detach().numpy().T.copy(),
        output.bias.detach().numpy().copy(),
        encoder,
    )


def held_out(head: FeatureHead, data: dict, rows: dict, run_dir: Path) -> dict:
    """Test scores per label and decision, beside the majority label's and the word rules'."""
    predicted = [JUDGE_LABELS[k] for k in head.probabilities(rows["test"][0]).argmax(axis=1)]
    results = held_out_scores(data, predicted, run_dir)
    results["validation_macro_f1"] = macro_f1(head, *rows["validation"])
    return results


def train_feature_judge(model_args, data_args, training_args, judge_args, data: dict, provenance: dict) -> Path:
    """The pair_features run: manifest, features (embeddings cached in the run directory), fit, held-out test,
    final/ marked complete. A run whose final/ is complete is not trained again."""
    configure_logging()
    run_dir = Path(training_args.output_dir)
    final = run_dir / "final"
    if is_complete(final):
        logger.info("%s is complete; nothing to train (delete it or use a new output_dir to train again)", final)
        return run_dir
    encoder_name = model_args.model_name_or_path
    write_run_manifest(
        run_dir,
        component=COMPONENT,
        recipe="judge/pairs",
        base_model=encoder_name,
        config={**asdict(judge_args), **asdict(data_args), "seed": training_args.seed, **_schedule(training_args)},
        data_provenance=provenance,
    )
    cache = "embeddings.npz" if encoder_name == "default" else f"embeddings_{hash_text(encoder_name)}.npz"
    rows = split_rows(data, CachedEncoder(encoder_name, run_dir / cache))
    head = fit(
        rows, judge_args.hidden_size, training_args, judge_args.class_weight_power, judge_args.eval_every, encoder_name
    )
    results = {"train_pairs": len(data["train"]), **held_out(head, data, rows, run_dir)}
    head.save(final, {"recipe": "judge/pairs"})
    write_eval_results(run_dir, results)
    mark_complete(final)
    logger.info(
        "feature judge: test label macro F1 %.3f (rules %.3f), decision accuracy %.3f -> %s",
        results["test_macro_f1"],
        results["baseline_rules_test_macro_f1"],
        results["test_decision_accuracy"],
        final,
    )
    return run_dir


def _schedule(training_args) -> dict:
    keys = ("learning_rate", "weight_decay", "num_train_epochs")
    return {key: getattr(training_args, key) for key in keys}
