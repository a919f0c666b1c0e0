"""Who decides a matched pair of findings in semantic_green: the word rules (teacher.py's `pair_error`) or a trained
finding-pair judge (`finding_judge`, recipe `judge/pairs`: FeatureJudge, a network over the two findings' attribute
frames, shipped; or FindingJudge, a cross-encoder over the two findings).

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

from ...findings.feature_judge import FeatureHead, feature_rows, is_feature_judge
from ...findings.feature_judge import cosines as pair_cosines
from ...findings.judge_labels import JUDGE_LABELS, JudgeDecision, parse_label
from ...loading.checkpoint import CheckpointError, load_manifest
from ...models.text_encoder import TextEncoder
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
SCOPES = ("all", "matched", "attributes", "rule_blind")


def confident_decisions(probabilities, threshold: float, scope: str = "all") -> list[JudgeDecision | None]:
    """Per row of label probabilities (JUDGE_LABELS order): the judge's decision where it overrides the rules, else
    None (the rules decide). It overrides where its most probable label is not `same` and that label's probability
    exceeds `threshold`. With scope `matched`, where its most probable label is `same` or an attribute error and
    exceeds `threshold` (a confident `same` clears an error the rules saw); with scope `attributes`, only attribute
    errors (a contradiction or an unrelated pair stays the rules'); with scope `rule_blind`, only attribute errors of
    RULE_BLIND_KINDS."""
    if scope not in SCOPES:
        raise ValueError(f"unknown judge scope {scope!r}; expected one of {list(SCOPES)}")
    chosen = []
    for row in probabilities:
        k = int(row.argmax())
        decision = parse_label(JUDGE_LABELS[k])
        confident = decision.decision != "same" and float(row[k]) > threshold
        if scope == "matched":
            confident = decision.decision in ("same", "attribute_error") and float(row[k]) > threshold
        if scope == "attributes":
            confident = confident and decision.decision == "attribute_error"
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

    def probabilities(self, pairs: Sequence[tuple[str, str]], cosines=None):
        """The label probabilities (numpy, one row per pair, JUDGE_LABELS order); `cosines` are not read."""
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
        self, pairs: Sequence[tuple[str, str]], threshold: float = 0.0, scope: str = "all", cosines=None
    ) -> list[JudgeDecision | None]:
        """Each pair's decision where the judge overrides the rules, else None (`confident_decisions`). `cosines`
        (the pairs' embedding cosines) are for the feature judge; the cross-encoder reads the texts alone."""
        return _decide(self, pairs, threshold, scope, cosines)


def _decide(judge, pairs, threshold: float, scope: str, cosines) -> list[JudgeDecision | None]:
    """Each distinct pair judged once."""
    known = dict(zip(pairs, cosines)) if cosines is not None else {}
    distinct = sorted(set(pairs))
    if not distinct:
        return []
    found = [known[p] for p in distinct] if cosines is not None else None
    decided = dict(zip(distinct, confident_decisions(judge.probabilities(distinct, found), threshold, scope)))
    return [decided[pair] for pair in pairs]


class FeatureJudge:
    """A `finding_judge` export of architecture pair_features (inference/findings/feature_judge.py): the same
    `decide` as FindingJudge, from the pairs' attribute frames and embedding cosines."""

    def __init__(self, path: str | Path, encoder=None, batch_size: int = 64):
        directory, _ = load_manifest(path, COMPONENT)
        self.head = FeatureHead.load(directory)
        self.encoder, self.batch_size = encoder, batch_size

    def probabilities(self, pairs: Sequence[tuple[str, str]], cosines=None):
        """The label probabilities (numpy, one row per pair, JUDGE_LABELS order); the cosines are computed with the
        head's encoder when not given."""
        if cosines is None:
            if self.encoder is None:
                self.encoder = TextEncoder(self.head.encoder)
            cosines = pair_cosines(pairs, self.encoder, self.batch_size)
        return self.head.probabilities(feature_rows(pairs, cosines))

    def decide(self, pairs, threshold: float = 0.0, scope: str = "all", cosines=None) -> list[JudgeDecision | None]:
        return _decide(self, pairs, threshold, scope, cosines)


def shipped_judge() -> Path:
    """The finding_judge export that ships with radmetrics (resources/finding_judge/: configs/judge/pairs/small.yaml's
    run; its manifest and card say how it was trained and what it scored)."""
    from importlib.resources import files

    return Path(str(files("radmetrics.inference").joinpath("resources", "finding_judge")))


def load_judge(path: str | Path, batch_size: int = 64, encoder=None):
    """The export's judge: a FeatureJudge (pair_features) or a FindingJudge (cross-encoder)."""
    directory, _ = load_manifest(path, COMPONENT)
    if is_feature_judge(directory):
        return FeatureJudge(directory, encoder, batch_size)
    return FindingJudge(directory, batch_size)


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


def judged_pairs(similarities, rules_: Rules) -> dict[tuple[str, str], float]:
    """The (reference, candidate) statements of every matched pair the judge decides (not both normal), each with its
    cosine."""
    wanted = {}
    for reference, candidate, similarity in similarities:
        for r, c in assignment(similarity, rules_.threshold):
            if not (rules.is_normal(reference[r]) and rules.is_normal(candidate[c])):
                wanted[(reference[r], candidate[c])] = float(similarity[r, c])
    return wanted


def annotate_with_judge(
    teacher,
    judge,
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
    pairs = list(wanted)
    decisions = dict(zip(pairs, judge.decide(pairs, threshold, scope, [wanted[p] for p in pairs])))
    return [judged_annotation(ref, cand, sim, teacher.rules, decisions) for ref, cand, sim in similarities]
