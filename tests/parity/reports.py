"""The report pairs every parity fixture is made on: 60 real IU X-ray reports, each paired with the next one,
plus edge pairs (a report longer than 512 wordpieces, punctuation and quotes, an identical pair)."""

from __future__ import annotations

import hashlib

N_PAIRS = 60
PUNCTUATION = 'Lungs "clear"; heart size 2.5cm (stable)/unchanged: no effusion! Pneumothorax? No. 50%.'


def iu_reports(n: int) -> list[str]:
    """The first `n` distinct non-empty IU X-ray report texts, in the bundled corpus' order."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    seen, reports = set(), []
    for report in iu_xray_corpus():
        if report.text and report.text not in seen:
            seen.add(report.text)
            reports.append(report.text)
        if len(reports) == n:
            break
    return reports


def parity_pairs() -> tuple[list[str], list[str]]:
    reports = iu_reports(N_PAIRS + 12)
    references, candidates = reports[:N_PAIRS], reports[1 : N_PAIRS + 1]
    long_report = " ".join(reports[N_PAIRS : N_PAIRS + 12])
    references += [long_report, PUNCTUATION, reports[5]]
    candidates += [reports[0], reports[3], reports[5]]
    return references, candidates


def empty_candidate_pairs() -> tuple[list[str], list[str]]:
    """Pairs whose candidate is an empty generation, between two ordinary pairs (radmetrics scores every output; the
    reference packages say what an empty one scores). Whitespace-only candidates are not sent: radgraph 0.1.18 crashes
    on them (README: reference bugs), and radmetrics strips them to this case."""
    reports = iu_reports(4)
    return [reports[0], reports[1], reports[2], reports[3]], [reports[1], "", reports[3], ""]


def fingerprint(texts: list[str]) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()
