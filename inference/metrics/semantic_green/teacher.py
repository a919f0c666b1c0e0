"""The semantic GREEN teacher: GREEN's error categories for any (reference, candidate) pair, decided by sentence
matching and word rules, with no LLM and no edit log.

1. Both reports are split into statements (`split_sentences`, trailing period dropped).
2. Every statement is embedded with a sentence encoder (the bundled all-MiniLM-L6-v2, mean-pooled, normalised), and
   reference and candidate statements are matched one to one so that the total cosine is largest (the Hungarian
   assignment); an assigned pair below `threshold` is no match.
3. An unmatched candidate statement is (a) a false finding, an unmatched reference statement (b) a missing one;
   either is (e) / (f) instead when it is a comparison with a prior study that names no abnormality. It is significant
   when it is not a normal statement and names an abnormality (text/word_rules.py).
4. A matched pair is an error when the polarity differs (one side normal, the other not: (b) when the candidate is
   the normal side, else (a)), or, for a pair that is not normal on both sides, when both name a location and the
   locations differ ((c)) or both name a severity and the levels differ ((d)); all significant. A severity on one side
   only is an insignificant (d). Any other pair is a matched finding.

The rules and the threshold were chosen on RadPref's development half (text/word_rules.py, `SemanticGreen`'s defaults).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...findings.significance import names_term
from ...text import word_rules as rules
from ...text.sentences import statements
from ..shared.green_format import CATEGORY_LETTERS, render_green_response

# The cosine below which two statements do not match. On radpref_dev, tau-b 0.729 / 0.745 / 0.731 at 0.40 / 0.45 /
# 0.50,
# then 0.692 / 0.713 / 0.662 at 0.55 / 0.60 / 0.70: 0.5 is the round value at the edge of the plateau. Chosen inside
# case-level 5-fold cross-validation, the threshold gives a pooled held-out tau-b of 0.735 (20 fold draws: 0.694-0.745;
# benchmarks/results/semantic_green_radpref_dev.json).
THRESHOLD = 0.5


@dataclass(frozen=True)
class Rules:
    """The teacher's switches. The defaults are the chosen rules; the others exist to measure each rule's worth."""

    threshold: float = THRESHOLD
    # "lexicon": unmatched and names an abnormality in the entity lexicon; "terms": that, or names a term of the
    # clinical-significance rules (findings/significance.py `names_term`); "cue": unmatched and not normal
    significance: str = "lexicon"
    polarity_flips: bool = True
    location: bool = True
    severity: bool = True
    unmatched_normal_significant: bool = False
    interval_change: bool = False  # a matched pair whose change words disagree is a significant (e) error
    # an unmatched statement with no Latin letter (a script the lexicon cannot read) is significant unless normal
    other_scripts_significant: bool = False


@dataclass
class TeacherError:
    category: str  # a-f
    significant: bool
    candidate: int | None  # index of the candidate statement, if it has one
    reference: int | None  # index of the reference statement, if it has one
    reason: str

    def to_dict(self) -> dict:
        return {
            "category": self.category,
            "significant": self.significant,
            "candidate": self.candidate,
            "reference": self.reference,
            "reason": self.reason,
        }


@dataclass
class Annotation:
    """What the teacher decided for one pair."""

    reference_statements: list[str]
    candidate_statements: list[str]
    matches: list[tuple[int, int, float]]  # (reference index, candidate index, cosine) of matched findings
    errors: list[TeacherError] = field(default_factory=list)
    # (reference index, candidate index, label) of each matched pair a finding-pair judge decided (judge.py)
    decisions: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def significant(self) -> tuple[int, ...]:
        return tuple(sum(e.significant and e.category == c for e in self.errors) for c in CATEGORY_LETTERS)

    @property
    def insignificant(self) -> tuple[int, ...]:
        return tuple(sum(not e.significant and e.category == c for e in self.errors) for c in CATEGORY_LETTERS)

    @property
    def matched(self) -> int:
        return len(self.matches)

    @property
    def precision(self) -> float:
        """Matched findings over the candidate's statements."""
        return self.matched / len(self.candidate_statements) if self.candidate_statements else 0.0

    @property
    def recall(self) -> float:
        """Matched findings over the reference's statements."""
        return self.matched / len(self.reference_statements) if self.reference_statements else 0.0

    @property
    def score(self) -> float:
        """GREEN's score (section 3.2): matched / (matched + significant errors), 0 when nothing matched; 1 when
        neither side has a statement (or finding) to match: a normal report against a normal report."""
        if not self.reference_statements and not self.candidate_statements:
            return 1.0
        return self.matched / (self.matched + sum(self.significant)) if self.matched else 0.0

    def to_dict(self) -> dict:
        return {
            "reference_statements": self.reference_statements,
            "candidate_statements": self.candidate_statements,
            "matches": [[r, c, round(s, 4)] for r, c, s in self.matches],
            "errors": [e.to_dict() for e in self.errors],
            "significant": list(self.significant),
            "insignificant": list(self.insignificant),
            "matched": self.matched,
            **({"decisions": [list(d) for d in self.decisions]} if self.decisions else {}),
        }

    def response(self, quoted: bool = False, explanation: str = "walkthrough") -> str:
        """The annotation in GREEN's response format (appendix A.2): `parse_green_response` reads back exactly the
        counts decided here. Statements are named by number (C1, R2), as `format.numbered_prompt` shows them to a
        student; `quoted` adds each one's first words, for a reader or a prompt that does not number them (twice the
        tokens).
        `explanation`: "walkthrough" (one verdict per statement, `walkthrough()`) or "summary" (the counts in one
        sentence: a student trained for a few steps loops through a walkthrough, and not through a summary)."""

        def named(side: str, index: int) -> str:
            statements = self.candidate_statements if side == "C" else self.reference_statements
            return f"{side}{index + 1}" + (f" {quote(statements[index])}" if quoted else "")

        def item(error: TeacherError) -> str:
            sides = [named("C", error.candidate)] if error.candidate is not None else []
            sides += [named("R", error.reference)] if error.reference is not None else []
            return " vs ".join(sides)

        significant = {
            c: [item(e) for e in self.errors if e.significant and e.category == c] for c in CATEGORY_LETTERS
        }
        insignificant = {
            c: [item(e) for e in self.errors if not e.significant and e.category == c] for c in CATEGORY_LETTERS
        }
        matched = [f"{named('C', c)} = R{r + 1}" for r, c, _ in self.matches]
        text = self.walkthrough() if explanation == "walkthrough" else self.summary()
        return render_green_response(text, significant, insignificant, matched)

    def summary(self) -> str:
        errors = sum(self.significant) + sum(self.insignificant)
        if not errors:
            return f"The candidate conveys the reference's findings: {self.matched} matched, no error."
        return (
            f"The candidate differs from the reference in {errors} statement(s), {sum(self.significant)} of them "
            f"clinically significant; {self.matched} findings match."
        )

    def walkthrough(self) -> str:
        """One short verdict per candidate statement, in order, then per reference statement the candidate lacks, then
        the totals: "C1 matches R2. C2 (a) significant. C3 (c) significant vs R1. R3 (b) insignificant. ..."
        (statements
        numbered from 1, as `format.numbered_prompt` numbers them). The reasons are in the annotation's errors."""
        by_candidate = {c: f"C{c + 1} matches R{r + 1}." for r, c, _ in self.matches}
        for e in self.errors:
            if e.candidate is not None:
                versus = f" vs R{e.reference + 1}" if e.reference is not None else ""
                by_candidate[e.candidate] = f"C{e.candidate + 1} ({e.category}) {_significance(e)}{versus}."
        lines = [by_candidate[i] for i in range(len(self.candidate_statements))]
        lines += [f"R{e.reference + 1} ({e.category}) {_significance(e)}." for e in self.errors if e.candidate is None]
        counts = (
            f"{sum(self.significant)} significant and {sum(self.insignificant)} insignificant errors, "
            f"{self.matched} matched findings."
        )
        return " ".join([*lines, counts])


def _significance(error: TeacherError) -> str:
    return "significant" if error.significant else "insignificant"


QUOTED_WORDS = 8


def quote(statement: str) -> str:
    """A statement named by its first words, without the characters GREEN's format gives meaning to."""
    words = statement.translate(str.maketrans("", "", "()[]:;")).split()
    return '"' + " ".join(words[:QUOTED_WORDS]) + (" ..." if len(words) > QUOTED_WORDS else "") + '"'


def _names_term(statement: str, rules_: Rules) -> bool:
    return rules_.significance == "terms" and names_term(statement)


def unmatched_error(statement: str, index: int, side: str, rules_: Rules) -> TeacherError:
    """The error of a statement the other report has no counterpart of; `side` is "candidate" or "reference". A
    statement that is not a significant finding but compares with a prior study is (e) / (f), else (a) / (b)."""
    if rules.is_normal(statement):
        significant, reason = rules_.unmatched_normal_significant, "a normal statement"
    elif rules_.significance == "cue" or rules.names_abnormality(statement) or _names_term(statement, rules_):
        significant, reason = True, "an abnormal finding"
    elif (
        rules_.other_scripts_significant
        and not re.search(r"[A-Za-z]", statement)
        and re.search(r"[^\W\d_]", statement)
    ):
        significant, reason = True, "a finding in a script the lexicon cannot read"
    else:
        significant, reason = False, "a statement that names no abnormality"
    on_candidate = side == "candidate"
    if not significant and rules.is_comparison(statement):
        category, reason = (
            ("e", "a comparison the reference does not make")
            if on_candidate
            else ("f", "a comparison the candidate omits")
        )
    else:
        category = "a" if on_candidate else "b"
        reason += " the reference lacks" if on_candidate else " the candidate lacks"
    return TeacherError(
        category, significant, index if on_candidate else None, None if on_candidate else index, reason
    )


def pair_error(reference: str, candidate: str, r: int, c: int, rules_: Rules) -> TeacherError | None:
    """The error of a matched pair, or None when it is a matched finding."""
    ref_normal, cand_normal = rules.is_normal(reference), rules.is_normal(candidate)
    if rules_.polarity_flips and ref_normal != cand_normal:
        if cand_normal:
            return TeacherError("b", True, c, r, "the candidate negates a finding the reference reports")
        return TeacherError("a", True, c, r, "the candidate reports a finding the reference negates")
    if ref_normal and cand_normal:
        return None
    if rules_.location:
        ref_places, cand_places = rules.locations(reference), rules.locations(candidate)
        if ref_places and cand_places and ref_places != cand_places:
            return TeacherError(
                "c", True, c, r, f"location {'/'.join(sorted(cand_places))} instead of {'/'.join(sorted(ref_places))}"
            )
    if rules_.interval_change:
        ref_change, cand_change = rules.change_directions(reference), rules.change_directions(candidate)
        if ref_change and cand_change and not ref_change & cand_change:
            return TeacherError(
                "e",
                True,
                c,
                r,
                f"interval change {'/'.join(sorted(cand_change))} instead of {'/'.join(sorted(ref_change))}",
            )
    if rules_.severity:
        ref_levels, cand_levels = rules.severities(reference), rules.severities(candidate)
        if ref_levels and cand_levels and ref_levels != cand_levels:
            return TeacherError("d", True, c, r, "a different severity or size")
        if bool(ref_levels) != bool(cand_levels):
            return TeacherError("d", False, c, r, "a severity or size on one side only")
    return None


def assignment(similarity: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """(reference index, candidate index) of the one-to-one assignment with the largest total cosine, pairs below
    `threshold` left out."""
    from scipy.optimize import linear_sum_assignment

    if not similarity.size:
        return []
    rows, cols = linear_sum_assignment(-similarity)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if similarity[r, c] >= threshold]


def unmatched_errors(reference: list[str], candidate: list[str], pairs, rules_: Rules) -> list[TeacherError]:
    """The errors of the statements no pair in `pairs` holds, candidate side first."""
    matched_candidates, matched_references = {c for _, c in pairs}, {r for r, _ in pairs}
    errors = [
        unmatched_error(s, i, "candidate", rules_) for i, s in enumerate(candidate) if i not in matched_candidates
    ]
    return errors + [
        unmatched_error(s, i, "reference", rules_) for i, s in enumerate(reference) if i not in matched_references
    ]


def sorted_errors(errors: list[TeacherError]) -> list[TeacherError]:
    return sorted(errors, key=lambda e: (e.candidate is None, e.candidate or 0, e.reference or 0))


def annotate_pair(reference: list[str], candidate: list[str], similarity: np.ndarray, rules_: Rules) -> Annotation:
    """The annotation of one pair from its statements and their cosine matrix (reference x candidate)."""
    pairs = assignment(similarity, rules_.threshold)
    annotation = Annotation(reference, candidate, [])
    errors = []
    for r, c in sorted(pairs, key=lambda p: p[1]):
        error = pair_error(reference[r], candidate[c], r, c, rules_)
        if error is None:
            annotation.matches.append((r, c, float(similarity[r, c])))
        else:
            errors.append(error)
    annotation.errors = sorted_errors(errors + unmatched_errors(reference, candidate, pairs, rules_))
    return annotation


class SemanticTeacher:
    """`SemanticTeacher(encoder)(references, candidates) -> [Annotation]`. Each distinct statement is embedded once;
    with `read_as`, as that function reads it (judge=model: synonyms of a diagnosis read as it)."""

    def __init__(self, encoder, rules_: Rules | None = None, batch_size: int = 64, read_as=None):
        self.encoder, self.rules, self.batch_size, self.read_as = encoder, rules_ or Rules(), batch_size, read_as

    def embeddings(self, texts: Sequence[str], progress: bool = False) -> dict[str, np.ndarray]:
        distinct = sorted(set(texts), key=len)  # length-sorted batches pad less
        read = [self.read_as(t) for t in distinct] if self.read_as else distinct
        vectors = self.encoder.encode(read, batch_size=self.batch_size, progress=progress, desc="semantic_green")
        return dict(zip(distinct, vectors))

    def __call__(
        self, references: Sequence[str], candidates: Sequence[str], progress: bool = False
    ) -> list[Annotation]:
        return self.annotate_lists([statements(r) for r in references], [statements(c) for c in candidates], progress)

    def annotate_lists(
        self, references: Sequence[list[str]], candidates: Sequence[list[str]], progress: bool = False
    ) -> list[Annotation]:
        """The annotations of pairs given as lists of statements (or of findings) rather than as reports."""
        return [
            annotate_pair(ref, cand, similarity, self.rules)
            for ref, cand, similarity in self.similarities(references, candidates, progress)
        ]

    def similarities(
        self, references: Sequence[list[str]], candidates: Sequence[list[str]], progress: bool = False
    ) -> list[tuple[list[str], list[str], np.ndarray]]:
        """(reference statements, candidate statements, their cosine matrix) of each pair."""
        split = [(list(r), list(c)) for r, c in zip(references, candidates)]
        vectors = self.embeddings([s for ref, cand in split for s in ref + cand], progress)
        width = next(iter(vectors.values())).shape[0] if vectors else 0

        def matrix(items: list[str]) -> np.ndarray:
            return np.stack([vectors[s] for s in items]) if items else np.zeros((0, width), dtype=np.float32)

        return [(ref, cand, matrix(ref) @ matrix(cand).T) for ref, cand in split]
