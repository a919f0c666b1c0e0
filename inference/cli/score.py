"""`radmetrics score --refs FILE --hyps FILE [--metrics ...] [--components DIR] --out DIR`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..files.output_paths import ensure_output_dir
from ..files.pair_stream import ReportSide, streamed_pairs
from ..files.report_io import ReportFileError, pair_reports, read_columns, read_reports, refuse_silent_pairing
from ..loading.discovery import discover_components
from ..metrics.base import OptionError
from ..scoring import registry
from ..scoring.baselines import DEFAULT_TEMPLATE, BaselineError, baselines_table, score_baselines
from ..scoring.option_flags import parse_option_flags
from ..scoring.registry import available_metrics
from ..scoring.score_run import score_into_folder
from ..scoring.scorer import Scorer
from ..scoring.streaming import DEFAULT_CHUNK, checked_source

HELP = "score candidate reports against references with any set of metrics, with bootstrap CIs"
DESCRIPTION = """Score candidate reports against references.

Inputs: .txt (one report per line), .csv, .jsonl or .json (a list of strings or objects); pick the
field with --ref-field/--hyp-field (default 'report' or 'text'). The two files must pair up one to one.
JSON(L) fields may also hold grounded reports (lists of {"text", "boxes"}), which RadFact scores.
Writes OUT/per_sample.jsonl, OUT/summary.json ({key: {value, ci95, n, not_scored}}), OUT/summary.md,
OUT/details/METRIC.jsonl (per-pair detail: FineRadScore corrections, RadFact evidence, ...) and
OUT/run.json (what each metric reproduces, each key's signature, the input files' sha256 and the number of pairs; LLM
endpoint without secrets and totals) and OUT/report.html (a page to read
the run: summary, distributions, a sortable and filterable table of the pairs, each pair's detail), and prints the \
table.
The pairs are scored in chunks (--chunk-size) appended to OUT/scores.stream.jsonl (a header of signatures and input
checksums, then each pair's values, statistics and details); every output is built from it. Run the same command
again after a kill and it resumes after the last complete chunk; a folder with a finished run, or a run of other inputs
or options, is refused unless --overwrite.
Without --metrics, every registered metric whose components are available runs; the LLM-judged metrics
(fineradscore, radfact) run when --endpoint names an endpoint YAML.

Components: radmetrics exports (a directory with radmetrics.json, a directory of them, or a Hub id), the metric
authors' released weights as KIND=PATH or KIND=NAME (KIND: chexbert, radgraph, rate_ner, green; NAME from
`radmetrics weights list`), or `released` for every kind's default release (from the Hugging Face cache or the Hub).

Examples: radmetrics score --refs refs.txt --hyps hyps.txt --metrics bleu2 rougeL semantic_green --out scores/
          radmetrics score --refs refs.txt --hyps hyps.txt --components released --out scores/
          radmetrics score --refs refs.txt --hyps hyps.txt --components chexbert=chexbert.pth \
radgraph=radgraph-xl.tar.gz --out scores/
          radmetrics score --refs refs.txt --hyps hyps.txt --metrics fineradscore --endpoint \
configs/llm/openai_gpt4o.yaml --out scores/"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs", help="reference reports file")
    parser.add_argument("--hyps", help="candidate (generated) reports file")
    add_report_field_arguments(parser)
    add_scoring_arguments(parser)
    parser.add_argument("--out", help="output directory")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=DEFAULT_CHUNK,
        help=(
            "pairs scored and written per chunk (default %(default)s); a run cut short resumes after its last "
            "complete chunk when the same command runs again"
        ),
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a finished run, or a run of other inputs or options, in --out (refused without it)",
    )
    parser.add_argument("--list", action="store_true", help="list the metrics and score keys, then exit")
    parser.add_argument(
        "--baselines",
        action="store_true",
        help=(
            "also score two naive baselines on your references with the same metrics (another patient's "
            "report, a normal template) and say where the system stands; roughly triples the time"
        ),
    )
    parser.add_argument(
        "--baseline-template",
        default=None,
        help="the normal template baseline's report (default: 'No acute cardiopulmonary process.')",
    )
    parser.add_argument(
        "--context-fields",
        nargs="+",
        default=[],
        metavar="COLUMN[=NAME]",
        help=(
            "columns of the references file (CSV/JSONL/JSON) that give each pair's patient context to the metrics "
            "that read one (CRIMSON), e.g. PatientAge=Age Indication"
        ),
    )
    parser.add_argument(
        "--signature-only",
        action="store_true",
        help="print each score key's signature (everything that changes its value) without scoring",
    )


def add_report_field_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref-field", help="field/column of the references in CSV/JSON(L) files")
    parser.add_argument("--hyp-field", help="field/column of the candidates in CSV/JSON(L) files")
    parser.add_argument(
        "--id-field",
        help=(
            "field/column that pairs the two files (default: 'id' where present, e.g. "
            "study_id for MIMIC; '' pairs by position)"
        ),
    )
    parser.add_argument("--ref-id-field", help="the references' id field, where it differs from --id-field")
    parser.add_argument("--hyp-id-field", help="the candidates' id field, where it differs from --id-field")


def id_fields(args: argparse.Namespace) -> tuple[tuple[str, bool], tuple[str, bool]]:
    """((field, named by the user), ...) for the references and the candidates: a named field must exist."""

    def pick(side: str | None) -> tuple[str, bool]:
        if side is not None:
            return side, True
        if args.id_field is not None:
            return args.id_field, True
        return "id", False

    return pick(args.ref_id_field), pick(args.hyp_id_field)


def read_pairs_from_args(args: argparse.Namespace, hyps_path: str):
    """(references, candidates, ids) of --refs and one candidates file, paired by the id fields the arguments name."""
    (ref_id, ref_named), (hyp_id, hyp_named) = id_fields(args)
    if not (ref_named or hyp_named):
        refuse_silent_pairing(args.refs, hyps_path)
    references = refuse_no_reports(read_reports(args.refs, args.ref_field, ref_id, id_required=ref_named), args.refs)
    candidates = refuse_no_reports(
        read_reports(hyps_path, args.hyp_field, hyp_id, allow_empty=True, id_required=hyp_named), hyps_path
    )
    return pair_reports(*references, *candidates)


def pairs_from_args(args: argparse.Namespace, hyps_path: str):
    """The pairs of --refs and one candidates file, checked and indexed (files.pair_stream): .txt and .jsonl files are
    read a chunk at a time as they are scored, others whole."""
    (ref_id, ref_named), (hyp_id, hyp_named) = id_fields(args)
    if not (ref_named or hyp_named):
        refuse_silent_pairing(args.refs, hyps_path)
    return streamed_pairs(
        ReportSide(Path(args.refs), args.ref_field, ref_id, False, ref_named),
        ReportSide(Path(hyps_path), args.hyp_field, hyp_id, True, hyp_named),
    )


def refuse_no_reports(read: tuple[list, list[str] | None], path: str) -> tuple[list, list[str] | None]:
    """`read_reports`' answer, or ReportFileError (one line) when the file holds no report at all."""
    if not read[0]:
        raise ReportFileError(f"{path}: no reports in the file; give a file with at least one report")
    return read


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    """The metric, component, option and LLM arguments `score`, `compare` and `meta-eval` share."""
    parser.add_argument(
        "--metrics",
        nargs="+",
        help=(
            "metric names or score keys, separated by spaces or commas (default: "
            "every metric whose components are given)"
        ),
    )
    parser.add_argument(
        "--components",
        nargs="+",
        default=[],
        help=(
            "exports (directories, Hub ids, a directory holding several), KIND=PATH or KIND=NAME for the "
            "authors' released weights, or `released` for all of them"
        ),
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METRIC.KEY=VALUE",
        help="a metric option, e.g. radgraph.case=reference or green.parser=reference (repeatable)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help=(
            "for every metric that loads a model: run code shipped in a released model's repository (today only "
            "GREEN-RadLlama2-7b's tokenizer needs it)"
        ),
    )
    for flag in REMOVED_FLAGS:  # kept only to say what replaced them
        parser.add_argument(flag, dest=removed_dest(flag), help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help="LLM endpoint YAML for the LLM-judged metrics (see configs/llm/)")
    parser.add_argument(
        "--llm-cache",
        help="SQLite cache of LLM answers (default: OUT/llm_cache.sqlite); reruns re-send nothing cached",
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the 95%% CIs")
    parser.add_argument("--seed", type=int, default=0)


def metric_names(args: argparse.Namespace) -> list[str] | None:
    return [name for item in args.metrics for name in item.split(",") if name] if args.metrics else None


def build_scorer(args: argparse.Namespace, out: Path, n_bootstrap: int | None = None):
    """The Scorer the shared arguments describe; without --metrics, every metric the components and endpoint allow."""
    components = discover_components(args.components)
    metrics = metric_names(args) or available_metrics(components, endpoint=bool(args.endpoint))
    return Scorer(
        metrics,
        components,
        metric_options=metric_options(args),
        n_bootstrap=args.bootstrap if n_bootstrap is None else n_bootstrap,
        seed=args.seed,
        endpoint=args.endpoint,
        llm_cache=args.llm_cache or out / "llm_cache.sqlite",
    )


# Metric settings are --option METRIC.KEY=VALUE; these flags were removed, each naming its replacement.
REMOVED_FLAGS = {
    "--bertscore-model": "bertscore.model",
    "--radcliq-constants": "radcliq.constants",
    "--ratescore-matrix": "ratescore.matrix",
}


def removed_dest(flag: str) -> str:
    return "removed_" + flag.strip("-").replace("-", "_")


def metric_options(args: argparse.Namespace) -> dict:
    """Every --option METRIC.KEY=VALUE and --trust-remote-code (`option_flags.parse_option_flags`); OptionError (one
    line) for a bad one, or for a removed flag, naming its --option."""
    for flag, replacement in REMOVED_FLAGS.items():
        if getattr(args, removed_dest(flag), None) is not None:
            raise OptionError(f"{flag} was removed: use --option {replacement}=VALUE")
    return parse_option_flags(args.option, args.trust_remote_code)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for spec in registry.metrics().values():
            print(describe_metric(spec))
        return 0
    if args.signature_only:
        for signature in build_scorer(args, Path(args.out or ".")).signatures().values():
            print(signature)
        return 0
    if not (args.refs and args.hyps and args.out):
        raise SystemExit("radmetrics score: --refs, --hyps and --out are required")
    if args.chunk_size < 1:
        raise OptionError(f"--chunk-size {args.chunk_size}: give a number of pairs >= 1")
    scorer = build_scorer(args, Path(args.out))  # checks every option before any file or model loads
    out = ensure_output_dir(args.out, what="--out")
    source = checked_source(scorer, pairs_from_args(args, args.hyps), context_from_args(args))
    result, baselines = score_into_folder(
        scorer,
        source,
        out,
        {"references": args.refs, "candidates": args.hyps},
        reading_settings(args),
        args.chunk_size,
        overwrite=args.overwrite,
        report=lambda line: print(f"radmetrics score: {line}", file=sys.stderr, flush=True),
        baselines=(lambda result: baselines_of(args, scorer, source, result)) if args.baselines else None,
    )
    print(result.table())
    if baselines:
        print(
            "\nBaselines on the same references:\n"
            + baselines_table(result.summary, baselines, baselines.get("rexrank"))
        )
    for warning in result.warnings:
        print(f"radmetrics score: warning: {warning}", file=sys.stderr)
    print_llm_totals(result)
    return 0


def reading_settings(args: argparse.Namespace) -> dict:
    """How the inputs are read and paired: a resumed run must read them the same way."""
    names = ("ref_field", "hyp_field", "id_field", "ref_id_field", "hyp_id_field", "context_fields")
    return {name: getattr(args, name) for name in names}


def baselines_of(args: argparse.Namespace, scorer, source, result) -> dict | None:
    """The naive baselines on the same references (`--baselines`), or None with a warning when there are none."""
    result.per_sample = [{"id": i} for i in source.ids]  # the baselines pair with the system's pairs by position
    references = source.chunk(0, len(source))[0]  # the baselines are scored in memory, as before
    try:
        return score_baselines(scorer, references, result, args.baseline_template or DEFAULT_TEMPLATE, args.seed)
    except BaselineError as exc:  # the scores are still written, without baselines
        print(f"radmetrics score: warning: no baselines: {exc}", file=sys.stderr)
        return None


def context_from_args(args: argparse.Namespace) -> list[dict] | None:
    """Each reference's context from --context-fields COLUMN[=NAME] (the prompt names the field NAME), or None."""
    if not args.context_fields:
        return None

    names = dict(item.partition("=")[::2] for item in args.context_fields)
    rows = read_columns(args.refs, list(names))
    return [{(names[column] or column): value for column, value in row.items()} for row in rows]


def describe_metric(spec) -> str:
    """A metric for `score --list`: its keys, what it needs, what it reproduces and its options with their defaults."""
    needs = [*spec.requires_components, *(("an LLM endpoint",) if spec.judged_by_llm else ())]
    lines = [
        f"{spec.name}: {', '.join(spec.keys)}{f'  (needs: {chr(44).join(needs)})' if needs else ''}",
        f"    reproduces: {spec.reference}",
    ]
    lines.extend(
        f"    --option {spec.name}.{name}={option.default!r}: {option.help} [{option.allowed()}]"
        f"{'' if option.changes_values else ' (does not change values)'}"
        for name, option in spec.declared_options().items()
    )
    return "\n".join(lines)


def print_llm_totals(result) -> None:
    for name, meta in result.meta.items():
        if "llm" in meta:
            totals = meta["llm"]["totals"]
            print(
                f"{name}: {totals['answered']} LLM answers ({totals['cache_hits']} from cache), {totals['failed']}"
                f" failed; {totals['prompt_tokens']} prompt + {totals['completion_tokens']} completion tokens"
            )
