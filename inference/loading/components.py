"""The learned components radmetrics trains and consumes, with their label schemas.

A component's schema (label names and their order) is part of the contract between
`radmetrics.training` (which writes it into an exported checkpoint's manifest) and
`radmetrics.inference` (which refuses a checkpoint whose schema differs). Bump a component's
`schema_version` whenever its label set or meaning changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The findings extractor's input features after the sentence embedding (inference/findings/extractor.py).
FINDINGS_RULE_FEATURES = ("is_normal", "names_abnormality", "is_comparison")
RATE_ENTITY_TYPES = ("ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE", "ANATOMY")

# CheXbert's condition order (Smit et al. 2020; stanfordmlgroup/CheXbert `CONDITIONS`).
CHEXPERT_CONDITIONS = (
    "Enlarged Cardiomediastinum",
    "Cardiomegaly",
    "Lung Opacity",
    "Lung Lesion",
    "Edema",
    "Consolidation",
    "Pneumonia",
    "Atelectasis",
    "Pneumothorax",
    "Pleural Effusion",
    "Pleural Other",
    "Fracture",
    "Support Devices",
    "No Finding",
)
CHEXBERT_CLASSES = ("blank", "positive", "negative", "uncertain")
CHEXBERT_NO_FINDING_CLASSES = ("blank", "positive")

# The finding-pair judge's labels, in the order of its head (inference/findings/judge_labels.py reads them back).
ATTRIBUTES = (
    "measurement",
    "device_position",
    "severity",
    "location",
    "certainty",
    "specificity",
    "interval_change",
)
CONTRADICTIONS = ("negation", "laterality")
JUDGE_LABELS = (
    "same",
    "unrelated",
    *(f"contradiction:{kind}" for kind in CONTRADICTIONS),
    *(f"attribute:{a}:{s}" for a in ATTRIBUTES for s in ("significant", "insignificant")),
)

RADGRAPH_ENTITY_LABELS = ("ANAT-DP", "OBS-DP", "OBS-U", "OBS-DA")
RADGRAPH_RELATION_LABELS = ("modify", "located_at", "suggestive_of")
# RadGraph-XL's entity labels (Delbrouck et al. 2024), as its released models name them.
RADGRAPH_XL_ENTITY_LABELS = tuple(
    f"{kind}::{certainty}"
    for kind in ("Anatomy", "Observation", "Anatomy::measurement", "Observation::measurement")
    for certainty in ("definitely present", "definitely absent", "uncertain")
)


def iob_labels(types: tuple[str, ...]) -> list[str]:
    return ["O"] + [f"{prefix}-{t}" for t in types for prefix in ("B", "I")]


def user_label_map_problem(schema: dict, found: dict) -> str | None:
    """Why `found` is not `schema` with its label lists replaced by a user's own (same keys, the same non-list
    values, distinct non-empty labels, a NULL class first where the schema has one, IOB lists in IOB form), or None."""
    if not isinstance(found, dict) or set(found) != set(schema):
        return f"expected the keys {sorted(schema)}, found {found!r}"
    for key, expected in schema.items():
        labels = found[key]
        if not isinstance(expected, list):
            if labels != expected:
                return f"{key!r} must be {expected!r}, found {labels!r}"
            continue
        if not isinstance(labels, list) or not labels or len(set(labels)) != len(labels):
            return f"{key!r} must list distinct labels, found {labels!r}"
        if not all(isinstance(x, str) and x.strip() == x and x for x in labels):
            return f"{key!r} holds an empty or padded label: {labels!r}"
        if expected[0] in ("O", "NULL") and labels[0] != expected[0]:
            return f"{key!r} must start with {expected[0]!r}, found {labels!r}"
        if expected[0] == "O" and labels != iob_labels(tuple(x[2:] for x in labels[1::2])):
            return f"{key!r} must be O then B-/I- per type, found {labels!r}"
    return None


@dataclass(frozen=True)
class Component:
    """`label_map`: the exact labels and order a radmetrics-trained component has. Released models keep their
    authors' label order, so their components give `allowed_labels` instead: each listed field must hold
    distinct labels from its set, in any order."""

    name: str
    schema_version: int
    description: str
    label_map: dict = field(default_factory=dict)
    allowed_labels: dict | None = None
    user_label_sets: bool = False  # a user's own labels may replace the label lists (`radmetrics data import`)

    def label_map_problem(self, found: dict) -> str | None:
        if self.allowed_labels is None and self.user_label_sets and found != self.label_map:
            return user_label_map_problem(self.label_map, found)
        if self.allowed_labels is None:
            return None if found == self.label_map else f"expected {self.label_map}, found {found}"
        for key, allowed in self.allowed_labels.items():
            labels = found.get(key)
            if not isinstance(labels, list) or len(set(labels)) != len(labels) or not set(labels) <= set(allowed):
                return f"{key!r} must list distinct labels from {sorted(allowed)}, found {labels!r}"
        return None


COMPONENTS: dict[str, Component] = {
    c.name: c
    for c in (
        Component(
            "rate_ner_iob",
            1,
            "RaTE-NER token classifier (IOB over the 5 RaTEScore entity types)",
            {"labels": iob_labels(RATE_ENTITY_TYPES)},
            user_label_sets=True,
        ),
        Component(
            "rate_ner_span",
            1,
            "RaTE-NER span classifier, PURE-style (null class first)",
            {"labels": ["NULL", *RATE_ENTITY_TYPES], "max_span_width": 8},
            user_label_sets=True,
        ),
        Component(
            "chexbert",
            1,
            "CheXbert-style labeler: 13 four-class heads + 1 two-class head (No Finding)",
            {
                "conditions": list(CHEXPERT_CONDITIONS),
                "classes": list(CHEXBERT_CLASSES),
                "no_finding_classes": list(CHEXBERT_NO_FINDING_CLASSES),
            },
        ),
        Component(
            "radgraph",
            1,
            "RadGraph-style span entity + relation extractor",
            {"entities": ["NULL", *RADGRAPH_ENTITY_LABELS], "relations": ["NULL", *RADGRAPH_RELATION_LABELS]},
            user_label_sets=True,
        ),
        Component(
            "radgraph_dygie",
            1,
            "a released RadGraph DyGIE++ extractor (radgraph, radgraph-xl, modern-radgraph-xl), converted",
            allowed_labels={
                "entities": ["", *RADGRAPH_ENTITY_LABELS, *RADGRAPH_XL_ENTITY_LABELS],
                "relations": list(RADGRAPH_RELATION_LABELS),
            },
        ),
        Component(
            "ratescore_pipeline",
            1,
            "the released RaTEScore models: a RaTE-NER token classifier (ner/) and its entity encoder (encoder/),"
            " converted",
            allowed_labels={"labels": iob_labels(RATE_ENTITY_TYPES)},
        ),
        Component(
            "findings_extractor",
            1,
            "findings extractor: a logistic head over the bundled MiniLM's statement embedding and rule features, "
            "deciding which statements and clauses of a report are findings",
            {"labels": ["other", "finding"], "features": ["embedding", *FINDINGS_RULE_FEATURES]},
        ),
        Component(
            "finding_judge",
            1,
            "finding-pair judge (a network over the two findings' attribute frames, or a cross-encoder) deciding "
            "whether a candidate finding is the reference finding, the same with an attribute error (which, and "
            "whether clinically significant), a contradiction, or unrelated",
            {"labels": list(JUDGE_LABELS)},
        ),
        Component(
            "green",
            1,
            "GREEN evaluator causal LM (response format of GREEN appendix A.2)",
            {
                "response_sections": [
                    "[Explanation]",
                    "[Clinically Significant Errors]",
                    "[Clinically Insignificant Errors]",
                    "[Matched Findings]",
                ]
            },
        ),
        Component(
            "crimson",
            1,
            "CRIMSON evaluator causal LM (the JSON answer of crimson-score 0.2.0's OUTPUT_FORMAT)",
            {"answer_keys": ["reference_findings", "predicted_findings", "matched_findings", "errors"]},
        ),
    )
}


def get_component(name: str) -> Component:
    try:
        return COMPONENTS[name]
    except KeyError:
        raise ValueError(f"unknown component {name!r}; known components: {', '.join(sorted(COMPONENTS))}") from None
