"""Who decides a matched pair of findings in semantic_green: the word rules (teacher.py's `pair_error`) or a trained
finding-pair judge (`finding_judge`, recipe `judge/pairs`: a cross-encoder over the two findings).

Both give a `JudgeDecision` (inference/findings/judge_labels.py); `judged_error` turns the judge's into the teacher's
error of that pair. With the judge, a pair with an attribute error stays a matched finding and also carries its
attribute error (CRIMSON's matched finding with an attribute error; significant ones weigh 0.5 in the weighted keys);
a contradiction is a significant error and no match; `unrelated` unmatches the pair, whose two findings are then judged
alone as unmatched findings are.

The judge overrides the rules only where it is confident (`confident_decisions`): a pair whose most probable label is
not `same`, with a probability above `threshold`, and (scope `rule_blind`) an attribute error of a kind the rules
cannot see (RULE_BLIND_KINDS); every other matched pair is decided by the rules, as judge=rules decides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...findings.judge_labels import JUDGE_LABELS, JudgeDecision, parse_label
from ...loading.checkpoint import CheckpointError, load_manifest
from ...text import word_rules as rules
from .teacher import Annotation, Rules, TeacherError, assignment, pair_error, sorted_errors, unmatched_errors

COMPONENT = "finding_judge"
# GREEN's category of each attribute error: (c) location or position, (d) severity (GREEN's "severity" covers size and
# degree; radmetrics puts certainty and specificity there too), (e) a false comparison.
ATTRIBUTE_CATEGORIES = {
    "location": "c",
    "device_position": "c",
    "measurement": "d",
    "severity": "d",
    "certainty": "d",
    "specificity": "d",
    "interval_change": "e",
}
# The attributes the word rules never see (they read locations, severity words and change words only).
RULE_BLIND_KINDS = ("measurement", "device_position", "certainty", "specificity")
SCOPES = ("all", "rule_blind")


def confident_decisions(probabilities, threshold: float, scope: str = "all") -> list[JudgeDecision | None]:
    """Per row of label probabilities (JUDGE_LABELS order): the judge's decision where it overrides the rules, else
    None (the rules decide). It overrides where its most probable label is not `same` and that label's probability
    exceeds `threshold`; with scope `rule_blind`, only attribute errors of RULE_BLIND_KINDS."""
    if scope not in SCOPES:
        raise ValueError(f"unknown judge scope {scope!r}; expected one of {list(SCOPES)}")
    chosen = []
    for row in probabilities:
        k = int(row.argmax())
        decision = parse_label(JUDGE_LABELS[k])
        confident = decision.decision != "same" and float(row[k]) > threshold
        if scope == "rule_blind":
            confident = confident and decision.decision == "attribute_error" and decision.kind in RULE_BLIND_KINDS
        chosen.append(decision if confident else None)
    return chosen


def rules_decision(reference: str, candidate: str, rules_: Rules | None = None) -> JudgeDecision:
    """The word rules' decision on a matched pair, in the judge's labels (a left/right swap is a laterality
    contradiction, another location change an attribute error). The rules never call a matched pair unrelated."""
    error = pair_error(reference, candidate, 0, 0, rules_ or Rules(interval_change=True))
    if error is None:
        return JudgeDecision("same")
    if error.category in ("a", "b"):
        return JudgeDecision("contradiction", "negation", True)
    if error.category == "c":
        sides = {"left", "right"}
        swapped = rules.locations(reference) & sides and rules.locations(candidate) & sides
        if swapped and rules.locations(reference) & sides != rules.locations(candidate) & sides:
            return JudgeDecision("contradiction", "laterality", True)
        return JudgeDecision("attribute_error", "location", True)
    kind = "interval_change" if error.category == "e" else "severity"
    return JudgeDecision("attribute_error", kind, error.significant)


def judged_error(decision: JudgeDecision, reference: str, candidate: str, r: int, c: int) -> TeacherError | None:
    """The teacher's error of a matched pair the judge decided (None for `same` and `unrelated`; the caller unmatches
    an unrelated pair)."""
    if decision.decision == "contradiction":
        if decision.kind == "laterality":
            return TeacherError("c", True, c, r, "the judge: the candidate puts the finding on the other side")
        if rules.is_normal(candidate) and not rules.is_normal(reference):
            return TeacherError("b", True, c, r, "the judge: the candidate negates a finding the reference reports")
        return TeacherError("a", True, c, r, "the judge: the candidate contradicts the reference's finding")
    if decision.decision == "attribute_error":
        significance = "significant" if decision.significant else "insignificant"
        return TeacherError(
            ATTRIBUTE_CATEGORIES[decision.kind],
            decision.significant,
            c,
            r,
            f"the judge: {decision.kind.replace('_', ' ')} error ({significance})",
        )
    return None


class FindingJudge:
    """A `finding_judge` export: `judge.decide([(reference, candidate), ...]) -> [JudgeDecision]`, each distinct pair
    run once, batches sorted by length."""

    def __init__(self, path: str | Path, batch_size: int = 64, max_length: int | None = None):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        directory, manifest = load_manifest(path, COMPONENT)
        self.tokenizer = AutoTokenizer.from_pretrained(directory)
        self.model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
        labels = [self.model.config.id2label[i] for i in range(self.model.config.num_labels)]
        if tuple(labels) != JUDGE_LABELS:
            raise CheckpointError(f"{directory}: the judge's labels {labels} are not {list(JUDGE_LABELS)}")
        config = manifest.get("training_config", {})
        self.max_length = max_length or int(config.get("max_seq_length", 128))
        self.batch_size, self.torch = batch_size, torch

    def probabilities(self, pairs: Sequence[tuple[str, str]]):
        """The label probabilities (numpy, one row per pair, JUDGE_LABELS order)."""
        import numpy as np

        torch = self.torch
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        rows = np.zeros((len(pairs), len(JUDGE_LABELS)), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                encoded = self.tokenizer(
                    [pairs[i][0] for i in batch],
                    [pairs[i][1] for i in batch],
                    truncation=True,
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                logits = self.model(**encoded).logits.float()
                rows[batch] = torch.softmax(logits, dim=-1).numpy()
        return rows

    def decide(
        self, pairs: Sequence[tuple[str, str]], threshold: float = 0.0, scope: str = "all"
    ) -> list[JudgeDecision | None]:
        """Each pair's decision where the judge overrides the rules, else None (`confident_decisions`)."""
        distinct = sorted(set(pairs))
        if not distinct:
            return []
        decided = dict(zip(distinct, confident_decisions(self.probabilities(distinct), threshold, scope)))
        return [decided[pair] for pair in pairs]


def judged_annotation(
    reference: list[str], candidate: list[str], similarity, rules_: Rules, decisions: dict
) -> Annotation:
    """One pair's annotation with the judge deciding its matched pairs (`decisions`: (reference statement, candidate
    statement) -> JudgeDecision or None). A pair without a decision (None, or absent: both findings normal statements,
    which the judge did not learn) is decided by the rules, exactly as judge=rules decides it."""
    pairs = assignment(similarity, rules_.threshold)
    annotation = Annotation(reference, candidate, [])
    errors, kept = [], []
    for r, c in sorted(pairs, key=lambda p: p[1]):
        decision = decisions.get((reference[r], candidate[c]))
        if decision is None:  # the rules decide this pair
            kept.append((r, c))
            error = pair_error(reference[r], candidate[c], r, c, rules_)
            if error is None:
                annotation.matches.append((r, c, float(similarity[r, c])))
            else:
                errors.append(error)
            continue
        annotation.decisions.append((r, c, decision.label))
        if decision.decision == "unrelated":
            continue
        kept.append((r, c))
        if decision.decision in ("same", "attribute_error"):
            annotation.matches.append((r, c, float(similarity[r, c])))
        error = judged_error(decision, reference[r], candidate[c], r, c)
        if error is not None:
            errors.append(error)
    annotation.errors = sorted_errors(errors + unmatched_errors(reference, candidate, kept, rules_))
    return annotation


def judged_pairs(similarities, rules_: Rules) -> list[tuple[str, str]]:
    """The (reference, candidate) statements of every matched pair the judge decides (not both normal)."""
    wanted = []
    for reference, candidate, similarity in similarities:
        for r, c in assignment(similarity, rules_.threshold):
            if not (rules.is_normal(reference[r]) and rules.is_normal(candidate[c])):
                wanted.append((reference[r], candidate[c]))
    return wanted


def annotate_with_judge(
    teacher,
    judge: FindingJudge,
    references,
    candidates,
    progress: bool = False,
    threshold: float = 0.0,
    scope: str = "all",
) -> list:
    """The teacher's annotations of lists of findings, matched pairs decided by `judge` where it is confident
    (`confident_decisions`), by the rules elsewhere."""
    similarities = teacher.similarities(references, candidates, progress)
    wanted = judged_pairs(similarities, teacher.rules)
    decisions = dict(zip(wanted, judge.decide(wanted, threshold, scope)))
    return [judged_annotation(ref, cand, sim, teacher.rules, decisions) for ref, cand, sim in similarities]
