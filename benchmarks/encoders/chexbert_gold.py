"""The CheXbert-style labeler, trained as CheXbert is (Smit et al. 2020: stage 1 on the rule labeler's silver labels,
stage 2 on expert labels), against the rule labeler it learns from, on held-out expert labels.

Stage 1 is `chexbert/finetune`, stage 2 `chexbert/gold` (configs/chexbert/{finetune,gold}/<scale>.yaml); the expert
labels are NegBio's manual IU X-ray labels, split by report (training/chexbert/gold_split.py). Stage 2 selects its
checkpoint on gold validation and scores gold test once; this script reads that scoring (gold_evaluation.json) and
writes it with the run's split sizes, timings and machine: macro F1 of each labeler over the labels both share, a 95%
bootstrap interval for each, the paired-bootstrap 95% interval of the difference (reports resampled), and per-label
precision / recall / F1 (zeros included).

    python benchmarks/encoders/chexbert_gold.py      (writes benchmarks/results/chexbert_vs_rules_gold.json)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import REPO, machine  # noqa: E402

from radmetrics.training.common.run_dir import RUN_MANIFEST, is_complete, read_eval_results, read_run_manifest
from radmetrics.training.recipes import load_recipe

RESULT = REPO / "benchmarks" / "results" / "chexbert_vs_rules_gold.json"


def train_both_stages(
    scale: str, workdir: Path, stage1_args: list[str], stage2_args: list[str], stage1_dir: Path | None = None
) -> dict:
    """Stage 1 (into `stage1_dir`, default workdir/stage1; a complete run there is reused, as the recipe skips a
    complete final/) then stage 2 into workdir/stage2: the two run directories and the seconds each took."""
    fresh = workdir / "stage2" if stage1_dir else workdir
    if fresh.exists() and any(fresh.iterdir()):
        raise FileExistsError(f"{fresh} is not empty: the benchmark trains stage 2 from scratch into a new directory")
    dirs = {"stage1": stage1_dir or workdir / "stage1", "stage2": workdir / "stage2"}
    if (dirs["stage1"] / RUN_MANIFEST).is_file() and not is_complete(dirs["stage1"] / "final"):
        raise FileExistsError(
            f"{dirs['stage1']} holds an unfinished stage 1: finish it with the settings it started "
            "with (its run manifest), or give a new --stage1-dir"
        )
    runs, seconds = {}, {}
    for stage, recipe, extra in (
        ("stage1", "chexbert/finetune", stage1_args),
        ("stage2", "chexbert/gold", stage2_args),
    ):
        config = REPO / "configs" / recipe / f"{scale}.yaml"
        args = ["--config", str(config), "--output_dir", str(dirs[stage])]
        if stage == "stage2":
            args += ["--model_name_or_path", str(runs["stage1"] / "final")]
        manifest = dirs[stage] / RUN_MANIFEST
        recorded = manifest.read_text(encoding="utf-8") if stage == "stage1" and manifest.is_file() else None
        start = time.perf_counter()
        runs[stage] = load_recipe(recipe).main([*args, *extra])
        seconds[stage] = round(time.perf_counter() - start, 1)
        if recorded and comparable(json.loads(recorded)["training_config"]) != comparable(
            read_run_manifest(runs[stage])["training_config"]
        ):
            manifest.write_text(
                recorded, encoding="utf-8"
            )  # the recipe rewrote it; keep what the run was trained with
            raise ValueError(
                f"{dirs[stage]} was trained with other settings than this run's stage 1; give a new --stage1-dir"
            )
    return {"runs": runs, "seconds": seconds}


def comparable(training_config: dict) -> dict:
    """A run's recorded settings without those that name the moment it ran."""
    return {
        **training_config,
        "training": {k: v for k, v in training_config["training"].items() if k != "logging_dir"},
    }


def benchmark_result(runs: dict, seconds: dict, scale: str, command: str) -> dict:
    """The result record from the two finished runs (stage 2's gold_evaluation.json holds the one test scoring)."""
    evaluation = json.loads((runs["stage2"] / "gold_evaluation.json").read_text(encoding="utf-8"))
    if "test" not in evaluation:
        raise ValueError(f"{runs['stage2']}: gold test was not scored (score_gold_test was off)")
    test, validation = evaluation["test"], evaluation["validation"]
    stage1 = read_run_manifest(runs["stage1"])["data_provenance"]
    stage2 = read_run_manifest(runs["stage2"])["data_provenance"]
    return {
        "machine": machine(),
        "command": command,
        "seconds": {**seconds, "total": round(sum(seconds.values()), 1)},
        "configs": {
            stage: f"configs/{recipe}/{scale}.yaml"
            for stage, recipe in (("stage1", "chexbert/finetune"), ("stage2", "chexbert/gold"))
        },
        "gold": stage2["gold"],
        "gold_split": stage2["gold_split"],
        "split_sizes": {
            "gold_train": stage2["gold_train_reports"],
            "gold_validation": stage2["gold_validation_reports"],
            "gold_test": stage2["gold_test_reports"],
            "stage1_silver_train": stage1["train_examples"],
            "stage1_sentence_examples": stage1.get("sentence_examples", 0),
            "stage2_sentence_examples": stage2.get("sentence_examples", 0),
            "stage1_dropped_as_gold_validation_or_test": stage1["gold_split"]["dropped_from_train"],
        },
        "labels": test["labels"],
        "model_macro_f1": test["model_macro_f1"],
        "rule_macro_f1": test["rule_macro_f1"],
        "model_macro_f1_ci95": test["model_macro_f1_ci95"],
        "rule_macro_f1_ci95": test["rule_macro_f1_ci95"],
        "diff": test["diff"],
        "diff_ci95": test["diff_ci95"],
        "diff_p_value": test["diff_p_value"],
        "target_met": test["diff_ci95"][0] > 0,
        "per_label": {
            label: {"model": test["model_per_label"][label], "rule": test["rule_per_label"][label]}
            for label in test["labels"]
        },
        "validation": {"model_macro_f1": validation["model_macro_f1"], "rule_macro_f1": validation["rule_macro_f1"]},
        "bootstrap_resamples": test["bootstrap_resamples"],
        "permutations": test["permutations"],
        "stage1_eval_results": read_eval_results(runs["stage1"]),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="small", help="config scale of both stages (tiny, small)")
    parser.add_argument("--workdir", type=Path, help="where the two runs go (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument(
        "--stage1-dir",
        type=Path,
        help=(
            "stage 1's run directory (default WORKDIR/stage1); a complete "
            "run there, from the same config and --stage1-args, is reused rather than retrained"
        ),
    )
    parser.add_argument("--stage1-args", default="", help="extra chexbert/finetune flags, one quoted string")
    parser.add_argument("--stage2-args", default="", help="extra chexbert/gold flags, one quoted string")
    args = parser.parse_args(argv)
    command = "python benchmarks/encoders/chexbert_gold.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="chexbert_gold_") as scratch:
        trained = train_both_stages(
            args.scale,
            args.workdir or Path(scratch),
            shlex.split(args.stage1_args),
            shlex.split(args.stage2_args),
            args.stage1_dir,
        )
        result = benchmark_result(trained["runs"], trained["seconds"], args.scale, command.strip())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"gold test ({result['split_sizes']['gold_test']} reports): labeler macro F1 {result['model_macro_f1']:.3f} "
        f"{result['model_macro_f1_ci95']}, rule labeler {result['rule_macro_f1']:.3f} {result['rule_macro_f1_ci95']}; "
        f"difference {result['diff']:+.3f}, 95% CI {result['diff_ci95']}; {result['seconds']['total']} s -> {args.out}"
    )
    return result


if __name__ == "__main__":
    main()
