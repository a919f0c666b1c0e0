"""The findings extractor: a report's abnormal findings, one per item, as RadPref's radiologists list them.

Candidates come from rules, decisions from trained weights. A report is split into statements (`sentences.statements`)
and each statement into clauses at coordinations and commas (`clauses`). A logistic head over the bundled MiniLM's
sentence embedding plus three rule features (the statement is normal, names an abnormality, compares with a prior
study; `features`) gives each candidate the probability that it is a finding. That head is what the recipe
`findings/classifier` trains, on silver labels from the IU X-ray corpus: each report's statements and clauses aligned
with NLM's manual MeSH codes of that report (data_builders/extractor_labels.py).

A statement is a finding when its probability reaches `statement_threshold`; it is then replaced by its clauses when
at least two of them reach `clause_threshold` (one sentence naming several findings gives several), else kept whole.
A statement without a Latin letter (another script) is kept whole: the head was trained on English reports.
Normal and negated statements, technique and patient details fall below the threshold; devices and comparisons with
a prior study are kept when the head keeps them (with `hedged`, what judge=model reads, a statement that places a
device's tip or names an abnormality under a strong hedge is kept whatever the head says: `by_rule`; and a statement
splits into `hedged_clauses`, which keep an interpretation, a hedge, a place and a differential with its finding).
The two thresholds are the recipe's config values, chosen on radpref_dev's 30 development cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import atomic
from ..loading.checkpoint import load_manifest
from ..loading.components import FINDINGS_RULE_FEATURES as RULE_FEATURES
from ..models.text_encoder import TextEncoder
from ..text import word_rules as rules
from ..text.sentences import expand_abbreviations, statements
from .pair_features import NUMBER_UNIT, frame, strongly_hedged, tip_placed

HEAD_FILE = "findings_head.json"
WEIGHTS_FILE = "model.safetensors"
COMPONENT = "findings_extractor"

# Where a statement splits into clauses: commas, semicolons, coordinations, and the phrases that join a finding to its
# interpretation ("opacity, consistent with pneumonia").
_CLAUSE_BREAK = re.compile(
    r",|;|\b(?:versus|vs\.?|or|and|with|which|while|whereas|but|although|as well as|indicated by|"
    r"suggestive (?:of|for)|consistent with|compatible with|concerning for|favou?rs?|favou?ring|likely representing|"
    r"representing|"
    r"could (?:indicate|represent)|may represent|obscuring)\b",
    re.I,
)
# What a finding is not: the patient's details, the study's technique and limits (dropped whatever the head says).
_NOT_A_FINDING = re.compile(
    r"\b(?:the patient is|year-old|years? old|portable|view|views|rotated|rotation|exposure|overexposure|"
    r"limit(?:ed|ing|ation)|excluded|history of|recommend\w*|correlat\w*|follow-up|normally|well[- ]aerated|"
    r"well[- ]expanded)\b",
    re.I,
)
# A finding stated with a hedge of exclusion ("a neoplasm cannot be excluded") is a finding, not a study detail.
_HEDGED_EXCLUSION = re.compile(
    r"\b(?:cannot|can ?not|can't|could not|not)\s+(?:be\s+|been\s+)?(?:entirely\s+|completely\s+|definitely\s+)?"
    r"(?:excluded|ruled out)\b",
    re.I,
)
_SEGMENT = re.compile(r"[^,;]+[,;]?")
# Words that introduce a finding without being part of it ("The chest X-ray shows", "There is also evidence of").
_LEAD_IN = re.compile(
    r"^(?:(?:the )?(?:chest )?(?:x-ray|radiograph|study|image|film|examination)s? (?:shows?|demonstrates?|reveals?)"
    r"(?: evidence of)? |there (?:is|are) (?:also )?(?:evidence of )?|(?:also |again )?(?:seen|noted) (?:is|are) )",
    re.I,
)


def finding_text(text: str) -> str:
    """A finding without the words that introduce it: "There is also evidence of cardiomegaly" -> "cardiomegaly"."""
    stripped = _LEAD_IN.sub("", text).strip()
    return stripped[:1].upper() + stripped[1:] if stripped and text[:1].isupper() else stripped or text


# Where a finding is seen, not a statement about the study: "the mediastinum appears widened on this supine view".
_SEEN_ON = re.compile(r"\b(?:on|in) (?:this|the|a) (?:\w+ )?(?:view|views|radiograph|film|image|projection)\b", re.I)


def not_a_finding(text: str, hedged: bool = False) -> bool:
    """Whether the text is about the patient, the study's technique or limits, or a recommendation; with `hedged`, a
    hedge of exclusion ("cannot be excluded") and the view a finding is seen on ("on this supine view") are not such
    words."""
    if hedged:
        text = _SEEN_ON.sub(" ", _HEDGED_EXCLUSION.sub(" ", text))
    return bool(_NOT_A_FINDING.search(text))


def normal_part(text: str) -> bool:
    """A part every comma-separated segment of which is a normal statement naming no abnormality ("the right upper
    zone is clear"), and that places no device's tip and compares with no prior study; a hedge of exclusion ("aortic
    injury not excluded") is not a negation."""
    if places_tip(text) or rules.is_comparison(text) or rules.change_directions(text):
        return False
    return all(
        not _HEDGED_EXCLUSION.search(segment) and rules.is_normal(segment) and not rules.names_abnormality(segment)
        for segment in _SEGMENT.findall(text)
    )


def _without_study_details(segment: str) -> str:
    """A segment, empty when it is about the study or a recommendation; the findings that open it, joined by "and" to
    a recommendation, stay ("malignancy is a consideration and chest CT is recommended" -> "malignancy is a
    consideration"). A study detail that opens the segment governs all of it ("History of asthma and COPD")."""
    if not not_a_finding(segment, hedged=True):
        return segment
    body = segment.rstrip(",;")
    pieces = re.split(r"\s+and\s+", body)
    kept = []
    for piece in pieces:
        if not_a_finding(piece, hedged=True):
            break
        kept.append(piece)
    if not kept or not all(rules.is_significant_alone(piece) for piece in kept):
        return ""
    return " and ".join(kept) + segment[len(body) :]


def finding_part(statement: str) -> str:
    """The statement without its comma- or semicolon-separated segments that are not findings (a recommendation, a
    limit of the study): "Right upper lobe opacity; a neoplasm cannot be excluded, CT recommended" -> "Right upper lobe
    opacity; a neoplasm cannot be excluded"; nor, beside a semicolon-separated part that names an abnormality on its
    own, its normal parts (`normal_part`: "Patchy opacities in the right lower zone; the right upper zone is clear" ->
    "Patchy opacities in the right lower zone": the head, which reads a statement whole, drops it for the normal
    words; a comma may separate the items of one negation, "No effusion, pneumothorax, or cardiomegaly", a semicolon
    ends it). Empty when no segment is left."""
    kept = [_without_study_details(part) for part in _SEGMENT.findall(statement)]
    kept_text = "".join(kept)
    parts = re.findall(r"[^;]+;?", kept_text)
    if len(parts) >= 2 and any(rules.is_significant_alone(part) for part in parts):
        kept_text = "".join(part for part in parts if not normal_part(part))
    return kept_text.strip().rstrip(",;").strip()


def places_tip(statement: str) -> bool:
    """Whether the statement names a device and where its tip lies ("Dobhoff tip in the descending duodenum", "ETT
    4 cm above the carina"): RadPref's radiologists list devices and their tips as findings (21 device findings in
    the 50 development cases' reference lists), and the head, trained on MeSH codes that name no devices, drops
    some."""
    found = frame(statement)
    return found.device and tip_placed(found)


def hedged_abnormality(statement: str) -> bool:
    """Whether the statement names an abnormality under a strong hedge ("a small pneumothorax cannot be excluded"):
    a finding whose certainty the judge decides, which the head, trained on MeSH codes of definite findings, may
    drop. The "not" of a hedge of exclusion ("pulmonary edema is not excluded") is not a negation."""
    plain = _HEDGED_EXCLUSION.sub(" ", statement)
    return strongly_hedged(frame(statement)) and rules.names_abnormality(plain) and not rules.is_normal(plain)


def by_rule(statement: str) -> bool:
    """A statement judge=model's extraction keeps whatever the head says: it places a device's tip, or names an
    abnormality under a strong hedge."""
    return places_tip(statement) or hedged_abnormality(statement)


def clauses(statement: str) -> list[str]:
    """The statement's clauses, each with at least one word, in order."""
    return [part.strip(" ,;") for part in _CLAUSE_BREAK.split(statement) if part and part.strip(" ,;")]


# The breaks of _CLAUSE_BREAK that join a description to its interpretation ("opacity, consistent with pneumonia"),
# and the words that open a hedged or interpreting clause ("..., probably atelectasis").
_INTERPRETATION_BREAK = re.compile(
    r"suggestive (?:of|for)|consistent with|compatible with|concerning for|favou?rs?|favou?ring|likely representing|"
    r"representing|could (?:indicate|represent)|may represent",
    re.I,
)
_HEDGE_FIRST = re.compile(
    r"\s*(?:(?:most|more|less|very|highly) )?(?:likely|probabl[ey]|possibl[ey]|"
    r"presumabl[ey]|presumed|suspected|suspicious|questionable|concerning|worrisome|in keeping|typical|classic|"
    r"characteristic|may|could|might|suggest\w*|represent\w*|favou?r\w*|compatible|consistent|thought|felt|"
    r"believed|diagnostic)\b",
    re.I,
)


# Words of a clause that only places or spreads the finding before it ("involving the right lower lobe", "most
# prominent at the bases", "right greater than left", "and potentially the right middle lobe"): such a clause is part
# of that finding, as RadPref's raters list it. A few hedge adverbs are among them, for a place given with a hedge.
_PLACE_WORDS = frozenset(
    """a an the and or of in at to into within on both each either its with along over from towards toward
    right left bilateral bilaterally unilateral upper middle lower mid lobe lobes zone zones lung lungs field fields
    base bases basal basilar bibasilar apex apices apical hilum hila hilar perihilar lingula lingular segment
    segments segmental central peripheral peripherally posterior posteriorly anterior anteriorly lateral laterally
    medial medially superior inferior side sided hemithorax aspect aspects portion portions region regions
    predominantly predominant particularly especially mainly mostly most more less lesser greater than slightly
    prevalent involving involvement involved extending extends confined located potentially possibly
    also likely""".split()
)


_DIFFERENTIAL_BREAK = re.compile(r"or|versus|vs\.?", re.I)


# Where a finding is most marked ("particularly prominent in the lower lung fields"): an extent, not a finding.
_MOST_MARKED = re.compile(
    r"\b(?:most|more|less|particularly|especially|slightly) "
    r"(?:prominent|pronounced|marked|evident|conspicuous)(?:ly)?\b"
)
# A parenthetical hedge between two breaks ("atelectasis or, less likely, pneumonia") qualifies what follows it.
_HEDGE_WORDS = frozenset("less more most much far likely possibly probably potentially perhaps".split())


# A clause that only sizes the finding before it ("Spiculated mass, 2.8 cm, ...") or places a device's tip ("Right
# internal jugular catheter, tip deep in the right atrium") is part of that finding: RadPref's radiologists list a
# device with its tip, and a size is the finding's measurement.
_SIZE_ONLY = re.compile(
    r"\s*(?:(?:previously|formerly|(?:increased|decreased|up|down) from|from)\s+)?"
    r"(?:(?:measuring|measures|measured|approximately|approx|about|roughly|up to|now)\s+)*"
    rf"{NUMBER_UNIT}"
    r"(?:\s+in (?:greatest |maximal |maximum |long axis |short axis )?"
    r"(?:diameter|dimension|size|length|width|height))?\s*",
    re.I,
)
_TIP_FIRST = re.compile(
    r"\s*(?:(?:with|its|the) )?(?:tip|tips|terminat\w*|ending|ends|side (?:port|hole)s?)\b",
    re.I,
)


def _words(clause: str) -> list[str]:
    return re.findall(r"[a-z]+", _MOST_MARKED.sub(" ", clause.lower().replace("-", " ")))


def place_only(clause: str) -> bool:
    """Whether the clause has no word but places, extents and the hedges that qualify a place (`_PLACE_WORDS`,
    `_MOST_MARKED`)."""
    words = _words(clause)
    return bool(words) and all(w in _PLACE_WORDS for w in words)


def hedge_only(clause: str) -> bool:
    """Whether the clause is a parenthetical hedge and nothing else ("less likely")."""
    words = _words(clause)
    return bool(words) and all(w in _HEDGE_WORDS for w in words)


def _breaks(statement: str) -> list[tuple[int, int, list[str]]]:
    """The statement's clause breaks, adjacent ones (", with", "and/or") as one: (start, end, the break words in
    order)."""
    merged = []
    for found in _CLAUSE_BREAK.finditer(statement):
        if merged and not statement[merged[-1][1] : found.start()].strip(" /"):
            merged[-1] = (merged[-1][0], found.end(), [*merged[-1][2], found.group(0)])
        else:
            merged.append((found.start(), found.end(), [found.group(0)]))
    return merged


def hedged_clauses(statement: str) -> list[str]:
    """The statement's clauses as judge=model's extraction reads them, one per finding as RadPref's radiologists list
    findings: as `clauses`, except that
    - an interpretation or a hedge stays with the finding it qualifies ("Left lower lobe consolidation with air
      bronchograms, probably pneumonia" -> "Left lower lobe consolidation", "air bronchograms, probably pneumonia"),
      so the judge sees how sure the report is and what it reads a description as (`clauses` drops "consistent
      with" and leaves "pneumonia" alone, and the head, trained on findings, often drops that);
    - a clause that only places or spreads the finding before it stays with it ("opacity, involving the right lower
      lobe and potentially the right middle lobe": `place_only`);
    - a differential is one finding ("atelectasis versus scarring", "bronchitis or bronchiectasis", "atelectasis
      or, less likely, pneumonia": a parenthetical hedge qualifies what follows it);
    - a clause of only a size, or one that places a device's tip, stays with the finding or device before it
      (`_SIZE_ONLY`, `_TIP_FIRST`).
    Adjacent breaks (", with", "and/or") are one."""
    breaks = _breaks(statement)
    kept, start = [], 0
    for n, (b_start, b_end, words) in enumerate(breaks):
        following = statement[b_end : breaks[n + 1][0] if n + 1 < len(breaks) else len(statement)]
        preceding = statement[breaks[n - 1][1] if n else 0 : b_start]
        if (
            any(_INTERPRETATION_BREAK.fullmatch(w) or _DIFFERENTIAL_BREAK.fullmatch(w) for w in words)
            or _HEDGE_FIRST.match(statement, b_end)
            or place_only(following)
            or hedge_only(preceding)
            or _SIZE_ONLY.fullmatch(following)
            or (_TIP_FIRST.match(statement, b_end) and frame(statement[start:b_start]).device)
        ):
            continue
        kept.append(statement[start:b_start])
        start = b_end
    kept.append(statement[start:])
    return [part.strip(" ,;") for part in kept if part.strip(" ,;")]


def rule_features(text: str) -> list[float]:
    return [float(rules.is_normal(text)), float(rules.names_abnormality(text)), float(rules.is_comparison(text))]


def features(texts: Sequence[str], encoder, batch_size: int = 64, progress: bool = False) -> np.ndarray:
    """One row per text: its sentence embedding, then the rule features."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    embedded = encoder.encode(list(texts), batch_size=batch_size, progress=progress, desc="findings")
    rules_ = np.array([rule_features(t) for t in texts], dtype=np.float32)
    return np.concatenate([np.asarray(embedded, dtype=np.float32), rules_], axis=1)


@dataclass
class FindingsHead:
    """The trained logistic head and the extraction thresholds."""

    weight: np.ndarray
    bias: float
    encoder: str = "default"
    statement_threshold: float = 0.5
    clause_threshold: float = 0.5

    def probability(self, rows: np.ndarray) -> np.ndarray:
        if rows.size == 0:
            return np.zeros(0)
        return 1.0 / (1.0 + np.exp(-(rows @ self.weight + self.bias)))

    def save(self, directory: str | Path, extra: dict | None = None) -> None:
        from safetensors.numpy import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        save_file(
            {"weight": self.weight.astype(np.float32), "bias": np.array([self.bias], dtype=np.float32)},
            str(directory / WEIGHTS_FILE),
        )
        config = {
            "encoder": self.encoder,
            "features": ["embedding", *RULE_FEATURES],
            "statement_threshold": self.statement_threshold,
            "clause_threshold": self.clause_threshold,
            **(extra or {}),
        }
        atomic.write_text(directory / HEAD_FILE, json.dumps(config, indent=2) + "\n")

    @classmethod
    def load(cls, directory: str | Path) -> FindingsHead:
        from safetensors.numpy import load_file

        directory = Path(directory)
        config = json.loads((directory / HEAD_FILE).read_text(encoding="utf-8"))
        tensors = load_file(str(directory / WEIGHTS_FILE))
        return cls(
            tensors["weight"].astype(np.float32),
            float(tensors["bias"][0]),
            config.get("encoder", "default"),
            float(config["statement_threshold"]),
            float(config["clause_threshold"]),
        )


def shipped_extractor() -> Path:
    """The export that ships with radmetrics (resources/findings_extractor/: its manifest names the command that
    trained it)."""
    from importlib.resources import files

    return Path(str(files("radmetrics.inference").joinpath("resources", "findings_extractor")))


class MemoEncoder:
    """An encoder that embeds each distinct text once for as long as it lives (the extractor and the judge of one
    scoring call see the same statements)."""

    def __init__(self, encoder):
        self.encoder, self.known = encoder, {}

    def encode(self, texts, batch_size: int = 64, progress: bool = False, desc: str = "embedding") -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        if missing:
            self.known.update(zip(missing, self.encoder.encode(missing, batch_size, progress, desc)))
        return np.stack([self.known[t] for t in texts]) if len(texts) else np.zeros((0, 0), dtype=np.float32)


def latin(text: str) -> bool:
    """Whether the text has a Latin letter: the extractor's head was trained on English reports only."""
    return bool(_LATIN.search(text))


def other_script(text: str) -> bool:
    """Whether the text has letters, none of them Latin (Chinese, Cyrillic, Arabic ...); "___" or "2." has none."""
    return not latin(text) and bool(_LETTER.search(text))


_LATIN = re.compile(r"[A-Za-z]")
_LETTER = re.compile(r"[^\W\d_]")


class FindingsExtractor:
    """`FindingsExtractor.from_export(path)(reports) -> [[finding, ...], ...]`."""

    def __init__(self, head: FindingsHead, encoder=None, batch_size: int = 64):
        self.head = head
        self.encoder = encoder if encoder is not None else TextEncoder(head.encoder)
        self.batch_size = batch_size

    @classmethod
    def from_export(cls, path: str | Path | None = None, encoder=None, batch_size: int = 64) -> FindingsExtractor:
        """An export of the findings_extractor component (its manifest checked), or the shipped one."""
        directory, _ = load_manifest(path or shipped_extractor(), COMPONENT)
        return cls(FindingsHead.load(directory), encoder, batch_size)

    def probabilities(self, texts: Sequence[str], progress: bool = False) -> dict[str, float]:
        distinct = sorted(set(texts), key=len)
        values = self.head.probability(features(distinct, self.encoder, self.batch_size, progress))
        return dict(zip(distinct, map(float, values)))

    def of_reports(
        self, reports: Sequence[str], progress: bool = False, lobes: bool = False, hedged: bool = False
    ) -> list[list[str]]:
        """The findings of reports as written: abbreviations read as words first ("Lt" left, "PTX" pneumothorax), as
        semantic_green and a GREEN student prompted with findings read them; with `lobes`, "RUL" and the other lobes
        too (`expand_abbreviations`). `hedged`: see __call__; it also reads the extended abbreviations."""
        return self([expand_abbreviations(t, lobes, extended=hedged) for t in reports], progress, hedged)

    def __call__(self, reports: Sequence[str], progress: bool = False, hedged: bool = False) -> list[list[str]]:
        """Each report's findings. By default (what judge=rules reads, unchanged) a statement with a word about the
        study, the patient or a recommendation is dropped whole, "cannot be excluded" among them. With `hedged` (what
        semantic_green's judge=model reads: the judge decides certainty), a hedged finding ("pneumonia cannot be
        excluded") is kept, only the segments of a statement that are not findings are dropped (`finding_part`), and
        a statement that places a device's tip or names an abnormality under a strong hedge is a finding whatever the
        head says (`by_rule`), and so is a clause that names an abnormality under a strong hedge
        (`hedged_abnormality`); a statement splits into `hedged_clauses` (an interpretation, a hedge, a place and a
        differential stay with the finding they qualify)."""
        split = [statements(report) for report in reports]
        if hedged:
            split = [[part for part in map(finding_part, report) if part] for report in split]
        probability = self.probabilities([s for report in split for s in report if latin(s)], progress)
        kept = {s for s, p in probability.items() if p >= self.head.statement_threshold or (hedged and by_rule(s))}
        split_clauses = hedged_clauses if hedged else clauses
        parts = {s: split_clauses(s) for s in kept}  # only a statement that is a finding is split: half the embedding
        probability.update(self.probabilities([c for items in parts.values() if len(items) >= 2 for c in items]))
        found = []
        for report in split:
            items = []
            for statement in report:
                if other_script(statement):  # a script the head never saw: kept whole, judged by the matcher alone
                    items.append(statement)
                elif statement in kept and not not_a_finding(statement, hedged):
                    pieces = parts[statement] if len(parts[statement]) >= 2 else []
                    passing = [
                        c
                        for c in pieces
                        if probability[c] >= self.head.clause_threshold or (hedged and hedged_abnormality(c))
                    ]
                    items.extend(finding_text(t) for t in (passing if len(passing) >= 2 else [statement]))
            found.append(items)
        return found
