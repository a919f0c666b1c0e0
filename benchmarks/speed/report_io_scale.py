"""Reading and pairing report files at the scale of a MIMIC test set with several systems: 100,000 (and 10,000)
pairs with ids, the candidates in another order, as JSONL, CSV (multi-line fields) and .txt. Seconds for
`read_reports` on both files and `pair_reports` by id (by position for .txt), best of three.

    python benchmarks/speed/report_io_scale.py    (writes benchmarks/results/report_io_scale.json)

Before the linear pairing (e5b1239), pairing 20,000 ids took 37 s on 2 cores (issue: faithful inputs).
"""

from __future__ import annotations

import csv
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helper `common`
from common import machine, write_results  # noqa: E402

from radmetrics.inference.files.report_io import pair_reports, read_reports

SIZES = (10_000, 100_000)
REPORT = "FINDINGS: Heart size is normal. The lungs are clear.\nIMPRESSION: No acute cardiopulmonary process. ({n})"


def write_files(directory: Path, n: int) -> dict[str, tuple[Path, Path]]:
    ids = [f"study-{i:06d}" for i in range(n)]
    shuffled = random.Random(0).sample(ids, n)
    files = {}
    for kind in ("jsonl", "csv", "txt"):
        paths = (directory / f"refs-{n}.{kind}", directory / f"hyps-{n}.{kind}")
        for path, order in zip(paths, (ids, shuffled if kind != "txt" else ids)):
            texts = [REPORT.format(n=i) for i in order]
            if kind == "jsonl":
                path.write_text(
                    "".join(json.dumps({"id": i, "report": t}) + "\n" for i, t in zip(order, texts)), encoding="utf-8"
                )
            elif kind == "csv":
                with path.open("w", newline="", encoding="utf-8") as fh:
                    writer = csv.writer(fh)
                    writer.writerow(["id", "report"])
                    writer.writerows(zip(order, texts))
            else:  # one report per line: no ids, so no line breaks inside a report
                path.write_text("".join(t.replace("\n", " ") + "\n" for t in texts), encoding="utf-8")
        files[kind] = paths
    return files


def best_of_three(task, *args) -> tuple[float, object]:
    times, result = [], None
    for _ in range(3):
        start = time.perf_counter()
        result = task(*args)
        times.append(time.perf_counter() - start)
    return round(min(times), 3), result


def read_both(references: Path, candidates: Path) -> tuple:
    return read_reports(references), read_reports(candidates)


if __name__ == "__main__":
    results = {
        "machine": machine(),
        "command": "python benchmarks/speed/report_io_scale.py",
        "timing": "best of 3",
        "runs": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            for kind, (refs, hyps) in write_files(Path(tmp), n).items():
                read_seconds, ((references, ref_ids), (candidates, cand_ids)) = best_of_three(read_both, refs, hyps)
                pair_seconds, (_, paired, _) = best_of_three(pair_reports, references, ref_ids, candidates, cand_ids)
                if paired != references or len(paired) != n:
                    raise AssertionError(f"{kind}, {n} pairs: the candidates did not pair back to their references")
                results["runs"][f"{kind} {n}"] = {
                    "pairs": n,
                    "read_seconds": read_seconds,
                    "pair_seconds": pair_seconds,
                }
                print(f"{kind:5} {n:>7,} pairs: read {read_seconds:.2f} s, pair {pair_seconds:.3f} s", flush=True)
    print(f"wrote {write_results('report_io_scale.json', results)}")
