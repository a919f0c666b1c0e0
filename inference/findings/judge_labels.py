"""The finding-pair judge's labels: what a reference finding and a candidate finding are to each other.

A label is one of
- `same`: the candidate says what the reference says (a paraphrase, a synonym, an abbreviation, another order, a
  measurement within the tolerance a radiologist accepts);
- `attribute:<attribute>:<significant|insignificant>`: the same finding with one attribute wrong (ATTRIBUTES), and
  whether that error is clinically significant;
- `contradiction:<negation|laterality>`: the candidate denies the finding, or puts it on the other side;
- `unrelated`: a different finding.

The label list and its order are the `finding_judge` component's label map, defined in inference/loading/components.py
beside the other components' label maps (below findings/ and the metrics) and re-exported here: the data builders
write these labels, the recipe trains on them, and semantic_green reads them back with `parse_label`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..loading.components import ATTRIBUTES, CONTRADICTIONS, JUDGE_LABELS  # noqa: F401  (re-exported)

DECISIONS = ("same", "attribute_error", "contradiction", "unrelated")


@dataclass(frozen=True)
class JudgeDecision:
    """One label read back: `decision` (DECISIONS), the attribute or contradiction kind, and the significance."""

    decision: str
    kind: str | None = None  # the attribute (attribute_error) or the contradiction kind
    significant: bool = False

    @property
    def label(self) -> str:
        if self.decision == "attribute_error":
            return f"attribute:{self.kind}:{'significant' if self.significant else 'insignificant'}"
        if self.decision == "contradiction":
            return f"contradiction:{self.kind}"
        return self.decision


def parse_label(label: str) -> JudgeDecision:
    """The decision a label names; a label outside JUDGE_LABELS raises ValueError."""
    if label not in JUDGE_LABELS:
        raise ValueError(f"unknown finding-judge label {label!r}; expected one of {list(JUDGE_LABELS)}")
    parts = label.split(":")
    if parts[0] == "attribute":
        return JudgeDecision("attribute_error", parts[1], parts[2] == "significant")
    if parts[0] == "contradiction":
        return JudgeDecision("contradiction", parts[1], True)
    return JudgeDecision(parts[0])
