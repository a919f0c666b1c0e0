"""radmetrics against the authors' packages and RadEval on full-size look-alikes: seconds, memory, same values.

    python benchmarks/speed/scoring_speed_vs_reference.py [--pairs 1000] \\
        [--metrics chexbert radgraph ratescore bertscore radcliq all] [--sides package radeval bf16] \\
        [--device cpu|cuda] [--lookalikes DIR] [--envs DIR] [--results FILE] [--no-profile]
    python benchmarks/speed/scoring_speed_vs_reference.py --pairs N --describe-pairs   # what N pairs hold, nothing run

1. builds (once, in --lookalikes, default checkpoints/lookalikes_full, ~3 GB) random-weight look-alikes of the released
   artefacts at their published sizes (tests/parity/lookalikes.py `build_full`): CheXbert (bert-base, 110 M
   parameters), RadGraph-XL (a BERT-base DyGIE model), RaTE-NER-Deberta (DeBERTa-v3-base, 128,100-row embedding) and
   BioLORD-2023-C (MPNet-base), with heads calibrated so that predictions vary as a trained model's do (about 20
   RadGraph entities and 12 RaTE-NER entities per IU report), distilroberta-base (RadCliQ's BERTScore encoder),
   distilbert-base-uncased (RadEval's `bertscore` encoder) and the original RadGraph (a BERT-base DyGIE model, which
   RadCliQ uses);
2. builds (once) the reference environments under --envs (tests/parity/make_fixtures.py: torch 2.13.0, then f1chexbert
   0.0.2, radgraph 0.1.18, ratescore 0.6.0, radeval 2.2.1);
3. runs every side in its own process on the same --pairs IU X-ray pairs
(benchmarks/speed/scoring_speed_vs_radeval.py's
   pairs): radmetrics' Scorer, the authors' package (benchmarks/speed/speed_reference_worker.py) and RadEval;
   `bertscore` is
   RadCliQ's BERTScore setting (distilroberta-base, layer 5, idf, rescaled), against the bert-score package and the
   BERTScorer RadEval's RadCliQ-v1 builds; `radcliq` is RadCliQ-v1 (its four parts on the original RadGraph, CheXbert,
   that BERTScore and BLEU-2) against RadEval's RadCliQ-v1 (no package of its own); `all` is the five in one process
   with RadEval's keys (radmetrics `Scorer([...])` with RadCliQ's models as its options, RadEval
   `RadEval(metrics=[...])`:
   RadGraph-XL, BERTScore on distilbert-base-uncased, RadCliQ-v1 on the original RadGraph and distilroberta-base);
4. records each side's first call (constructing the scorer, which loads the model, then scoring), warm call (the same
   object again), peak resident memory, entities found, and whether the values equal radmetrics' (classes and entities
   exactly, scores to 1e-5), and for radmetrics where a third call spends its time (cProfile, after the timed calls;
   not with --no-profile);
   writes benchmarks/results/scoring_speed_vs_reference[_cuda].json (after each metric, with "complete" false until the
   last) and prints a table.
   With --device cuda every side runs on the GPU (torch's first; --device cpu hides it), and radmetrics also scores the
   first --check-pairs pairs on the CPU: the row's `gpu_against_cpu` counts the labels, graphs and entities that differ
   between the two and the largest score difference.

The ratio compares warm calls: model loading is paid once per process and is reported apart (first call). Side `bf16`
is radmetrics itself with option precision=bf16 (bfloat16 autocast, on the `all` row RadCliQ's own RadGraph and
BERTScore included): its ratio is bf16 time / fp32 time (side / radmetrics,
as for the others), and instead of equality it records how much the values move (CheXbert labels that differ, reports
whose RadGraph graph or RaTE-NER entities differ, the largest score difference).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]

from speed_reference_worker import ALL, compact_graphs  # noqa: E402

from radmetrics.inference.metrics.radcliq import metric as radcliq_metric  # noqa: E402

METRICS = ("chexbert", "radgraph", "ratescore", "bertscore", "radcliq")
# RadCliQ-v1's model-based parts, each given its options (BLEU-2, the fourth, has none); RadCliQ has no package of its
# own (CXR-Report-Metric is a script), so RadEval's RadCliQ-v1 is its one reference side
RADCLIQ_PARTS = ("radgraph", "bertscore", "chexbert")
PACKAGE = {"chexbert": "f1chexbert", "radgraph": "radgraph", "ratescore": "ratescore", "bertscore": "bert-score"}
ENVIRONMENT = {
    "f1chexbert": "chexbert",
    "radgraph": "radgraph",
    "ratescore": "ratescore",
    "bert-score": "bertscore",
    "radeval": "radeval",
}
VERSIONS = {
    "f1chexbert": "f1chexbert 0.0.2",
    "radgraph": "radgraph 0.1.18",
    "ratescore": "ratescore 0.6.0",
    "radeval": "radeval 2.2.1",
    "bert-score": "bert-score 0.3.13 (transformers 4.49)",
    "bf16": "radmetrics, precision=bf16",
}
# RadCliQ's BERTScore (CXR-Report-Metric, RadEval's RadCliQ-v1): distilroberta-base, layer 5, idf over the references,
# rescaled with bert-score's baseline
RADCLIQ_BERTSCORE = {"model": "distilroberta-base", **radcliq_metric.RADCLIQ_BERTSCORE}
# RadEval 2.2.1's own `bertscore` key (radeval/metrics/bertscore/adapter.py): distilbert-base-uncased, layer 5, no idf,
# rescaled
RADEVAL_BERTSCORE = {"model": "distilbert-base-uncased", "num_layers": 5, "idf": False, "rescale_with_baseline": True}
RADEVAL_F1 = {
    f"chexbert_f1_{n}_{kind}": f"f1chexbert_{'all' if n == 14 else 5}_{kind}_f1"
    for n in (14, 5)
    for kind in ("micro", "macro", "weighted")
}
TOLERANCE = 1e-5


def scorer_setup(root: Path, metric: str | None = None) -> tuple[dict, dict]:
    """The components and options that point radmetrics at the look-alikes for one row (as
    tests/inference/test_released_parity.py does; None: those of the single-metric rows). `radcliq` runs on the
    original RadGraph, with RadCliQ's BERTScore as the run's
    `bertscore`; `all` computes RadEval's keys in one process: `radgraph` on RadGraph-XL, `bertscore` in RadEval's
    setting, and RadCliQ with models of its own (options radgraph_model, bertscore_model); the other rows use
    RadGraph-XL."""
    from parity import lookalikes

    def base(repo_id: str) -> str:
        return str(lookalikes.snapshot(root, repo_id))

    rrg = lookalikes.snapshot(root, lookalikes.RRG)
    radgraph = "radgraph" if metric == "radcliq" else "radgraph-xl"
    components = {
        "chexbert": str(rrg / "chexbert.pth"),
        "radgraph": str(rrg / f"{radgraph}.tar.gz"),
        "rate_ner": base("Angelakeke/RaTE-NER-Deberta"),
    }
    options = {
        "chexbert": {"base_model": base("bert-base-uncased")},
        "radgraph": {"base_model": base(lookalikes.RADGRAPH_BASES[radgraph]), "case": "reference"},
        "ratescore": {"encoder": base("FremyCompany/BioLORD-2023-C")},
        "bertscore": dict(RADEVAL_BERTSCORE if metric == "all" else RADCLIQ_BERTSCORE),
        "radcliq": (
            {
                "radgraph_model": str(rrg / "radgraph.tar.gz"),
                "radgraph_base_model": base(lookalikes.RADGRAPH_BASES["radgraph"]),
                "bertscore_model": RADCLIQ_BERTSCORE["model"],
            }
            if metric == "all"
            else {}
        ),
    }
    return components, options


def radmetrics_values(result) -> dict:
    values = {}
    if "chexbert" in result.details:
        details = result.details["chexbert"]
        values.update(
            reference_classes=[d["reference_labels"] for d in details],
            candidate_classes=[d["candidate_labels"] for d in details],
            f1={key: result.summary[key]["value"] for key in RADEVAL_F1},
        )
    if "radgraph" in result.details:
        details = result.details["radgraph"]
        values.update(
            rewards=[
                [row[f"radgraph_{level}"] for row in result.per_sample] for level in ("simple", "partial", "complete")
            ],
            reference_entities=compact_graphs([d["reference_annotation"] for d in details]),
            candidate_entities=compact_graphs([d["candidate_annotation"] for d in details]),
        )
    if "ratescore" in result.details:
        details = result.details["ratescore"]
        values.update(
            scores=[row["ratescore"] for row in result.per_sample],
            rate_reference_entities=[[list(e) for e in d["reference_entities"]] for d in details],
            rate_candidate_entities=[[list(e) for e in d["candidate_entities"]] for d in details],
        )
    if result.per_sample and "bertscore" in result.per_sample[0]:
        values.update(bertscore=[row["bertscore"] for row in result.per_sample])
    if result.per_sample and "radcliq_v1" in result.per_sample[0]:
        values.update(radcliq_v1=[row["radcliq_v1"] for row in result.per_sample])
    return json.loads(json.dumps(values))


def radmetrics_side(
    root: Path, metric: str, pairs: list[dict], precision: str = "fp32", profile: bool = False, check_pairs: int = 0
) -> dict:
    """radmetrics' own side, run in a fresh process by the driver (`--worker`). The first and warm calls are timed as
    the reference sides time theirs; with `profile`, a third call then runs under cProfile for `warm_profile`; with
    `check_pairs`, a last call scores the first that many pairs for `check_values` (which the driver compares with the
    CPU's)."""
    import torch

    from radmetrics.inference.loading.hub import inference_device
    from radmetrics.inference.scoring.scorer import Scorer

    names = list(ALL) if metric == "all" else [metric]
    components, options = scorer_setup(root, metric)
    own_models = any(
        options.get("radcliq", {}).get(o) for o in ("radgraph_model", "bertscore_model")
    )  # the `all` row's RadCliQ
    # precision: the encoder metrics, and RadCliQ where it runs models of its own
    encoders = [n for n in (RADCLIQ_PARTS if metric == "radcliq" else names) if n != "radcliq" or own_models]
    refs, hyps = [p["ref"] for p in pairs], [p["hyp"] for p in pairs]
    start = time.perf_counter()
    scorer = Scorer(
        names,
        components,
        {**{n: options[n] for n in names}, **{n: {**options[n], "precision": precision} for n in encoders}},
        n_bootstrap=0,
    )
    values = radmetrics_values(scorer(refs, hyps))
    first = time.perf_counter() - start
    start = time.perf_counter()
    again = radmetrics_values(scorer(refs, hyps))
    warm = time.perf_counter() - start
    device = inference_device()
    result = {
        "first_call_seconds": first,
        "warm_seconds": warm,
        "values": values,
        "warm_values_equal": again == values,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch_threads": torch.get_num_threads(),
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
    }
    if device.startswith("cuda"):
        result["peak_gpu_memory_mib"] = torch.cuda.max_memory_allocated() / 2**20
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        scorer(refs, hyps)
        profiler.disable()
        result["warm_profile"] = profile_rows(profiler)
    if check_pairs:
        result["check_values"] = radmetrics_values(scorer(refs[:check_pairs], hyps[:check_pairs]))
    return result


def profile_rows(profiler: cProfile.Profile, rows: int = 14) -> list[str]:
    """Where the warm call's time goes: the functions with the most cumulative time (profiled, so slower than
    timed)."""
    stats = pstats.Stats(profiler)
    ranked = sorted(stats.stats.items(), key=lambda item: item[1][3], reverse=True)
    out = []
    for (path, line, function), (_, calls, _, cumulative, _) in ranked[:rows]:
        out.append(f"{cumulative:8.2f} s  {calls:7d} calls  {Path(path).name}:{line} {function}")
    return out


def close(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= TOLERANCE)
        for x, y in zip(a, b)
    )


def value_checks(metric: str, side: str, ours: dict, theirs: dict) -> dict:
    """Which of the side's values equal radmetrics' (classes and entities exactly, scores to 1e-5)."""
    checks = {}
    if metric == "bertscore":
        return {"scores": close(ours["bertscore"], theirs["bertscore"])}
    if metric in ("radcliq", "all"):
        checks["radcliq_v1"] = close(ours["radcliq_v1"], theirs["radcliq_v1"])
    if metric == "all":
        checks["bertscore"] = close(ours["bertscore"], theirs["bertscore"])
    if metric == "radcliq":
        return checks
    if side == "radeval":
        if metric in ("chexbert", "all"):
            checks["chexbert_f1"] = all(abs(ours["f1"][k] - theirs[v]) <= TOLERANCE for k, v in RADEVAL_F1.items())
        if metric in ("radgraph", "all"):
            checks["radgraph_rewards"] = all(
                close(ours["rewards"][i], theirs[f"radgraph_{level}"])
                for i, level in enumerate(("simple", "partial", "complete"))
            )
        if metric in ("ratescore", "all"):
            checks["ratescore_scores"] = close(ours["scores"], theirs["ratescore"])
        return checks
    if metric == "chexbert":
        checks["classes"] = (
            ours["reference_classes"] == theirs["reference_classes"]
            and ours["candidate_classes"] == theirs["candidate_classes"]
        )
        checks["f1"] = all(abs(ours["f1"][k] - theirs["f1"][k]) <= TOLERANCE for k in ours["f1"])
    elif metric == "radgraph":
        checks["entities_and_relations"] = (
            ours["reference_entities"] == theirs["reference_entities"]
            and ours["candidate_entities"] == theirs["candidate_entities"]
        )
        checks["rewards"] = all(close(a, b) for a, b in zip(ours["rewards"], theirs["rewards"]))
    else:
        checks["entities"] = (
            ours["rate_reference_entities"] == theirs["reference_entities"]
            and ours["rate_candidate_entities"] == theirs["candidate_entities"]
        )
        checks["scores"] = close(ours["scores"], theirs["scores"])
        if not checks[
            "scores"
        ]:  # exact ties between equally close entity matches are broken by the CPU kernel (see the parity test)
            checks["scores_differing"] = sum(not close([a], [b]) for a, b in zip(ours["scores"], theirs["scores"]))
    return checks


def precision_changes(metric: str, ours: dict, theirs: dict) -> dict:
    """How far `theirs` moved from `ours` (bf16 values from fp32 ones, the GPU's from the CPU's): items that differ and
    the largest score difference."""

    def largest(a: list, b: list) -> float:
        return max((abs(x - y) for x, y in zip(a, b) if x is not None and y is not None), default=0.0)

    def differing(a: list, b: list) -> int:
        return sum(x != y for x, y in zip(a, b))

    changes = {}
    if "reference_classes" in ours:
        labels = [
            (x, y)
            for side in ("reference_classes", "candidate_classes")
            for r, h in zip(ours[side], theirs[side])
            for x, y in zip(r, h)
        ]
        changes.update(
            chexbert_labels=len(labels),
            chexbert_labels_differing=sum(x != y for x, y in labels),
            chexbert_f1_largest_difference=max(abs(ours["f1"][k] - theirs["f1"][k]) for k in ours["f1"]),
        )
    if "rewards" in ours:
        changes.update(
            radgraph_reports=2 * len(ours["rewards"][0]),
            radgraph_reports_differing=differing(
                ours["reference_entities"] + ours["candidate_entities"],
                theirs["reference_entities"] + theirs["candidate_entities"],
            ),
            radgraph_reward_largest_difference=max(largest(a, b) for a, b in zip(ours["rewards"], theirs["rewards"])),
        )
    if "bertscore" in ours:
        changes.update(bertscore_largest_difference=largest(ours["bertscore"], theirs["bertscore"]))
    if "scores" in ours:
        changes.update(
            ratescore_reports=2 * len(ours["scores"]),
            ratescore_reports_differing=differing(
                ours["rate_reference_entities"] + ours["rate_candidate_entities"],
                theirs["rate_reference_entities"] + theirs["rate_candidate_entities"],
            ),
            ratescore_largest_difference=largest(ours["scores"], theirs["scores"]),
        )
    if "radcliq_v1" in ours:
        changes.update(radcliq_v1_largest_difference=largest(ours["radcliq_v1"], theirs["radcliq_v1"]))
    return changes


def entity_count(metric: str, values: dict) -> int | None:
    if metric in ("radgraph", "radcliq") and "reference_entities" in values:
        return sum(len(e) for e in values["reference_entities"] + values["candidate_entities"])
    if metric == "ratescore" and ("rate_reference_entities" in values or "reference_entities" in values):
        ref, cand = (
            (values["rate_reference_entities"], values["rate_candidate_entities"])
            if "rate_reference_entities" in values
            else (values["reference_entities"], values["candidate_entities"])
        )
        return sum(len(e) for e in ref + cand)
    return None


def run(command: list[str], env: dict, out: Path) -> dict:
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run(command, env=env, cwd=out.parent, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


def prepare_work(work: Path, root: Path, pairs: list[dict], check_pairs: int = 0) -> Path:
    """A scratch folder for the side processes: the pairs (and the first `check_pairs` of them apart), and an XDG cache
    where f1chexbert finds the look-alike."""
    (work / "pairs.json").write_text(json.dumps(pairs), encoding="utf-8")
    if check_pairs:
        (work / "check_pairs.json").write_text(json.dumps(pairs[:check_pairs]), encoding="utf-8")
    (work / "xdg").mkdir(exist_ok=True)
    for source in ("chexbert",):  # f1chexbert 0.0.2 reads XDG_CACHE_HOME/chexbert/chexbert.pth
        if not (work / "xdg" / source).exists():
            (work / "xdg" / source).symlink_to(root / "xdg" / source, target_is_directory=True)
    return work


def worker_environment(root: Path, work: Path, side: str, metric: str) -> dict:
    """Offline, the Hub cache at the look-alikes; RadEval writes into its caches, so it gets a fresh XDG cache of its
    own."""
    return {**os.environ, **worker_settings(root, work, side, metric)}


def worker_settings(root: Path, work: Path, side: str, metric: str) -> dict:
    """The variables worker_environment sets over the caller's environment."""
    cache = work / f"xdg_radeval_{metric}" if side == "radeval" else work / "xdg"
    return {
        "HF_HOME": str(root / "hf"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "XDG_CACHE_HOME": str(cache),
        "TOKENIZERS_PARALLELISM": "false",
        "RADMETRICS_CACHE": str(work / "cache"),
    }


def worker_command(
    side: str,
    metric: str,
    root: Path,
    work: Path,
    out: Path,
    device: str = "cpu",
    python=None,
    profile: bool = False,
    check_pairs: int = 0,
    pairs_name: str = "pairs.json",
) -> list[str]:
    """One side's process for `metric` on work/`pairs_name`: radmetrics (or radmetrics in bf16) through this script's
    --worker (`profile`: a profiled third call after the timed ones; off where whole processes are timed;
    `check_pairs`:
    then the first that many pairs' values), a reference side through speed_reference_worker.py with that side's
    `python`."""
    pairs = work / pairs_name
    if side in ("radmetrics", "bf16"):
        return [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            metric,
            "--precision",
            "bf16" if side == "bf16" else "fp32",
            "--lookalikes",
            str(root),
            "--pairs-file",
            str(pairs),
            "--out",
            str(out),
            *(["--profile"] if profile else []),
            "--check-pairs",
            str(check_pairs),
        ]  # always: the option's default, 50, is the driver's
    return [
        str(python),
        str(HERE / "speed_reference_worker.py"),
        "--side",
        side,
        "--metric",
        metric,
        "--root",
        str(root),
        "--pairs",
        str(pairs),
        "--out",
        str(out),
        "--device",
        device,
    ]


def pairs_description(pairs: list[dict]) -> dict:
    """What radmetrics' cost follows: it runs each distinct report once per call, so its time grows with the distinct
    reports and their words, while a side that runs every report grows with the pairs."""
    texts = [text for pair in pairs for text in (pair["ref"], pair["hyp"])]
    distinct = set(texts)
    return {
        "pairs": len(pairs),
        "distinct_reports": len(distinct),
        "words_in_distinct_reports": sum(len(text.split()) for text in distinct),
        "words_in_all_reports": sum(len(text.split()) for text in texts),
    }


def cuda_device_name() -> str:
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA GPU")
    return torch.cuda.get_device_name(0)


def lookalikes_ready(directory: Path) -> Path:
    """`directory` with every full-size look-alike: those its marker does not name are built (each takes a minute or
    two) and added to it."""
    from parity import lookalikes

    marker = directory / ".built"
    built = marker.read_text(encoding="utf-8").split() if marker.is_file() else []
    missing = [name for name in lookalikes.FULL_ARTEFACTS if name not in built]
    if missing:
        print(f"building full-size look-alikes in {directory}: {' '.join(missing)}", file=sys.stderr, flush=True)
        start = time.perf_counter()
        lookalikes.build_full(directory, missing)
        print(f"built in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        marker.write_text(" ".join([*built, *missing]) + "\n", encoding="utf-8")
    return directory


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--metrics", nargs="+", choices=[*METRICS, "all"], default=[*METRICS, "all"])
    parser.add_argument(
        "--sides",
        nargs="*",
        choices=["package", "radeval", "bf16"],
        default=["package", "radeval"],
        help="the sides beside radmetrics' own (none: radmetrics alone, e.g. to see how its cost grows)",
    )
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="cuda: radmetrics runs on the GPU (it picks one when torch sees it) and so do the reference sides",
    )
    parser.add_argument(
        "--check-pairs",
        type=int,
        default=50,
        help=(
            "with --device cuda: radmetrics also scores the first N pairs on the CPU (CUDA hidden), and the "
            "row records how the GPU's values differ (0: no check)"
        ),
    )
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help=(
            "skip radmetrics' profiled third call (with cProfile, pure-Python work such as RaTEScore's "
            "sentence splitter takes several times its timed cost)"
        ),
    )
    parser.add_argument("--lookalikes", type=Path, default=REPO / "checkpoints" / "lookalikes_full")
    parser.add_argument("--envs", type=Path, default=REPO / ".venv-ref")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # internal: radmetrics' side in a fresh process
    parser.add_argument("--pairs-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--precision", default="fp32", help=argparse.SUPPRESS
    )  # internal: the worker's precision option
    parser.add_argument(
        "--profile", action="store_true", help=argparse.SUPPRESS
    )  # internal: the worker profiles a third call
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--results", type=Path, help="default: benchmarks/results/scoring_speed_vs_reference[_cuda].json"
    )
    parser.add_argument(
        "--describe-pairs",
        action="store_true",
        help="print the --pairs pairs' distinct reports and words (what radmetrics' cost follows) and exit",
    )
    return parser


def run_worker(args: argparse.Namespace) -> None:
    """--worker: radmetrics' side of one row in this fresh process, its figures and values written to --out."""
    from radmetrics.inference.files.atomic import write_text

    pairs = json.loads(args.pairs_file.read_text(encoding="utf-8"))
    write_text(
        args.out,
        json.dumps(
            radmetrics_side(args.lookalikes, args.worker, pairs, args.precision, args.profile, args.check_pairs)
        ),
    )


def side_environments(args: argparse.Namespace) -> dict[str, Path | None]:
    """{side: the python of its reference environment (built once), or None for radmetrics' own sides}."""
    from parity.make_fixtures import environment

    sides = {"radmetrics": None}
    for metric in args.metrics:
        for kind in args.sides:
            if kind == "radeval":
                sides["radeval"] = environment(args.envs, "radeval")
            elif kind == "bf16":
                sides["bf16"] = None
            elif metric in PACKAGE:
                sides[PACKAGE[metric]] = environment(args.envs, ENVIRONMENT[PACKAGE[metric]])
    return sides


def radmetrics_rows(metric: str, args: argparse.Namespace, root: Path, work: Path, sides: dict, check: int) -> dict:
    """radmetrics' side of a row (with its GPU-against-CPU check when `check`), and its bf16 side when asked."""
    row = {}
    out = work / f"radmetrics_{metric}.json"
    row["radmetrics"] = run(
        worker_command("radmetrics", metric, root, work, out, profile=not args.no_profile, check_pairs=check),
        worker_environment(root, work, "radmetrics", metric),
        out,
    )
    if check:
        out = work / f"cpu_{metric}.json"
        cpu = run(
            worker_command("radmetrics", metric, root, work, out, pairs_name="check_pairs.json"),
            {**worker_environment(root, work, "radmetrics", metric), "CUDA_VISIBLE_DEVICES": ""},
            out,
        )
        row["radmetrics"]["gpu_against_cpu"] = {
            "pairs": check,
            "cpu_device": cpu["device"],
            **precision_changes(metric, cpu["values"], row["radmetrics"].pop("check_values")),
        }
    if "bf16" in sides:
        out = work / f"bf16_{metric}.json"
        row["bf16"] = run(
            worker_command("bf16", metric, root, work, out),
            worker_environment(root, work, "bf16", metric),
            out,
        )
        row["bf16"]["bf16_changes"] = precision_changes(metric, row["radmetrics"]["values"], row["bf16"]["values"])
    return row


def add_reference_rows(row: dict, metric: str, args: argparse.Namespace, root: Path, work: Path, sides: dict) -> None:
    """The reference sides that compute `metric` (its package, RadEval), each checked against radmetrics' values."""
    for side, python in sides.items():
        if side in ("radmetrics", "bf16") or (side != "radeval" and side != PACKAGE.get(metric)):
            continue
        out = work / f"{side}_{metric}.json"
        row[side] = run(
            worker_command(side, metric, root, work, out, args.device, python),
            worker_environment(root, work, side, metric),
            out,
        )
        row[side]["values_equal_radmetrics"] = value_checks(
            metric, side, row["radmetrics"]["values"], row[side]["values"]
        )


def finish_row(row: dict, metric: str) -> None:
    """Each side's values replaced by its entity count, and the other sides' versions and ratios to radmetrics."""
    for side, found in row.items():
        found["entities_found"] = entity_count(metric, found["values"])
        found.pop("values")
        if side != "radmetrics":
            found["version"] = VERSIONS[side]
            found["warm_over_radmetrics"] = found["warm_seconds"] / row["radmetrics"]["warm_seconds"]
            found["first_call_over_radmetrics"] = found["first_call_seconds"] / row["radmetrics"]["first_call_seconds"]


def results_header(pairs: list[dict], gpu: str | None) -> dict:
    """The results file before its rows: the machine, the command, the pairs and the look-alikes."""
    return {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, {gpu or 'no GPU used'}",
        "command": "python benchmarks/speed/scoring_speed_vs_reference.py " + " ".join(sys.argv[1:]),
        "pairs": len(pairs),
        "pairs_described": pairs_description(pairs),
        "pairs_source": (
            "bundled IU X-ray reports, each against another report (seed 0; past the corpus size, seeds 1, 2, ...)"
        ),
        "lookalikes": "tests/parity/lookalikes.py build_full (published sizes, random weights, calibrated heads)",
        "metrics": {},
    }


def print_table(results: dict, pairs: int, path: Path) -> None:
    print(
        f"{pairs} pairs, {results['machine']}\n\n| metric | side | first call s | warm s | warm ratio (side /"
        " radmetrics) | peak RSS MiB | entities | values equal radmetrics |\n|---|---|---|---|---|---|---|---|"
    )
    for metric, row in results["metrics"].items():
        for side, found in row.items():
            ratio = f"{found['warm_over_radmetrics']:.2f}" if side != "radmetrics" else "1"
            check = found.get("values_equal_radmetrics", found.get("bf16_changes", found.get("gpu_against_cpu", "-")))
            print(
                f"| {metric} | {found.get('version', 'radmetrics')} | {found['first_call_seconds']:.1f} |"
                f" {found['warm_seconds']:.1f} | "
                f"{ratio} | {found['peak_rss_mib']:.0f} |"
                f" {found['entities_found'] if found['entities_found'] is not None else '-'} | "
                f"{check} |"
            )
    print(f"\nwrote {path}")


def main(argv: list[str] | None = None) -> None:
    from scoring_speed_vs_radeval import benchmark_pairs

    from radmetrics.inference.files.atomic import write_text

    args = argument_parser().parse_args(argv)
    if args.worker:
        run_worker(args)
        return
    pairs = benchmark_pairs(args.pairs)
    if args.describe_pairs:
        print(json.dumps(pairs_description(pairs), indent=1))
        return
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = (
            ""  # every side's process inherits it: radmetrics would pick a GPU it sees
        )
    gpu = cuda_device_name() if args.device == "cuda" else None
    check = args.check_pairs if gpu else 0
    suffix = "_cuda" if args.device == "cuda" else ""
    path = args.results or HERE.parent / "results" / f"scoring_speed_vs_reference{suffix}.json"
    root = lookalikes_ready(args.lookalikes)
    sides = side_environments(args)
    results = results_header(pairs, gpu)
    with tempfile.TemporaryDirectory() as work:
        work = prepare_work(Path(work), root, pairs, check)
        for metric in args.metrics:
            row = radmetrics_rows(metric, args, root, work, sides, check)
            add_reference_rows(row, metric, args, root, work, sides)
            finish_row(row, metric)
            results["metrics"][metric] = row
            print(json.dumps({metric: row}, indent=1), file=sys.stderr, flush=True)
            results["complete"] = metric == args.metrics[-1]
            # after each metric: a run stopped early keeps its rows
            write_text(path, json.dumps(results, indent=2) + "\n")
    print_table(results, len(pairs), path)


if __name__ == "__main__":
    main()
