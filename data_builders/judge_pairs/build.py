"""Training pairs for the finding-pair judge: (reference finding, candidate finding, label) from a corpus.

The findings are the statements of each report (`split_sentences`). Reports are de-duplicated and split by their
normalised text (`assign_splits`, as every data builder splits); a statement belongs to the split of the reports it
comes from, and a statement that occurs in reports of more than one split is kept in train alone, so that no
validation or test finding is a training finding. Pairs are built within a split, from these edits:

- `same`: a meaning-preserving rewrite (rewrites.py: synonym, abbreviation, sentence frame, word order, unit, a size
  within tolerance), and device tips moved by at most 1 cm within their place (measurement.py);
- `attribute:*`: one attribute changed (attributes.py: measurement, severity, location within the organ, certainty,
  specificity, interval change; measurement.py: device tip distance and landmark), with its significance;
- `contradiction:*`: the finding negated or affirmed (the pair builders' lexicon), or moved to the other side;
- `unrelated`: another finding of the same split.

The corpus has few sizes, ratios and device tips, so sized lesions, cardiothoracic ratios, pneumothoraces sized by
percentage and device tips are also written from templates
(measurement.py), in every split; they are marked `synthetic`. Each label is capped per split (`per_label` in
train, an eighth of it in validation and test), sampled with a seeded generator: the same corpus and seed give the
same pairs. No RadPref text and nothing from CRIMSON's repository enters.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass

from radmetrics.inference.findings.judge_labels import JUDGE_LABELS, parse_label
from radmetrics.inference.text.sentences import split_sentences

from ..corpus.splits import normalise_report_text
from ..pairs import edit_lexicons as fx
from .attributes import EDITS, with_interval_change
from .measurement import device_position_pair, synthetic_percent_findings, synthetic_size_findings, two_devices_pair
from .rewrites import rewrite

SCHEMA_VERSION = 1
SPLITS = ("train", "validation", "test")
# Rewrites tried per finding, and how many times `per_label` the `same` label may hold: paraphrases are what a judge
# most often meets in real reports, and the one label that has no edit to spot.
SAME_PER_FINDING = 3
SAME_SHARE = 3


@dataclass
class JudgePair:
    id: str
    reference: str
    candidate: str
    label: str
    decision: str
    kind: str | None
    significant: bool
    edit: str  # what made the candidate: a rewrite, an attribute edit, `unrelated`
    source_id: str
    split: str
    synthetic: bool = False
    teacher: str = "programmatic"

    def to_dict(self) -> dict:
        return asdict(self)


def findings_by_split(reports, splits: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """split -> [(statement, a source report id)], each distinct statement (by normalised text) once, in train only
    when reports of several splits hold it."""
    owners: dict[str, dict] = {}
    for report in reports:
        for statement in split_sentences(report.text):
            key = normalise_report_text(statement)
            if len(key.split()) < 2:
                continue
            entry = owners.setdefault(key, {"text": statement, "source": report.id, "splits": set()})
            entry["splits"].add(splits[report.id])
    found: dict[str, list[tuple[str, str]]] = {s: [] for s in SPLITS}
    for entry in owners.values():
        split = "train" if len(entry["splits"]) > 1 else next(iter(entry["splits"]))
        found.setdefault(split, []).append((entry["text"], entry["source"]))
    return found


def _pair(reference: str, candidate: str, label: str, edit: str, source: str, split: str, synthetic=False):
    decision = parse_label(label)
    return JudgePair(
        "",
        reference,
        candidate,
        label,
        decision.decision,
        decision.kind,
        decision.significant,
        edit,
        source,
        split,
        synthetic,
    )


def pairs_of_finding(statement: str, source: str, split: str, pool: list[str], rng: random.Random) -> list[JudgePair]:
    """Every pair one finding gives: a rewrite, each attribute edit that applies, an interval change, an unrelated
    finding."""
    made = []
    for _ in range(SAME_PER_FINDING):
        found = rewrite(statement, rng)
        if found:
            made.append(_pair(statement, found[0], "same", found[1], source, split))
    for name, edit in EDITS.items():
        found = edit(statement, rng)
        if found and normalise_report_text(found[0]) != normalise_report_text(statement):
            made.append(_pair(statement, found[0], found[1], name, source, split))
    changed = with_interval_change(statement, rng) if rng.random() < 0.3 else None
    if changed:
        made.append(_pair(changed[0], changed[1], changed[2], "interval_change_added", source, split))
    other = rng.choice(pool)
    if normalise_report_text(other) != normalise_report_text(statement):
        made.append(_pair(statement, other, "unrelated", "unrelated", source, split))
    return made


def synthetic_pairs(split: str, count: int, rng: random.Random) -> list[JudgePair]:
    """Sized lesions, ratios and percentages (each edited and rewritten), device tips, and pairs of two different
    devices (unrelated), written from templates."""
    made = []
    for statement in synthetic_size_findings(rng, count) + synthetic_percent_findings(rng, count // 2):
        for name in ("measurement", "location", "laterality", "certainty"):
            found = EDITS[name](statement, rng)
            if found:
                made.append(_pair(statement, found[0], found[1], name, "synthetic", split, True))
        for _ in range(SAME_PER_FINDING):
            found = rewrite(statement, rng)
            if found:
                made.append(_pair(statement, found[0], "same", found[1], "synthetic", split, True))
    for _ in range(count):
        reference, candidate, verdict = device_position_pair(rng)
        label = "same" if verdict == "same" else f"attribute:device_position:{verdict}"
        made.append(_pair(reference, candidate, label, "device_position", "synthetic", split, True))
    for _ in range(count // 4):
        made.append(_pair(*two_devices_pair(rng), "unrelated", "two_devices", "synthetic", split, True))
    return made


def capped(pairs: list[JudgePair], per_label: int, rng: random.Random) -> list[JudgePair]:
    """At most `per_label` pairs of each label (a seeded sample), in a seeded order."""
    by_label: dict[str, list[JudgePair]] = defaultdict(list)
    for pair in pairs:
        by_label[pair.label].append(pair)
    kept = []
    for label in JUDGE_LABELS:
        group = by_label.get(label, [])
        cap = per_label * SAME_SHARE if label == "same" else per_label
        kept += group if len(group) <= cap else rng.sample(group, cap)
    rng.shuffle(kept)
    return kept


def build_judge_pairs(reports, splits: dict[str, str], per_label: int = 1500, seed: int = 0) -> dict[str, list]:
    """split -> [JudgePair], ids `judge-{split}-{n}`."""
    found = findings_by_split(reports, splits)
    result, train_keys = {}, set()
    for split in SPLITS:
        rng = random.Random(f"{seed}:judge_pairs:{split}")
        findings = found.get(split, [])
        pool = [text for text, _ in findings]
        cap = per_label if split == "train" else max(1, per_label // 8)
        pairs = [p for text, source in findings for p in pairs_of_finding(text, source, split, pool, rng)]
        pairs += synthetic_pairs(split, max(4, cap // 2), rng)
        unique, seen = [], set()
        for pair in pairs:
            key = (normalise_report_text(pair.reference), normalise_report_text(pair.candidate))
            if key not in seen and key not in train_keys and pair.candidate.strip():
                seen.add(key)
                unique.append(pair)
        kept = capped(unique, cap, rng)
        for n, pair in enumerate(kept):
            pair.id = f"judge-{split}-{n:06d}"
        result[split] = kept
        if split == "train":  # a templated pair repeated in a held-out split is left out of it
            train_keys = seen
    return result


def pair_statistics(pairs_by_split: dict[str, list[JudgePair]]) -> dict:
    return {
        "pairs": {split: len(pairs) for split, pairs in pairs_by_split.items()},
        "per_label": {split: dict(Counter(p.label for p in pairs)) for split, pairs in pairs_by_split.items()},
        "synthetic": {split: sum(p.synthetic for p in pairs) for split, pairs in pairs_by_split.items()},
        "abnormal_references": {
            split: sum(fx.is_abnormal_finding(p.reference) for p in pairs) for split, pairs in pairs_by_split.items()
        },
    }
