"""GREEN small: SmolLM2-135M-Instruct fine-tuned on programmatic-teacher pairs (configs/green/sft/small.yaml), measured
against the teacher on held-out pairs.

    python benchmarks/green/green_small.py                       # pairs, training, final evaluation, results
    # a variant
    python benchmarks/green/green_small.py --out DIR -- --max_train_samples 120 --final_eval_splits validation
    python benchmarks/green/green_small.py --out DIR --read --results FILE   # read a run's generations as they stand
    # two stages
    python benchmarks/green/green_small.py --pretrain --out DIR --results FILE -- --final_eval_splits validation

0. With --pretrain: stage 1, domain-adaptive pretraining (configs/green/pretrain/small.yaml) on the training split's
   reports into OUT/pretrain (a complete run is reused), and stage 2 starts from its final/.
1. Pairs: `radmetrics data pairs` on the bundled IU corpus with every heuristic (leak-free split), with the teacher
   explanation of --explanation (default summary), into OUT/pairs unless already there.
2. Training: the small recipe into OUT/sft (a complete run there is not retrained; a killed one resumes). Its final
   evaluation generates for the recipe's `final_eval_samples` pairs of each `final_eval_splits` split and writes
   `<split>_generations.jsonl`.
3. Results, from those generations and the teacher's responses of the same pairs: parse rate; MAE of the significant,
   insignificant and matched counts and of the GREEN score, each next to the constant's (the teacher's median on the
   training pairs) with a 95% bootstrap interval and a paired bootstrap (and approximate-randomisation p) of model MAE
   minus constant MAE; Kendall tau-b of the GREEN score against the teacher's; the same per pair heuristic; how often
   the model gave each (significant, matched) answer, beside the teacher's significant counts; and the first pairs'
   answers next to the teacher's.

Settings are chosen on validation; test is read once (`final_eval_splits` of the config holds both, and nothing in the
config was chosen from test). Writes benchmarks/results/green_small.json (or --results) with the machine, the Trainer's
train_runtime and tokens/s, and the final evaluation's wall time and reports/s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "green" / "sft" / "small.yaml"
SEMANTIC_CONFIG = ROOT / "configs" / "green" / "sft" / "small_semantic.yaml"
PRETRAIN_CONFIG = ROOT / "configs" / "green" / "pretrain" / "small.yaml"
TARGETS = {"parse_rate": 0.98, "green_score_tau_b": 0.6}
EXAMPLES = 3


def build_pairs(pairs: Path, explanation: str, teacher: str, units: str = "statements") -> None:
    """The bundled corpus' pairs, annotated by `teacher` (the semantic one over `units`: findings for the `findings`
    prompt, statements for the others)."""
    from radmetrics.data_builders.pairs.dataset import pairs_explanation, pairs_teacher, pairs_units
    from radmetrics.inference.cli import main as radmetrics

    if (pairs / "train.jsonl").is_file():
        found = (pairs_teacher(pairs), pairs_explanation(pairs), pairs_units(pairs))
        if (
            found[0] != teacher
            or (teacher == "programmatic" and found[1] != explanation)
            or (teacher == "semantic" and found[2] != units)
        ):
            raise SystemExit(
                f"{pairs} holds pairs of the {found[0]} teacher with the {found[1]} explanation over {found[2]}, not "
                f"{teacher} / {explanation} / {units}: use another --out"
            )
    else:
        command = ["data", "pairs", "--out", str(pairs), "--explanation", explanation, "--teacher", teacher]
        code = radmetrics([*command, "--units", units])
        if code:
            raise SystemExit(f"radmetrics data pairs failed ({code})")


def read_generations(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_results(run_dir: Path, split: str, records: dict, constant) -> dict:
    """Agreement over the split's generated pairs, overall and per heuristic, with the verdicts against the targets."""
    from radmetrics.training.green.evaluation import agreement_from_responses, beats_constant

    generations = read_generations(run_dir / f"{split}_generations.jsonl")
    teacher = [records[g["id"]] for g in generations]
    overall = agreement_from_responses(
        [g["response"] for g in generations], [t["response"] for t in teacher], constant, intervals=True
    )
    per_heuristic = {}
    for heuristic in sorted({t["heuristic"] for t in teacher}):
        chosen = [(g, t) for g, t in zip(generations, teacher) if t["heuristic"] == heuristic]
        per_heuristic[heuristic] = agreement_from_responses(
            [g["response"] for g, _ in chosen], [t["response"] for _, t in chosen], constant, intervals=True
        )
    verdicts = {
        f"{count}_beats_constant": beats_constant(overall, "", count)
        for count in ("significant", "green_score", "matched")
    }
    verdicts.update(
        {f"{key}_meets_target": overall.get(key, float("-inf")) >= target for key, target in TARGETS.items()}
    )
    answers = Counter((sum(g["significant"]), g["matched"]) for g in generations if g["parsed"])
    spread = {
        "model_answers": [
            {"significant": sig, "matched": matched, "pairs": n} for (sig, matched), n in answers.most_common()
        ],
        "teacher_significant": dict(sorted(Counter(sum(g["teacher_significant"]) for g in generations).items())),
    }
    examples = [
        {
            "id": g["id"],
            "heuristic": t["heuristic"],
            "reference": t["reference"],
            "candidate": t["candidate"],
            "model": g["response"],
            "teacher": t["response"],
        }
        for g, t in list(zip(generations, teacher))[:EXAMPLES]
    ]
    return {
        "overall": overall,
        "verdicts": verdicts,
        "per_heuristic": per_heuristic,
        "answers": spread,
        "examples": examples,
    }


def final_evaluation_seconds(run_dir: Path) -> float | None:
    """From final/'s weights (saved when training ends) to the eval results (written when the final evaluation ends);
    None for an evaluation that did not end."""
    from radmetrics.training.common.run_dir import EVAL_RESULTS

    if not (run_dir / EVAL_RESULTS).is_file():
        return None
    return (run_dir / EVAL_RESULTS).stat().st_mtime - (run_dir / "final" / "config.json").stat().st_mtime


def throughput(run_dir: Path) -> dict:
    """Loss and the Trainer's own train_runtime and tokens/s, from the last complete checkpoint's trainer state."""
    from radmetrics.training.common.run_dir import last_complete_checkpoint

    checkpoint = last_complete_checkpoint(run_dir)
    history = (
        json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))["log_history"]
        if checkpoint
        else []
    )
    losses = [e["loss"] for e in history if "loss" in e]
    last = history[-1] if history else {}
    return {
        "train_runtime_s": last.get("train_runtime"),
        "train_tokens_per_second": last.get("train_tokens_per_second"),
        "tokens_seen": last.get("num_input_tokens_seen"),
        "steps": last.get("step"),
        "loss_first_logged": losses[0] if losses else None,
        "loss_last_logged": losses[-1] if losses else None,
    }


def pretrain_summary(pretrain_dir: Path) -> dict | None:
    """Stage 1's held-out perplexities and throughput, when the run had one."""
    from radmetrics.training.common.run_dir import EVAL_RESULTS

    if not (pretrain_dir / EVAL_RESULTS).is_file():
        return None
    manifest = json.loads((pretrain_dir / "radmetrics_run.json").read_text(encoding="utf-8"))
    return {
        "config": str(PRETRAIN_CONFIG.relative_to(ROOT)),
        "base_model_source": manifest["data_provenance"].get("base_model_source"),
        "documents": manifest["data_provenance"].get("train_documents"),
        **json.loads((pretrain_dir / EVAL_RESULTS).read_text(encoding="utf-8")),
        **throughput(pretrain_dir),
    }


def radpref_agreement(run_dir: Path, out: Path, metrics: list[str], training_config: dict) -> dict:
    """The trained model exported and scored on RadPref's development half beside ROUGE-L and the semantic teacher:
    each key's tau-b against the radiologists (`radmetrics meta-eval radpref`). GREEN generates as in the recipe's
    final evaluation: its max_new_tokens and evaluation batch size."""
    from radmetrics.inference.cli import main as radmetrics

    export = out / "export"
    if not (export / "radmetrics.json").is_file() and radmetrics(["export", str(run_dir), "--out", str(export)]):
        raise SystemExit("radmetrics export failed")
    if radmetrics(
        [
            "meta-eval",
            "radpref",
            "--components",
            str(export),
            "--metrics",
            *metrics,
            "--out",
            str(out / "radpref"),
            "--option",
            f"green.max_new_tokens={training_config['max_new_tokens']}",
            "--option",
            f"green.batch_size={training_config['training']['per_device_eval_batch_size']}",
        ]
    ):
        raise SystemExit("radmetrics meta-eval radpref failed")
    return json.loads((out / "radpref" / "agreement.json").read_text(encoding="utf-8"))["keys"]


def generated_pairs(run_dir: Path, splits) -> int:
    return sum(len(read_generations(run_dir / f"{split}_generations.jsonl")) for split in splits)


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--out",
        help="run folder (default: checkpoints/bench_green_small, or bench_green_semantic with --teacher semantic)",
    )
    parser.add_argument(
        "--results",
        help=(
            "results file (default: benchmarks/results/green_small.json, or "
            "green_small_semantic.json with --teacher semantic)"
        ),
    )
    parser.add_argument(
        "--explanation",
        choices=["summary", "walkthrough"],
        default=None,
        help=(
            "the teacher's explanation in the pairs built into OUT/pairs (default: summary for the "
            "programmatic teacher, the numbered walkthrough for the semantic one)"
        ),
    )
    parser.add_argument(
        "--teacher",
        choices=["programmatic", "semantic"],
        default="programmatic",
        help=(
            "who annotates the pairs: the edit logs (small.yaml) or the semantic_green teacher "
            "(small_semantic.yaml, its numbered prompt)"
        ),
    )
    parser.add_argument(
        "--radpref",
        action="store_true",
        help=(
            "also export the model and measure its agreement with "
            "radiologists on RadPref's development half (100 generations), beside ROUGE-L and the teacher"
        ),
    )
    parser.add_argument(
        "--radpref-metrics",
        nargs="+",
        default=["green", "rougeL", "semantic_green"],
        help=(
            "the metrics --radpref scores (default: green rougeL semantic_green; the GPU machine, which "
            "has no MiniLM weights, leaves out semantic_green)"
        ),
    )
    parser.add_argument(
        "--config", help="the green/sft config (default: small.yaml, or small_semantic.yaml with --teacher semantic)"
    )
    parser.add_argument(
        "--read",
        action="store_true",
        help=(
            "only read the run in OUT/sft as it stands (no training or "
            "evaluation): the held-out splits it has generations for, e.g. of an evaluation stopped early"
        ),
    )
    parser.add_argument(
        "--pretrain",
        action="store_true",
        help=(
            "first pretrain on the training reports "
            "(configs/green/pretrain/small.yaml) into OUT/pretrain, reused when complete, and fine-tune from it"
        ),
    )
    parser.add_argument("sft_overrides", nargs=argparse.REMAINDER, help="after --: extra green/sft recipe arguments")
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with the defaults that depend on --teacher filled in: `out`, `results`, `config_path` (resolved)
    and `overrides` (the recipe arguments after --)."""
    args = argument_parser().parse_args(argv)
    args.overrides = args.sft_overrides[1:] if args.sft_overrides[:1] == ["--"] else args.sft_overrides
    suffix = "_semantic" if args.teacher == "semantic" else ""
    args.out = Path(args.out or ("checkpoints/bench_green_semantic" if suffix else "checkpoints/bench_green_small"))
    args.results = args.results or str(ROOT / "benchmarks" / "results" / f"green_small{suffix}.json")
    args.config_path = (
        Path(args.config).resolve() if args.config else SEMANTIC_CONFIG if args.teacher == "semantic" else CONFIG
    )
    return args


def train(args: argparse.Namespace, config: dict) -> tuple[Path, list[str]]:
    """Steps 0-2: the pairs, stage 1 with --pretrain, the small recipe; (its run dir, the recipe overrides used)."""
    from radmetrics.training.recipes import load_recipe

    out, overrides = args.out, args.overrides
    build_pairs(
        out / "pairs",
        args.explanation or ("walkthrough" if args.teacher == "semantic" else "summary"),
        args.teacher,
        "findings" if config.get("prompt") == "findings" else "statements",
    )
    if args.pretrain:
        pretrain_dir = load_recipe("green/pretrain").main(
            ["--config", str(PRETRAIN_CONFIG), "--output_dir", str(out / "pretrain")]
        )
        overrides = ["--model_name_or_path", str(pretrain_dir / "final"), *overrides]
    run_dir = load_recipe("green/sft").main(
        [
            "--config",
            str(args.config_path),
            "--pairs_dir",
            str(out / "pairs"),
            "--output_dir",
            str(out / "sft"),
            *overrides,
        ]
    )
    return run_dir, overrides


def held_out_annotations(out: Path, used: dict) -> tuple[dict, object, dict]:
    """The pairs as the run read them: (the splits, the constant its final evaluation used (the teacher's medians on
    the training pairs), the validation and test records by id)."""
    from radmetrics.training.green.evaluation import teacher_medians
    from radmetrics.training.green.sft import GreenDataArguments, load_annotations

    data_args = GreenDataArguments(
        pairs_dir=str(out / "pairs"),
        max_train_samples=used["max_train_samples"],
        train_draw=used.get("train_draw", "shuffled"),
        max_eval_samples=used["max_eval_samples"],
    )
    data, _ = load_annotations(data_args, str(out / "sft"))
    constant = teacher_medians(data["train"])  # what the recipe's final evaluation used
    records = {r["id"]: r for split in ("validation", "test") for r in data[split]}
    return data, constant, records


def machine_info() -> dict:
    import torch

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
    }


def benchmark_results(args: argparse.Namespace, config: dict, run_dir: Path, overrides: list[str]) -> dict:
    """Step 3: the results file's contents for the run in `run_dir`."""
    from radmetrics.data_builders.pairs.dataset import pairs_explanation, pairs_teacher

    out = args.out
    manifest = json.loads((run_dir / "radmetrics_run.json").read_text(encoding="utf-8"))
    used = manifest["training_config"]
    splits = [split for split in used["final_eval_splits"] if (run_dir / f"{split}_generations.jsonl").is_file()]
    data, constant, records = held_out_annotations(out, used)
    return {
        "model": config["model_name_or_path"],
        "base_model_source": manifest["data_provenance"].get("base_model_source"),
        "pretrain": pretrain_summary(out / "pretrain"),
        "constant": constant._asdict(),
        "targets": TARGETS,
        "splits": {split: split_results(run_dir, split, records, constant) for split in splits},
        "config": str(args.config_path.relative_to(ROOT)),
        "teacher": pairs_teacher(out / "pairs"),
        "teacher_explanation": pairs_explanation(out / "pairs"),
        "radpref_dev": radpref_agreement(run_dir, out, args.radpref_metrics, used) if args.radpref else None,
        "prompt": used.get("prompt", "green"),
        "train_draw": used.get("train_draw", "shuffled"),
        "count_token_weight": used.get("count_token_weight", 1.0),
        "training": {
            "pairs": len(data["train"]),
            "dropped_over_max_length": manifest["data_provenance"].get("train_dropped_over_max_length"),
            **throughput(run_dir),
        },
        "final_evaluation_s": (seconds := final_evaluation_seconds(run_dir)),
        # batched greedy generation with the KV cache (batch 16, the config's max_new_tokens at most), model load
        # included
        "final_evaluation_reports_per_second": generated_pairs(run_dir, splits) / seconds if seconds else None,
        "machine": machine_info(),
        "sft_overrides": (
            None if args.read else overrides
        ),  # a read does not know them: the manifest's options are above
        "read_only": args.read,
        "max_new_tokens": used["max_new_tokens"],
    }


def main(argv: list[str] | None = None) -> None:
    from radmetrics.inference.files.json_io import dumps
    from radmetrics.training.config import read_yaml

    args = parse_args(argv)
    config = read_yaml(args.config_path)
    run_dir, overrides = (args.out / "sft", args.overrides) if args.read else train(args, config)
    results = benchmark_results(args, config, run_dir, overrides)
    target = Path(args.results)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dumps(results, indent=2), encoding="utf-8")
    print(
        json.dumps(
            {split: {"overall": r["overall"], "verdicts": r["verdicts"]} for split, r in results["splits"].items()},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
