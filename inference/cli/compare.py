"""`radmetrics compare --refs R --system-a A --system-b B --out DIR`: two systems on the same references."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..files.atomic import atomic_write, write_text
from ..files.compare_folder import claim_compare_folder
from ..files.json_io import dumps
from ..files.output_paths import ensure_output_dir
from ..files.report_html import write_compare_report
from ..files.report_io import pair_reports, read_reports
from ..scoring.stats import paired_key_comparison
from .score import (
    add_report_field_arguments,
    add_scoring_arguments,
    build_scorer,
    id_fields,
    print_llm_totals,
    refuse_no_reports,
)

HELP = "compare two systems' reports on the same references: differences with paired bootstrap CIs and p-values"
DESCRIPTION = """Scores system A's and system B's candidates against the same references (paired by id when the files
carry ids, else by position) with any metrics, and reports for every score key A's and B's value, the difference A - B
with a paired-bootstrap 95% CI (the same resampled references for both systems) and a two-sided approximate-
randomisation p-value (each pair's two candidates swapped with probability 1/2). Both systems are compared on the pairs
that both could score: a pair one side could not score (an LLM judge that never answered) is left out of both sides,
and the table counts the pairs each side lost. Empty candidates are scored, as `radmetrics score` scores them. \
Corpus-level keys (corpus BLEU-4,
CheXbert F1) are recomputed on every resample. A positive difference favours A when the key is higher-is-better.

Writes OUT/compare.json, OUT/compare.md, OUT/report.html (both systems side by side with the paired differences, and
each pair's values) and each system's per-sample scores (OUT/per_sample_{a,b}.jsonl). A comparison is written whole and
does not resume: a folder holding another run's outputs (a comparison or a score run) is refused unless --overwrite.

Example: radmetrics compare --refs refs.txt --system-a model_a.txt --system-b model_b.txt --metrics bleu2,rougeL \
--out cmp/"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs", required=True, help="reference reports file")
    parser.add_argument("--system-a", required=True, help="system A's candidate reports")
    parser.add_argument("--system-b", required=True, help="system B's candidate reports")
    parser.add_argument("--names", nargs=2, default=["A", "B"], help="names of the two systems in the table")
    add_report_field_arguments(parser)
    parser.add_argument("--permutations", type=int, default=10000, help="approximate-randomisation permutations")
    add_scoring_arguments(parser)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the outputs of another run (a comparison or a score run) in --out (refused without it)",
    )


def compare_key(result, key: str, n: int, args: argparse.Namespace) -> dict:
    """The paired comparison of one key over the pairs both systems scored (A's pair i at i, B's at n + i): a pair one
    side could not score is left out of both sides' aggregates, intervals and tests, and counted."""
    import numpy as np

    scored = np.array([row[key] is not None for row in result.per_sample])
    both = np.flatnonzero(scored[:n] & scored[n:])
    lost = {
        "a_not_scored": int((~scored[:n]).sum()),
        "b_not_scored": int((~scored[n:]).sum()),
        "higher_is_better": result.higher_is_better[key],
    }
    if not len(both):
        return {"n": 0, **lost}
    return {**paired_key_comparison(result, key, both, n, args.bootstrap, args.permutations, args.seed), **lost}


def run(args: argparse.Namespace) -> int:
    scorer = build_scorer(args, Path(args.out), n_bootstrap=0)  # checks every option before any file or model loads
    out = ensure_output_dir(args.out, what="--out")
    claim_compare_folder(out, args.overwrite)
    (ref_id, ref_named), (hyp_id, hyp_named) = id_fields(args)
    refs, ref_ids = refuse_no_reports(
        read_reports(args.refs, args.ref_field, ref_id, id_required=ref_named), args.refs
    )

    def system(path: str, name: str) -> list:
        read = read_reports(path, args.hyp_field, hyp_id, allow_empty=True, id_required=hyp_named)
        return pair_reports(refs, ref_ids, *refuse_no_reports(read, path), ("references", name))

    _, system_a, ids = system(args.system_a, "system A reports")
    _, system_b, _ = system(args.system_b, "system B reports")
    ids = ids or [str(i) for i in range(len(refs))]
    result = scorer(refs + refs, system_a + system_b, ids=[f"{i} (A)" for i in ids] + [f"{i} (B)" for i in ids])
    n, name_a, name_b = len(refs), *args.names
    comparison = {key: compare_key(result, key, n, args) for key in result.summary}
    for key, signature in result.signatures.items():
        comparison[key]["signature"] = signature
    write_text(
        out / "compare.json", dumps({"systems": {"a": name_a, "b": name_b}, "n": n, "keys": comparison}, indent=2)
    )
    for tag, rows in (("a", result.per_sample[:n]), ("b", result.per_sample[n:])):
        with atomic_write(out / f"per_sample_{tag}.jsonl") as fh:
            for i, row in zip(ids, rows):
                fh.write(dumps({**row, "id": i}) + "\n")
    lines = [
        (
            f"| score | {name_a} | {name_b} | {name_a} - {name_b} | 95% CI | p (approx. randomisation) | better |"
            f" pairs | not scored ({name_a} / {name_b}) |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, c in comparison.items():
        lost = f"{c['a_not_scored']} / {c['b_not_scored']}"
        if c["n"] == 0:
            lines.append(f"| {key} | n/a | n/a | n/a | n/a | n/a | n/a | 0 | {lost} |")
            continue
        ahead = c["difference"] > 0 if c["higher_is_better"] else c["difference"] < 0
        better = (name_a if ahead else name_b) if c["difference"] != 0 else "="
        interval = (
            "n/a"
            if None in c["ci95"] or any(v != v for v in c["ci95"])
            else f"[{c['ci95'][0]:+.4f}, {c['ci95'][1]:+.4f}]"
        )
        lines.append(
            f"| {key} | {c['a']:.4f} | {c['b']:.4f} | {c['difference']:+.4f} | {interval} "
            f"| {c['p_value']:.4f} | {better} | {c['n']} | {lost} |"
        )
    write_compare_report(out, (name_a, name_b), comparison, result, n, refs, system_a, system_b)
    table = "\n".join(lines)
    write_text(out / "compare.md", table + "\n")
    print(table)
    print_llm_totals(result)
    return 0
