"""`radmetrics meta-eval tune-ratescore`: TPE search of RaTEScore's type-pair weights and penalty."""

from __future__ import annotations

from pathlib import Path

from ...files.json_io import write_json
from ...files.judgement_files import read_entity_rows
from ...loading.extras import require
from ...metrics.ratescore.tuning import tune_ratescore


def run(args) -> int:
    require("optuna", extra="train", for_what="radmetrics meta-eval tune-ratescore (its TPE search)")
    rows = read_entity_rows(args.data, args.human_column)
    result = tune_ratescore(
        [r["reference_entities"] for r in rows],
        [r["candidate_entities"] for r in rows],
        [float(r[args.human_column]) for r in rows],
        args.trials,
        args.seed,
        args.human_higher_is_better,
        args.encoder,
        args.pooling,
        args.folds,
    )
    out = Path(args.out)
    write_json(out / "affinity_tuned.json", result["affinity"])
    summary = {k: v for k, v in result.items() if k != "affinity"} | {"encoder": args.encoder, "seed": args.seed}
    write_json(out / "tuning.json", summary)
    held = result.get("held_out")
    held_text = (
        f"held-out tau-b {held['tuned_tau_b']:.4f} vs {held['default_long_tau_b']:.4f} for the bundled matrix "
        f"({held['folds']}-fold); "
        if held
        else ""
    )
    print(
        f"{held_text}in-sample {result['tau_b']:.4f} (bundled: {result['default_long_tau_b']:.4f}) over"
        f" {result['n_pairs']} pairs, {result['n_trials']} trials -> {out / 'affinity_tuned.json'}"
    )
    return 0
