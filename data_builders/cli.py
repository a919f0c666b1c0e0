"""`radmetrics data ...`: build corpora and training data."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from radmetrics.inference.files.output_paths import OutputFolder

from .judge_pairs import command as judge_pairs
from .labels.import_command import add_import_parser

HELP = "build corpora and training data: corpus, GREEN pairs + teacher, pretraining text, silver labels"
DESCRIPTION = """Build data for the recipes. Subcommands:

  corpus   read a corpus (IU X-ray bundled by default, ReXrank JSON, MIMIC-style free text,
           CSV/JSONL with configurable columns), assign deterministic splits, write reports.jsonl

  Splits (--split-by text, the default) group reports by normalised text, so no held-out report repeats a
  train report; corpus_stats.json (data corpus), every other stats.json and card record the overlap between splits
  (reports and sentences).

  pairs    reference/candidate pairs by the five GREEN heuristics, each with an edit log and a
           programmatic GREEN annotation; JSONL + HF dataset + dataset card

  inject-errors    LLM-written candidates (GREEN appendix A.4): sampled error categories, or a rephrasing
  annotate         GREEN annotations of any pairs (CSV or JSONL; split by reference report with a leakage check
                   into train/validation/test.jsonl, which green/sft and crimson/sft read as they are): by the
                   semantic teacher (semantic_green: sentence matching and
                   word rules that agree with radiologists, no LLM), or by an LLM teacher (appendix A.1, --endpoint),
                   validated by the GREEN parser and resumable (answers are cached; a rerun re-sends nothing answered);
                   --format crimson: CRIMSON's prompt and JSON answer from the LLM teacher, for crimson/sft

  pretrain-corpus  de-duplicated findings + impression text as an HF dataset (GREEN stage-1 pretraining)

  silver   silver labels for the encoder recipes: CheXpert-style rule labels, RaTE-NER (IOB + spans),
           RadGraph-style entities and relations (DyGIE JSONL); card with label distributions and
           agreement with real gold (NegBio labels; radgraph annotations, in-sample for the RadGraph lexicon)

  judge-pairs  (reference finding, candidate finding, label) for the finding-pair judge (judge/pairs): same,
           attribute errors with their attribute and significance, contradictions, unrelated; from logged edits

  findings silver labels for the findings extractor: every statement and clause of the IU X-ray reports, a finding
           or not by its alignment with NLM's manual MeSH codes of that report (never RadPref); split by text

Examples: radmetrics data corpus --kind iu_xray --out outputs/corpus
          radmetrics data pairs --out outputs/pairs --per-heuristic 2000
          radmetrics data silver --out outputs/silver --labelers chexpert rate_ner radgraph
          radmetrics data annotate --pairs my_pairs.csv --out outputs/teacher            (semantic teacher, no LLM)
          radmetrics data annotate --pairs outputs/pairs/train.jsonl --endpoint configs/llm/openai_gpt4o.yaml --out \
outputs/teacher
          radmetrics data annotate --format crimson --pairs outputs/pairs/*.jsonl --endpoint \
configs/llm/openai_gpt4o.yaml --out outputs/crimson_teacher"""


def add_llm_arguments(p: argparse.ArgumentParser, endpoint_required: bool = True) -> None:
    p.add_argument("--endpoint", required=endpoint_required, help="LLM endpoint YAML (see configs/llm/)")
    p.add_argument("--llm-cache", help="SQLite answer cache (default: OUT/llm_cache.sqlite); rerun to resume")
    p.add_argument("--max-reprompts", type=int, default=2, help="re-prompts after an answer that fails validation")
    p.add_argument("--limit", type=int, default=None, help="at most this many items (in input order)")


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    from .corpus.corpus_io import SPLIT_METHODS

    p.add_argument(
        "--kind",
        default="iu_xray",
        choices=["iu_xray", "rexrank", "free_text", "table"],
        help="corpus layout (default: the bundled IU X-ray reports)",
    )
    p.add_argument("--path", help="file or directory of the corpus (default for iu_xray: the bundled copy)")
    p.add_argument("--id-column", default="id", help="table corpora: id column ('' = row number)")
    p.add_argument("--findings-column", default="findings", help="table corpora: findings column")
    p.add_argument("--impression-column", default="impression", help="table corpora: impression column ('' = none)")
    p.add_argument("--text-column", default=None, help="table corpora: one column holding the whole report")
    p.add_argument(
        "--split-by",
        default="text",
        choices=SPLIT_METHODS,
        help=(
            "text: seeded 80/10/10 by normalised report text, so identical reports share a split; "
            "predefined: the corpus' own split (IU: R2Gen), whose overlap with train the stats report"
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the text split")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="data_command", metavar="WHAT", required=True)
    corpus = sub.add_parser("corpus", help="load a corpus and write reports.jsonl with splits")
    add_corpus_arguments(corpus)
    corpus.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    pairs = sub.add_parser("pairs", help="build report pairs with edit logs and programmatic GREEN annotations")
    add_corpus_arguments(pairs)
    pairs.add_argument(
        "--heuristics",
        nargs="+",
        default=None,
        help="subset of: random remove_shuffle nearest_neighbour radgraph_permute recombine (default: all)",
    )
    pairs.add_argument(
        "--per-heuristic", type=int, default=None, help="pairs per heuristic (default: one per reference)"
    )
    pairs.add_argument("--sentence-splitter", default="robust", choices=["robust", "fineradscore"])
    pairs.add_argument(
        "--encoder", default="default", help="encoder for nearest-neighbour pairing (default: bundled MiniLM)"
    )
    pairs.add_argument(
        "--teacher",
        default="programmatic",
        choices=["programmatic", "semantic"],
        help=(
            "who annotates: programmatic (each pair's edit log) or semantic (the semantic_green teacher, "
            "from the two texts alone)"
        ),
    )
    pairs.add_argument(
        "--explanation",
        default=None,
        choices=["summary", "walkthrough"],
        help=(
            "the teacher's [Explanation]: summary (the counts only; the semantic teacher then quotes each statement's "
            "first words) or walkthrough (each statement's verdict, then the counts). Default: walkthrough for the "
            "semantic teacher, summary for the programmatic one"
        ),
    )
    pairs.add_argument(
        "--units",
        choices=["findings", "statements"],
        default="findings",
        help=(
            "what the semantic teacher judges: findings (each report's findings as the findings extractor lists "
            "them, as semantic_green does; for the `findings` prompt) or statements (every statement; `numbered`)"
        ),
    )
    pairs.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    inject = sub.add_parser(
        "inject-errors", help="LLM-written candidates with sampled GREEN error categories (appendix A.4)"
    )
    add_corpus_arguments(inject)
    add_llm_arguments(inject)
    inject.add_argument("--max-errors", type=int, default=3, help="at most this many error categories per candidate")
    inject.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    annotate = sub.add_parser("annotate", help="GREEN annotations of any pairs by the semantic or an LLM teacher")
    annotate.add_argument(
        "--pairs",
        required=True,
        nargs="+",
        help=(
            "pair files, CSV or JSONL: `reference` and `candidate` per row (other names: --reference-field, "
            "--candidate-field); `id`, `split`, `context` and any other field kept"
        ),
    )
    annotate.add_argument(
        "--reference-field",
        default="reference",
        help="the references' column or field; a+b joins sections as written (findings+impression)",
    )
    annotate.add_argument("--candidate-field", default="candidate", help="the candidates' column or field (a+b joins)")
    annotate.add_argument(
        "--split-by",
        choices=["auto", "given", "reference", "none"],
        default="auto",
        help=(
            "auto: the pairs' own `split` when every pair has one (refused if a held-out reference repeats a train "
            "one), else by reference report (reference: a seeded 80/10/10 of the normalised reference text, so a "
            "report's pairs share a split); none: one annotations.jsonl. Writes train/validation/test.jsonl, which "
            "green/sft --pairs_dir and crimson/sft --annotations_dir read as they are"
        ),
    )
    annotate.add_argument("--seed", type=int, default=0, help="seed of the split by reference report")
    annotate.add_argument(
        "--teacher",
        choices=["semantic", "llm"],
        default=None,
        help=(
            "semantic (the semantic_green teacher, no LLM) or llm (appendix A.1, needs --endpoint); "
            "default: llm with --endpoint, else semantic"
        ),
    )
    annotate.add_argument(
        "--format",
        choices=["green", "crimson"],
        default="green",
        help=(
            "green (GREEN's response, for green/sft) or crimson (crimson-score's prompt and JSON answer, for "
            "crimson/sft: from the LLM teacher at --endpoint, a pair's `context` object entering the prompt; without "
            "--endpoint, from the edit logs of pairs built by `radmetrics data pairs`)"
        ),
    )
    annotate.add_argument("--encoder", default="default", help="the semantic teacher's sentence encoder")
    annotate.add_argument(
        "--units",
        choices=["findings", "statements"],
        default="findings",
        help="what the semantic teacher judges: the extracted findings (as semantic_green) or every statement",
    )
    annotate.add_argument(
        "--quoted",
        action="store_true",
        help=(
            "the semantic teacher names each statement with its first words too, not by number only "
            "(for a student prompted without numbered statements)"
        ),
    )
    add_llm_arguments(annotate, endpoint_required=False)
    annotate.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    pretrain = sub.add_parser(
        "pretrain-corpus", help="de-duplicated report text as an HF dataset for causal-LM pretraining"
    )
    add_corpus_arguments(pretrain)
    pretrain.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    silver = sub.add_parser("silver", help="silver CheXpert / RaTE-NER / RadGraph labels with a dataset card")
    add_corpus_arguments(silver)
    silver.add_argument(
        "--labelers",
        nargs="+",
        default=["chexpert", "rate_ner", "radgraph"],
        choices=["chexpert", "rate_ner", "radgraph"],
        help="which silver labels to build (default: all)",
    )
    silver.add_argument("--sentence-splitter", default="robust", choices=["robust", "fineradscore"])
    silver.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    findings = sub.add_parser("findings", help="silver finding labels of statements and clauses (IU X-ray MeSH codes)")
    findings.add_argument(
        "--corpus-csv", help="an IU X-ray CSV with uid, MeSH, findings, impression (default: bundled)"
    )
    findings.add_argument("--max-reports", type=int, help="the first N reports only")
    findings.add_argument(
        "--positive-at", type=float, default=0.5, help="cosine with a MeSH code that makes a finding"
    )
    findings.add_argument("--negative-below", type=float, default=0.35, help="cosine under which it is not one")
    findings.add_argument("--out", required=True, type=OutputFolder, help="output directory")
    add_import_parser(sub)
    judge_pairs.register(sub, add_corpus_arguments)


def load_corpus_from_args(args: argparse.Namespace):
    from .corpus.corpora import load_corpus

    options = {}
    if args.kind == "table":
        options = {
            "id_column": args.id_column or None,
            "findings_column": args.findings_column or None,
            "impression_column": args.impression_column or None,
            "text_column": args.text_column,
        }
    reports = [r for r in load_corpus(args.kind, args.path, **options) if r.text]
    if not reports:
        raise SystemExit(
            f"radmetrics data: the {args.kind} corpus at {args.path or 'the bundled default'} has no report text"
        )
    return reports


def corpus_and_splits(args: argparse.Namespace) -> tuple[list, dict]:
    """The corpus the arguments name, and its split assignment (--split-by, --seed)."""
    from .corpus.corpus_io import assign_splits

    reports = load_corpus_from_args(args)
    return reports, assign_splits(reports, args.split_by, seed=args.seed)


def corpus_provenance(args: argparse.Namespace) -> dict:
    return {"corpus": args.kind, "path": args.path or "bundled", "split_by": args.split_by}


def run(args: argparse.Namespace) -> int:
    from radmetrics.inference.loading.extras import require

    require(
        "datasets", extra="train", for_what=f"radmetrics data {args.data_command} (it writes Hugging Face datasets)"
    )
    from .corpus.corpus_io import write_corpus

    if getattr(args, "data_handler", None):  # a subcommand in a module of its own (judge_pairs/command.py)
        return args.data_handler(args, corpus_and_splits, corpus_provenance)
    if args.data_command == "corpus":
        stats = write_corpus(*corpus_and_splits(args), args.out)
        print(json.dumps(stats, indent=2))
    elif args.data_command == "pairs":
        from .pairs.builders import HEURISTICS, build_pairs
        from .pairs.dataset import write_pairs

        reports, splits = corpus_and_splits(args)
        pairs = build_pairs(
            reports,
            splits,
            args.heuristics or HEURISTICS,
            args.per_heuristic,
            args.seed,
            args.sentence_splitter,
            args.encoder,
        )
        stats = write_pairs(
            pairs,
            args.out,
            {**corpus_provenance(args), "seed": args.seed, "sentence_splitter": args.sentence_splitter},
            args.explanation or ("walkthrough" if args.teacher == "semantic" else "summary"),
            args.teacher,
            args.units,
        )
        print(json.dumps({k: stats[k] for k in ("pairs", "per_heuristic", "per_split")}, indent=2))
    elif args.data_command == "annotate" and args.format == "crimson":
        if args.teacher == "semantic":
            raise SystemExit(
                "radmetrics data annotate: --format crimson is written by an LLM teacher (--endpoint YAML) or, for "
                "pairs built by `radmetrics data pairs`, by the programmatic teacher (no --endpoint)"
            )
        if args.endpoint:
            run_llm_builder(args)
        else:
            annotate_crimson_programmatic(args)
    elif args.data_command == "annotate" and (args.teacher or ("llm" if args.endpoint else "semantic")) == "semantic":
        if args.endpoint:
            raise SystemExit(
                "radmetrics data annotate: --endpoint is for --teacher llm; the semantic teacher needs no LLM"
            )
        annotate_semantic(args)
    elif args.data_command in ("inject-errors", "annotate"):
        if not args.endpoint:
            raise SystemExit(
                f"radmetrics data {args.data_command}: the LLM teacher needs --endpoint YAML (see configs/llm/)"
            )
        run_llm_builder(args)
    elif args.data_command == "pretrain-corpus":
        from .corpus.pretraining import write_pretrain_corpus

        reports, splits = corpus_and_splits(args)
        stats = write_pretrain_corpus(reports, splits, args.out, corpus_provenance(args))
        print(json.dumps(stats, indent=2))
    elif args.data_command == "silver":
        from .silver.dataset import write_silver

        reports, splits = corpus_and_splits(args)
        stats = write_silver(reports, splits, args.out, args.labelers, corpus_provenance(args), args.sentence_splitter)
        print(json.dumps({name: s["records_per_split"] for name, s in stats["labelers"].items()}, indent=2))
        print(f"dataset card: {args.out}/README.md")
    elif args.data_command == "findings":
        from radmetrics.inference.models.text_encoder import TextEncoder

        from .extractor_labels import FindingsSilverArguments, build_findings_silver

        options = FindingsSilverArguments(args.corpus_csv, args.max_reports, args.positive_at, args.negative_below)
        splits = build_findings_silver(options, TextEncoder("default"), args.out)
        print(json.dumps({name: len(rows) for name, rows in splits.items()}, indent=2))
    return 0


def read_pairs(args: argparse.Namespace) -> list[dict]:
    """The pairs --pairs names (CSV or JSONL), cut to --limit, with their splits (pairs/pair_files.py); the output
    folder checked first. Refused in one line when a split would be empty or the given splits leak."""
    from radmetrics.inference.files.output_paths import ensure_output_dir

    from .pairs.pair_files import PairFileError, assign_pair_splits, empty_splits, read_pair_files

    ensure_output_dir(args.out, what="--out")
    pairs = read_pair_files(args.pairs, args.reference_field, args.candidate_field)[: args.limit]
    pairs, args.split_stats = assign_pair_splits(pairs, args.split_by, args.seed)
    if empty_splits(args.split_stats):
        raise PairFileError(
            f"{len(pairs)} pairs leave no {' and no '.join(empty_splits(args.split_stats))} pair (split "
            f"{args.split_stats['split_by']}): give more pairs, or pass --split-by none for annotations not trained on"
        )
    return pairs


def write_annotations(records: list[dict], out, args: argparse.Namespace) -> dict[str, int]:
    """train/validation/test.jsonl (or annotations.jsonl with --split-by none), hf/, stats.json; the count per file."""
    from .pairs.pair_files import write_split_files

    stats = getattr(args, "split_stats", None) or {"split_by": "given"}
    stats = {**stats, "written": len(records)}
    # a patient context's fields differ from pair to pair: the Arrow copy holds it as JSON text
    return write_split_files(records, Path(out), stats, to_arrow=_context_as_text)


def _context_as_text(record: dict) -> dict:
    return {**record, "context": json.dumps(record["context"])} if "context" in record else record


def annotate_crimson_programmatic(args: argparse.Namespace) -> None:
    """CRIMSON answers to pairs built by `radmetrics data pairs`, from their edit logs (crimson_programmatic.py)."""
    from radmetrics.inference.metrics.crimson.metric import evaluate_answer

    from .pairs.crimson_programmatic import programmatic_answer

    pairs = read_pairs(args)
    unbuilt = [p["id"] for p in pairs if "edits" not in p]
    if unbuilt:
        raise SystemExit(
            f"radmetrics data annotate: --format crimson without --endpoint reads each pair's edit log, and pairs "
            f"{unbuilt[:3]} have none (pairs of `radmetrics data pairs`): pass --endpoint YAML for an LLM teacher"
        )
    records = []
    for pair in pairs:
        answer = programmatic_answer(pair)
        score = evaluate_answer(answer)[1]["crimson_score"]
        records.append({**pair, "response": answer, "crimson_score": score, "teacher": "programmatic"})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    per_file = write_annotations(records, out, args)
    print(json.dumps({"written": len(records), "teacher": "programmatic", "per_file": per_file}, indent=2))


def annotate_semantic(args: argparse.Namespace) -> None:
    from .pairs.semantic_teacher import semantic_annotations

    records = semantic_annotations(read_pairs(args), args.encoder, quoted=args.quoted, units=args.units)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    per_file = write_annotations(records, out, args)
    print(json.dumps({"written": len(records), "teacher": "semantic_green", "per_file": per_file}, indent=2))


def run_llm_builder(args: argparse.Namespace) -> None:
    from radmetrics.inference.llm.endpoint import Endpoint
    from radmetrics.inference.llm.engine import LLMEngine

    from .corpus.corpus_io import assign_splits
    from .pairs.llm_teacher import annotate_pairs, inject_errors

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    engine = LLMEngine(
        Endpoint.from_yaml(args.endpoint), args.llm_cache or out / "llm_cache.sqlite", args.max_reprompts
    )
    if args.data_command == "inject-errors":
        reports = load_corpus_from_args(args)[: args.limit]
        pairs, failures = inject_errors(
            reports, assign_splits(reports, args.split_by, seed=args.seed), engine, args.seed, args.max_errors
        )
        records = [p.to_dict() for p in pairs]
    elif args.format == "crimson":
        from .pairs.crimson_teacher import annotate_crimson

        records, failures = annotate_crimson(read_pairs(args), engine)
    else:
        records, failures = annotate_pairs(read_pairs(args), engine)
    per_file = write_annotations(records, out, args)
    with open(out / "failures.jsonl", "w", encoding="utf-8") as fh:
        for failure in failures:
            fh.write(json.dumps(failure) + "\n")
    engine.write_manifest(out / "llm_manifest.json")
    print(
        json.dumps(
            {
                "written": len(records),
                "failed": len(failures),
                "per_file": per_file,
                "llm": {k: engine.totals.__dict__[k] for k in ("requests_sent", "cache_hits", "retries", "reprompts")},
            },
            indent=2,
        )
    )
