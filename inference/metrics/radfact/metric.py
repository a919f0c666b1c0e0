"""RadFact (Bannur et al. 2024; microsoft/RadFact @ 72463ac; see judge.py beside it for what is reproduced).

Inputs: narrative reports (strings, split into phrases by the LLM) or grounded reports (lists of
{"text", "boxes"}). Keys: logical, grounding and spatial precision / recall / F1; the F1 aggregates are the F1
of the mean precision and mean recall. Grounding and spatial keys are NaN (not scored) without boxes.
Options: `endpoint`, `llm_cache`, `max_reprompts` (default 3), `nli_shots` (few-shot queries, default all).
"""

from __future__ import annotations

import numpy as np

from ...llm.engine import LLMTask
from ..base import Metric, MetricOutput, Option
from .judge import (
    EvidencedPhrase,
    Phrase,
    f1,
    grounded_phrases,
    nli_messages,
    one_way_scores,
    parse_entailment,
    parse_phrases,
    phrases_messages,
    spatially_entailed,
)

KINDS = ("logical", "grounding", "spatial")


def _key(kind: str, part: str) -> str:
    return f"radfact_{kind}_{part}"


class RadFact(Metric):
    name = "radfact"
    options = {
        "max_reprompts": Option(3, True, "re-asks after an unparsable answer", type=int, minimum=0),
        "nli_shots": Option(
            None, True, "few-shot entailment examples (default: all of RadFact's)", type=int, minimum=0
        ),
    }
    keys = tuple(_key(kind, part) for kind in KINDS for part in ("precision", "recall", "f1"))
    higher_is_better = dict.fromkeys(keys, True)
    reference = "RadFact (Bannur et al. 2024, MAIRA-2; microsoft/RadFact metric/radfact.py)"
    citation = """@article{bannur2024maira2, title={MAIRA-2: Grounded Radiology Report Generation}, author={Bannur, \
Shruthi and others},
  journal={arXiv:2406.04449}, year={2024}}"""
    judged_by_llm = True
    accepts_grounded = True

    def compute(self, references, candidates):
        engine = self.llm_engine(self.options["max_reprompts"])
        errors: dict[int, list[str]] = {}
        sides = self._phrases(engine, {"candidate": candidates, "reference": references}, errors)
        tasks, owners = [], []
        for i in range(len(references)):
            if i in errors:
                continue
            for side, other in (("candidate", "reference"), ("reference", "candidate")):
                premise = [p.text for p in sides[other][i]]
                for j, phrase in enumerate(sides[side][i]):
                    if premise:  # nothing can be entailed by an empty report: no question to ask
                        tasks.append(
                            LLMTask(
                                f"nli-{side}-{i}-{j}",
                                nli_messages(premise, phrase.text, self.options["nli_shots"]),
                                lambda text, ref=premise: parse_entailment(text, ref),
                            )
                        )
                        owners.append((i, side, j))
        verdicts = {}
        for owner, result in zip(owners, engine.run(tasks)):
            if result.ok:
                verdicts[owner] = result.parsed
            else:
                errors.setdefault(owner[0], []).append(f"entailment of {owner[1]} phrase {owner[2]}: {result.error}")
        values = {key: [] for key in self.keys}
        details = []
        for i in range(len(references)):
            if i in errors:
                for key in self.keys:
                    values[key].append(float("nan"))
                details.append({"error": "; ".join(errors[i])})
                continue
            evidenced = {}
            for side, other in (("candidate", "reference"), ("reference", "candidate")):
                evidenced[side] = []
                for j, phrase in enumerate(sides[side][i]):
                    entailed, evidence = verdicts.get((i, side, j), (False, []))
                    item = EvidencedPhrase(phrase.text, phrase.boxes, entailed, evidence)
                    item.spatially_entailed = spatially_entailed(item, sides[other][i])
                    evidenced[side].append(item)
            precision, recall = one_way_scores(evidenced["candidate"]), one_way_scores(evidenced["reference"])
            for kind, p, r in zip(KINDS, precision, recall):
                values[_key(kind, "precision")].append(p)
                values[_key(kind, "recall")].append(r)
                values[_key(kind, "f1")].append(f1(p, r))
            details.append({side: [vars(p) for p in items] for side, items in evidenced.items()})
        return MetricOutput(
            values,
            details=details,
            corpus_aggregate=self.corpus_aggregates(values, {}),
            meta={"llm": engine.summary()},
        )

    def corpus_aggregates(self, per_sample, statistics):
        """Each kind's F1 of the mean precision and mean recall (from the per-pair values alone)."""
        return {_key(kind, "f1"): self._f1_of_means(per_sample, kind) for kind in KINDS}

    @staticmethod
    def _f1_of_means(values: dict, kind: str):
        precision = np.asarray(values[_key(kind, "precision")], dtype=float)
        recall = np.asarray(values[_key(kind, "recall")], dtype=float)

        def aggregate(idx: np.ndarray) -> float:
            p, r = precision[idx], recall[idx]
            if np.isnan(p).all() or np.isnan(r).all():
                return float("nan")
            return f1(float(np.nanmean(p)), float(np.nanmean(r)))

        return aggregate

    def _phrases(
        self, engine, reports: dict[str, list], errors: dict[int, list[str]]
    ) -> dict[str, list[list[Phrase]]]:
        """Phrases of every report: grounded reports as given, narrative ones through the LLM (report-to-phrases)."""
        sides = {side: [None] * len(items) for side, items in reports.items()}
        tasks, owners = [], []
        for side, items in reports.items():
            for i, report in enumerate(items):
                if isinstance(report, list):
                    sides[side][i] = grounded_phrases(report)
                elif not report.strip():
                    sides[side][i] = []
                else:
                    tasks.append(LLMTask(f"phrases-{side}-{i}", phrases_messages(report), parse_phrases))
                    owners.append((side, i))
        for (side, i), result in zip(owners, engine.run(tasks)):
            if result.ok:
                sides[side][i] = [Phrase(text) for text in result.parsed]
            else:
                errors.setdefault(i, []).append(f"report-to-phrases of the {side}: {result.error}")
        return sides
