"""`radmetrics data ...`: build corpora and training data."""

from __future__ import annotations

import argparse
import json

HELP = "build corpora and training data: corpus, GREEN pairs + teacher, pretraining text, silver labels"
DESCRIPTION = """Build data for the recipes. Subcommands:

  corpus   read a corpus (IU X-ray bundled by default, ReXrank JSON, MIMIC-style free text,
           CSV/JSONL with configurable columns), assign deterministic splits, write reports.jsonl

  Splits (--split-by text, the default) group reports by normalised text, so no held-out report repeats a
  train report; every stats.json and card records the overlap between splits (reports and sentences).

  pairs    reference/candidate pairs by the five GREEN heuristics, each with an edit log and a
           programmatic GREEN annotation; JSONL + HF dataset + dataset card

  inject-errors    LLM-written candidates (GREEN appendix A.4): sampled error categories, or a rephrasing
  annotate         GREEN annotations of any pairs: by the semantic teacher (semantic_green: sentence matching and
                   word rules that agree with radiologists, no LLM), or by an LLM teacher (appendix A.1, --endpoint),
                   validated by the GREEN parser and resumable (answers are cached; a rerun re-sends nothing answered);
                   --format crimson: CRIMSON's prompt and JSON answer from the LLM teacher, for crimson/sft

  pretrain-corpus  de-duplicated findings + impression text as an HF dataset (GREEN stage-1 pretraining)

  silver   silver labels for the encoder recipes: CheXpert-style rule labels, RaTE-NER (IOB + spans),
           RadGraph-style entities and relations (DyGIE JSONL); card with label distributions and
           agreement with real gold (NegBio labels; radgraph annotations, in-sample for the RadGraph lexicon)

  findings silver labels for the findings extractor: every statement and clause of the IU X-ray reports, a finding
           or not by its alignment with NLM's manual MeSH codes of that report (never RadPref); split by text

Examples: radmetrics data corpus --kind iu_xray --out outputs/corpus
          radmetrics data pairs --out outputs/pairs --per-heuristic 2000
          radmetrics data silver --out outputs/silver --labelers chexpert rate_ner radgraph
          radmetrics data annotate --pairs my_pairs.jsonl --out outputs/teacher              (semantic teacher, no LLM)
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
    corpus.add_argument("--out", required=True, help="output directory")
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
    pairs.add_argument("--out", required=True, help="output directory")
    inject = sub.add_parser(
        "inject-errors", help="LLM-written candidates with sampled GREEN error categories (appendix A.4)"
    )
    add_corpus_arguments(inject)
    add_llm_arguments(inject)
    inject.add_argument("--max-errors", type=int, default=3, help="at most this many error categories per candidate")
    inject.add_argument("--out", required=True, help="output directory")
    annotate = sub.add_parser("annotate", help="GREEN annotations of any pairs by the semantic or an LLM teacher")
    annotate.add_argument(
        "--pairs",
        required=True,
        nargs="+",
        help="pair JSONL files: `reference` and `candidate` per line; `id` and `split` kept when present",
    )
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
    annotate.add_argument("--out", required=True, help="output directory")
    pretrain = sub.add_parser(
        "pretrain-corpus", help="de-duplicated report text as an HF dataset for causal-LM pretraining"
    )
    add_corpus_arguments(pretrain)
    pretrain.add_argument("--out", required=True, help="output directory")
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
    silver.add_argument("--out", required=True, help="output directory")
    findings = sub.add_parser("findings", help="silver finding labels of statements and clauses (IU X-ray MeSH codes)")
    findings.add_argument(
        "--corpus-csv", help="an IU X-ray CSV with uid, MeSH, findings, impression (default: bundled)"
    )
    findings.add_argument("--max-reports", type=int, help="the first N reports only")
    findings.add_argument(
        "--positive-at", type=float, default=0.5, help="cosine with a MeSH code that makes a finding"
    )
    findings.add_argument("--negative-below", type=float, default=0.35, help="cosine under which it is not one")
    findings.add_argument("--out", required=True, help="output directory")


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

        from .findings import FindingsSilverArguments, build_findings_silver

        options = FindingsSilverArguments(args.corpus_csv, args.max_reports, args.positive_at, args.negative_below)
        splits = build_findings_silver(options, TextEncoder("default"), args.out)
        print(json.dumps({name: len(rows) for name, rows in splits.items()}, indent=2))
    return 0


def read_pairs(paths: list[str], limit: int | None) -> list[dict]:
    from radmetrics.inference.files.report_io import read_jsonl_records

    pairs = [record for path in paths for _, record in read_jsonl_records(path, ("reference", "candidate"))]
    for n, pair in enumerate(pairs):
        pair.setdefault("id", str(n))
    return pairs[:limit]


def write_annotations(records: list[dict], out) -> dict[str, int]:
    """{split}.jsonl (and hf/) when the records have splits, else annotations.jsonl; the count per file."""
    from .corpus.corpus_io import write_split_records

    by_split: dict[str, list[dict]] = {}
    for record in records:
        by_split.setdefault(record.get("split") or "annotations", []).append(record)
    if by_split:  # a patient context's fields differ from pair to pair: the Arrow copy holds it as JSON text
        write_split_records(by_split, out, to_arrow=_context_as_text)
    return {k: len(v) for k, v in by_split.items()}


def _context_as_text(record: dict) -> dict:
    return {**record, "context": json.dumps(record["context"])} if "context" in record else record


def annotate_crimson_programmatic(args: argparse.Namespace) -> None:
    """CRIMSON answers to pairs built by `radmetrics data pairs`, from their edit logs (crimson_programmatic.py)."""
    from pathlib import Path

    from radmetrics.inference.metrics.crimson.metric import evaluate_answer

    from .pairs.crimson_programmatic import programmatic_answer

    pairs = read_pairs(args.pairs, args.limit)
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
    per_file = write_annotations(records, out)
    print(json.dumps({"written": len(records), "teacher": "programmatic", "per_file": per_file}, indent=2))


def annotate_semantic(args: argparse.Namespace) -> None:
    from pathlib import Path

    from .pairs.semantic_teacher import semantic_annotations

    records = semantic_annotations(
        read_pairs(args.pairs, args.limit), args.encoder, quoted=args.quoted, units=args.units
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    per_file = write_annotations(records, out)
    print(json.dumps({"written": len(records), "teacher": "semantic_green", "per_file": per_file}, indent=2))


def run_llm_builder(args: argparse.Namespace) -> None:
    from pathlib import Path

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

        records, failures = annotate_crimson(read_pairs(args.pairs, args.limit), engine)
    else:
        records, failures = annotate_pairs(read_pairs(args.pairs, args.limit), engine)
    per_file = write_annotations(records, out)
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
