"""`radmetrics demo`: build data, train every tiny component, export, score example pairs, print a table.

Each stage either runs for real or is reported as not built; nothing is faked.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from radmetrics.inference.files.output_paths import OutputFolder

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
HELP = (
    "run the whole pipeline on the bundled IU X-ray corpus with tiny and small models (CPU: about 6 minutes and 5.6"
    " GiB on 2 cores, measured from a fresh clone on an x86_64 machine on 2026-11-28 at fd1c88f:"
    " benchmarks/results/demo_time.json)"
)
# Config scale of each encoder recipe in the demo: `small` fine-tunes the bundled pretrained all-MiniLM-L6-v2
# (configs/<recipe>/small.yaml), `tiny` trains a random tiny encoder. Within the 15-minute budget on 2 cores only one
# small config fits whole; cut short, the others scored below their tiny configs, so they run tiny
# (docs/notes/encoder-quality.md; `python benchmarks/encoders/encoder_recipes_small.py` compares the two scales).
ENCODER_SCALES = {
    "rate_ner/iob": "small",
    "rate_ner/span": "tiny",
    "chexbert/finetune": "tiny",
    "radgraph/train": "tiny",
}
DEMO_PAIR_REPORTS = 400  # the pair stage's reports: 150 pairs, 16 s on 2 cores (nearest neighbour embeds them)
DEMO_PAIRS_PER_HEURISTIC = 30
# The demo's GREEN stage: the small recipe (SmolLM2-135M-Instruct, configs/green/sft/small.yaml) cut short, exported
# and scored within 3 minutes on 2 cores, at most 8 GiB. The full recipe (benchmarks/green/green_small.py) is the one
# measured against its constant; the demo's row says whether this short run beats its constant and whether its
# answers vary. Why each setting below: docs/notes/green-small.md, "The demo's GREEN stage".
DEMO_GREEN_TRAIN_PAIRS = 12  # 6 steps of 2 conversations (~1,100 tokens each)
DEMO_GREEN_ACCUMULATION = 2  # one conversation at a time: four 1,500-token ones at once top 8 GiB
DEMO_GREEN_LEARNING_RATE = 5e-4  # constant: a few steps at the recipe's 1e-4 cosine rarely reach GREEN's format
DEMO_GREEN_PROMPT = (
    "findings"  # the semantic teacher judges each report's findings: the prompt that shows them (issue 64)
)
DEMO_GREEN_EXPLANATION = "summary"  # the numbered walkthrough loops when trained for a few steps
DEMO_GREEN_MAX_LENGTH = 1536  # GREEN's prompt makes conversations of 950-1,300 tokens
DEMO_GREEN_SCORE_PAIRS = 4  # test pairs the export scores, in one batch: 4-15 s each on 2 cores
DEMO_PAIRS = 50  # example pairs scored with every metric but GREEN
DESCRIPTION = """End-to-end demo: corpus -> data builders -> short training runs -> export -> scoring.
Stages that are not built in this version are listed as such. The LLM stages (teacher annotation,
FineRadScore, RadFact) run when --endpoint names an endpoint YAML and are listed as skipped otherwise.
Outputs go to --out."""


@dataclass
class Stage:
    name: str
    run: Callable[[Path, dict], str] | None
    not_built_reason: str = ""
    needs_endpoint: bool = False


def stage_corpus(out: Path, state: dict) -> str:
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
    from radmetrics.data_builders.corpus.corpus_io import assign_splits, write_corpus

    reports = iu_xray_corpus()
    stats = write_corpus(reports, assign_splits(reports), out / "corpus")
    state["reports"] = reports
    return f"{stats['reports']} IU X-ray reports, splits {stats['per_split']}"


def stage_pairs(out: Path, state: dict) -> str:
    """All five pair heuristics on the first DEMO_PAIR_REPORTS reports, DEMO_PAIRS_PER_HEURISTIC each, annotated by
    the semantic teacher: what the GREEN stage trains on, scores and measures its constant with."""
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.pairs.builders import build_pairs
    from radmetrics.data_builders.pairs.dataset import write_pairs

    reports = state["reports"][:DEMO_PAIR_REPORTS]
    pairs = build_pairs(reports, assign_splits(reports), per_heuristic=DEMO_PAIRS_PER_HEURISTIC)
    stats = write_pairs(
        pairs,
        out / "pairs",
        {"corpus": "iu_xray", "reports": len(reports), "demo": True},
        explanation=DEMO_GREEN_EXPLANATION,
        teacher="semantic",
    )
    state["pairs"] = pairs
    return f"{stats['pairs']} pairs with semantic-teacher GREEN annotations, per heuristic {stats['per_heuristic']}"


def stage_silver(out: Path, state: dict) -> str:
    """Silver CheXpert / RaTE-NER / RadGraph labels for every report, with agreement against real gold."""
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.silver.dataset import write_silver

    reports = state["reports"]
    stats = write_silver(
        reports, assign_splits(reports), out / "silver", provenance={"corpus": "iu_xray", "demo": True}
    )
    state["silver"] = out / "silver"
    chexpert = stats["labelers"]["chexpert"]["gold_agreement"]
    radgraph = stats["labelers"]["radgraph"]["gold_agreement"]
    return (
        f"{len(reports)} reports; rule labeler macro F1 vs NegBio {chexpert['macro_f1']:.3f}; "
        f"RadGraph silver entity F1 vs gold {radgraph['entities']['f1']:.3f}"
    )


def encoder_config(recipe: str) -> Path:
    return CONFIGS / recipe / f"{ENCODER_SCALES[recipe]}.yaml"


def _train_and_export(out: Path, state: dict, recipe: str, component: str) -> dict:
    """Train an encoder recipe (its ENCODER_SCALES config) on the demo's silver labels, export it, and make it
    available to scoring."""
    from radmetrics.training.export import export_run
    from radmetrics.training.recipes import load_recipe

    run_dir = load_recipe(recipe).main(
        [
            "--config",
            str(encoder_config(recipe)),
            "--silver_dir",
            str(state["silver"]),
            "--output_dir",
            str(out / "runs" / component),
        ]
    )
    export = export_run(run_dir, out / "exports" / component)
    state.setdefault("components", {})[component] = str(export)
    from radmetrics.training.common.run_dir import read_eval_results

    return read_eval_results(run_dir)


def never_predicted(results: dict, prefix: str) -> str:
    """The classes with test support that the model never predicted, for a stage's line (an average hides them)."""
    missed = results.get(f"{prefix}never_predicted") or []
    return f"; NEVER PREDICTED: {', '.join(missed)}" if missed else ""


def f1_with_baseline(results: dict, label: str) -> str:
    """The test F1 and macro F1 beside the word-majority baseline's, and the classes never predicted."""
    return (
        f"test {label} {results['test_f1']:.3f}, macro {results['test_macro_f1']:.3f} (word-majority baseline "
        f"{results['baseline_word_majority_test_f1']:.3f}){never_predicted(results, 'test_')}; exported"
    )


def stage_rate_ner(out: Path, state: dict) -> str:
    return f1_with_baseline(_train_and_export(out, state, "rate_ner/iob", "rate_ner_iob"), "F1")


def stage_rate_ner_span(out: Path, state: dict) -> str:
    return f1_with_baseline(_train_and_export(out, state, "rate_ner/span", "rate_ner_span"), "span F1")


def stage_radgraph(out: Path, state: dict) -> str:
    results = _train_and_export(out, state, "radgraph/train", "radgraph")
    return (
        f"test entity F1 {results['test_entity_f1']:.3f}, macro {results['test_entity_macro_f1']:.3f} (word-majority"
        f" baseline {results['baseline_word_majority_test_entity_f1']:.3f}), relation F1"
        f" {results['test_relation_f1']:.3f}, macro"
        f" {results['test_relation_macro_f1']:.3f}{never_predicted(results, 'test_entity_')}"
        f"{never_predicted(results, 'test_relation_')};"
        f" vs radgraph gold: entities {results['radgraph_gold_entities_f1']:.3f}, relations"
        f" {results['radgraph_gold_relations_f1']:.3f}; exported"
    )


def stage_chexbert(out: Path, state: dict) -> str:
    results = _train_and_export(out, state, "chexbert/finetune", "chexbert")
    return (
        f"test kappa {results['test_kappa']:.3f} (majority baseline {results['baseline_majority_test_kappa']:.3f}); "
        f"NegBio macro F1 {results.get('negbio_test_macro_f1', float('nan')):.3f} vs rule labeler "
        f"{results.get('rule_labeler_negbio_test_macro_f1', float('nan')):.3f}; exported"
    )


def stage_findings(out: Path, state: dict) -> str:
    """The findings extractor (tiny config: the head on 150 IU X-ray reports' silver labels), exported; semantic_green
    in the score stage judges the findings this export lists."""
    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.export import export_run
    from radmetrics.training.recipes import load_recipe

    config = CONFIGS / "findings" / "classifier" / "tiny.yaml"
    run_dir = load_recipe("findings/classifier").main(
        ["--config", str(config), "--output_dir", str(out / "runs" / "findings")]
    )
    export = export_run(run_dir, out / "exports" / "findings_extractor")
    state.setdefault("components", {})["findings_extractor"] = str(export)
    results = read_eval_results(run_dir)
    return (
        f"silver test F1 of the finding class {results['test_f1_finding']:.3f} (statement rule "
        f"{results['test_rule_baseline_f1_finding']:.3f}, {results['test_records']} candidates); exported"
    )


def stage_judge(out: Path, state: dict) -> str:
    """The finding-pair judge (tiny config: pair_features on 1,200 pairs the builders synthesise from the bundled
    corpus), exported; `--option semantic_green.judge=model --components EXPORT` scores with it."""
    from radmetrics.training.common.run_dir import read_eval_results
    from radmetrics.training.export import export_run
    from radmetrics.training.recipes import load_recipe

    config = CONFIGS / "judge" / "pairs" / "tiny.yaml"
    run_dir = load_recipe("judge/pairs").main(["--config", str(config), "--output_dir", str(out / "runs" / "judge")])
    export_run(run_dir, out / "exports" / "finding_judge")
    results = read_eval_results(run_dir)
    pairs = sum(v for k, v in results.items() if k.startswith("test_support_"))
    return (
        f"held-out label macro F1 {results['test_macro_f1']:.3f} (word rules "
        f"{results['baseline_rules_test_macro_f1']:.3f}), decision accuracy {results['test_decision_accuracy']:.3f} "
        f"over {pairs} test pairs; exported (semantic_green.judge=model scores with it)"
    )


def stage_green(out: Path, state: dict) -> str:
    """GREEN SFT of SmolLM2-135M-Instruct (the small recipe: from the Hub cache, else its packaged GGUF) on the demo's
    semantic-teacher pairs, cut short (DEMO_GREEN_*), exported, then scored through `Scorer` on test pairs of those
    pairs: the scores are the table's GREEN rows, and the same answers against the teacher's make the row's honest
    verdict (whether the short run beats its constant, which the full small recipe, `benchmarks/green/green_small.py`,
    is measured on). Nothing is generated twice."""
    import random

    from radmetrics.inference.files.report_io import read_jsonl_records
    from radmetrics.inference.files.run_output import write_result
    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.export import export_run
    from radmetrics.training.green.evaluation import agreement_from_responses, beats_constant, teacher_medians
    from radmetrics.training.recipes import load_recipe

    sft = load_recipe("green/sft").main(green_sft_args(out))
    state.setdefault("components", {})["green"] = str(export_run(sft, out / "exports" / "green"))
    # the test pairs come in build order, grouped by heuristic: the scored ones are drawn across them
    test = [r for _, r in read_jsonl_records(out / "pairs" / "test.jsonl")]
    test = random.Random(0).sample(test, min(DEMO_GREEN_SCORE_PAIRS, len(test)))
    references, candidates = [r["reference"] for r in test], [r["candidate"] for r in test]
    result = Scorer(["green"], {"green": state["components"]["green"]})(
        references, candidates, ids=[r["id"] for r in test]
    )
    write_result(result, out / "scores_green", references, candidates)
    responses = [detail.get("response") or "" for detail in result.details["green"]]
    # the constant: the teacher's median count over all the demo's training pairs, not only the few trained on
    train = read_jsonl_records(out / "pairs" / "train.jsonl", ("response",))
    constant = teacher_medians({"response": [r["response"] for _, r in train]})
    agreement = agreement_from_responses(
        responses, [r["response"] for r in test], constant, prefix="test_", intervals=True
    )
    state["green_verdict"] = beats_constant(agreement)
    state["green_table"] = result.table()  # last: run() prints the table with its verdict
    answers = Counter(sum(d["significant"]) for d in result.details["green"] if "significant" in d)
    return green_row(agreement, answers)


def green_sft_args(out: Path) -> list[str]:
    """SFT on DEMO_GREEN_TRAIN_PAIRS of the demo's own pairs, with no final evaluation: the GREEN stage scores the
    export instead."""
    return [
        "--config",
        str(CONFIGS / "green/sft/small.yaml"),
        "--output_dir",
        str(out / "runs" / "green"),
        "--pairs_dir",
        str(out / "pairs"),
        "--max_train_samples",
        str(DEMO_GREEN_TRAIN_PAIRS),
        "--max_eval_samples",
        str(DEMO_GREEN_SCORE_PAIRS),
        "--final_eval_samples",
        "0",
        "--save_strategy",
        "no",
        "--learning_rate",
        str(DEMO_GREEN_LEARNING_RATE),
        "--lr_scheduler_type",
        "constant",
        "--prompt",
        DEMO_GREEN_PROMPT,
        "--max_length",
        str(DEMO_GREEN_MAX_LENGTH),
        "--per_device_train_batch_size",
        "1",
        "--gradient_accumulation_steps",
        str(DEMO_GREEN_ACCUMULATION),
    ]


def green_row(agreement: dict, answers: Counter) -> str:
    """The GREEN stage's table detail: what the short run reaches on the scored test pairs, whether it beats its
    constant (the teacher's training median) on the significant-error count (`beats_constant`), and whether its
    answers vary with the pair."""
    from radmetrics.training.green.evaluation import beats_constant

    measured = "no answer parsed"
    if "test_significant_mae" in agreement:
        measured = (
            f"significant-count MAE {agreement['test_significant_mae']:.2f} [95% CI"
            f" {agreement['test_significant_mae_ci95_low']:.2f}, {agreement['test_significant_mae_ci95_high']:.2f}]"
            f" vs {agreement['test_significant_mae_constant_baseline']:.2f} for its constant (training median),"
            f" difference {agreement['test_significant_mae_minus_constant']:+.2f}"
            f" [{agreement['test_significant_mae_minus_constant_ci95_low']:+.2f},"
            f" {agreement['test_significant_mae_minus_constant_ci95_high']:+.2f}]"
        )
    if len(answers) > 1:
        spread = (
            "answers vary with the pair (significant count: times "
            + ", ".join(f"{k}: {v}" for k, v in sorted(answers.items()))
            + ")"
        )
    elif answers:
        count, times = next(iter(answers.items()))
        spread = f"answers do NOT vary with the pair (significant count {count} for all {times} parsed)"
    else:
        spread = "no answer to vary"
    return (
        f"SmolLM2-135M-Instruct fine-tuned on {DEMO_GREEN_TRAIN_PAIRS} pairs, exported, scored on"
        f" {agreement['test_green_eval_pairs']} test pairs against the teacher: parse rate"
        f" {agreement['test_parse_rate']:.2f}, {measured}; beats its constant: {beats_constant(agreement).upper()};"
        f" {spread}"
    )


def stage_score(out: Path, state: dict) -> str:
    """Score example pairs (IU test reports against randomly matched other test reports) with every registered
    metric whose components exist but GREEN (its stage scored it), and print the table."""
    from radmetrics.inference.files.run_output import write_result
    from radmetrics.inference.scoring.registry import available_metrics
    from radmetrics.inference.scoring.scorer import Scorer

    references, candidates = demo_pairs(state["reports"], DEMO_PAIRS)
    components = state.get("components", {})
    result = Scorer([m for m in available_metrics(components) if m != "green"], components)(references, candidates)
    write_result(result, out / "scores", references, candidates)
    state["score_table"] = result.table()
    return f"{len(references)} pairs, metrics: {', '.join(result.summary)}"


def demo_pairs(reports: list, n: int) -> tuple[list[str], list[str]]:
    """The first n IU test reports, each against another of them (a seeded shuffle): the demo's scoring pairs."""
    import random

    test = [r for r in reports if r.split == "test"][:n]
    shuffled = test[:]
    random.Random(0).shuffle(shuffled)
    return [r.text for r in test], [r.text for r in shuffled]


def stage_llm_teacher(out: Path, state: dict) -> str:
    """GREEN annotations of 20 demo pairs by the configured LLM teacher (appendix A.1), parsed and cached."""
    from radmetrics.data_builders.pairs.llm_teacher import annotate_pairs
    from radmetrics.inference.llm.endpoint import Endpoint
    from radmetrics.inference.llm.engine import LLMEngine

    engine = LLMEngine(Endpoint.from_yaml(state["endpoint"]), out / "llm_cache.sqlite", max_reprompts=2)
    records, failures = annotate_pairs([p.to_dict() for p in state["pairs"][:20]], engine)
    engine.write_manifest(out / "teacher_manifest.json")
    return f"{len(records)} GREEN annotations by {engine.endpoint.name}, {len(failures)} failed"


def stage_llm_judges(out: Path, state: dict) -> str:
    """FineRadScore and RadFact on 10 demo pairs through the configured endpoint."""
    from radmetrics.inference.files.run_output import write_result
    from radmetrics.inference.scoring.scorer import Scorer

    references, candidates = demo_pairs(state["reports"], 10)
    result = Scorer(["fineradscore", "radfact"], endpoint=state["endpoint"], llm_cache=out / "llm_cache.sqlite")(
        references, candidates
    )
    write_result(result, out / "scores_llm", references, candidates)
    state["llm_score_table"] = result.table()
    failed = {name: meta["llm"]["totals"]["failed"] for name, meta in result.meta.items()}
    return f"{len(references)} pairs; LLM items failed: {failed}"


def stages() -> list[Stage]:
    return [
        Stage("data: corpus (IU X-ray, 80/10/10 by report)", stage_corpus),
        Stage(f"data: report pairs + semantic GREEN teacher ({DEMO_PAIR_REPORTS} reports)", stage_pairs),
        Stage("data: silver CheXpert / RaTE-NER / RadGraph labels", stage_silver),
        Stage("data: GREEN annotations by the LLM teacher (20 pairs)", stage_llm_teacher, needs_endpoint=True),
        Stage(f"train+export: RaTE-NER IOB ({ENCODER_SCALES['rate_ner/iob']})", stage_rate_ner),
        Stage(f"train+export: RaTE-NER span, PURE ({ENCODER_SCALES['rate_ner/span']})", stage_rate_ner_span),
        Stage(f"train+export: CheXbert-style labeler ({ENCODER_SCALES['chexbert/finetune']})", stage_chexbert),
        Stage(f"train+export: RadGraph-style extractor ({ENCODER_SCALES['radgraph/train']})", stage_radgraph),
        Stage("train+export: findings extractor (tiny: 150 reports' MeSH-aligned silver labels)", stage_findings),
        Stage("train+export: finding-pair judge (tiny: 1,200 synthesised finding pairs)", stage_judge),
        Stage(
            f"train+export+score: GREEN (SmolLM2-135M-Instruct, small recipe cut short: {DEMO_GREEN_TRAIN_PAIRS}"
            f" pairs; scored on {DEMO_GREEN_SCORE_PAIRS} test pairs)",
            stage_green,
        ),
        Stage(f"score: every other available metric on {DEMO_PAIRS} example pairs", stage_score),
        Stage("score: LLM judges (FineRadScore, RadFact) on 10 pairs", stage_llm_judges, needs_endpoint=True),
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default=OutputFolder("checkpoints/demo"),
        type=OutputFolder,
        help="where the demo writes data, runs and exports",
    )
    parser.add_argument("--endpoint", help="LLM endpoint YAML (configs/llm/): adds the teacher and LLM-judge stages")


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require_extra

    require_extra("train", for_what="radmetrics demo (it trains every component)")
    out = Path(args.out)
    if out.is_dir() and any(
        out.iterdir()
    ):  # exports refuse to overwrite, so a second demo into one folder would fail midway
        print(f"radmetrics demo: {out} exists and is not empty; delete it or pass another --out", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    state: dict = {"endpoint": args.endpoint}
    rows, failed = [], 0
    for stage in stages():
        if stage.run is None:
            rows.append((stage.name, "not built", stage.not_built_reason, 0.0))
            continue
        if stage.needs_endpoint and not args.endpoint:
            rows.append(
                (
                    stage.name,
                    "skipped",
                    "no LLM endpoint configured: radmetrics demo --endpoint configs/llm/NAME.yaml",
                    0.0,
                )
            )
            continue
        print(f"== {stage.name}", flush=True)
        start = time.perf_counter()
        try:
            detail = stage.run(out, state)
            rows.append((stage.name, "ok", detail, time.perf_counter() - start))
        except Exception as exc:  # the demo reports every stage; the traceback is printed, not swallowed
            traceback.print_exc()
            rows.append((stage.name, "FAILED", f"{type(exc).__name__}: {exc}", time.perf_counter() - start))
            failed += 1
    print("\n| stage | status | detail | seconds |\n|---|---|---|---|")
    for name, status, detail, secs in rows:
        print(f"| {name} | {status} | {detail} | {secs:.1f} |")
    if "score_table" in state:
        print(f"\nScores of {out / 'scores'} (IU test reports against shuffled ones):\n{state['score_table']}")
    if "green_table" in state:
        print(
            f"\nGREEN scores of {out / 'scores_green'} (test pairs of the demo's pair data):\n{state['green_table']}"
        )
        if state.get("green_verdict") != "yes":
            print(
                "green: the demo's short GREEN run does not beat its constant (beats its constant:"
                f" {state['green_verdict']}); its values show the pipeline, not a usable evaluator"
                " (benchmarks/green/green_small.py measures the full small recipe)."
            )
    if "llm_score_table" in state:
        print(f"\nLLM-judged scores ({out / 'scores_llm'}):\n{state['llm_score_table']}")
    return 1 if failed else 0
