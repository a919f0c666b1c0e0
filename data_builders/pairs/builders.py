"""Reference/candidate pairs with complete edit logs (GREEN section 3.1.1 heuristics).

Heuristics (each seeded and deterministic):
  random            (i)   a random other report of the same split
  remove_shuffle    (ii)  sentences removed and the rest shuffled
  nearest_neighbour (iii) the most similar other report of the same split (default-encoder embeddings)
  radgraph_permute  (iv)  findings edited: presence flipped, laterality/location, severity/size, a finding
                          inserted from another report or deleted, a comparison added or dropped
  recombine         (v)   reference sentences recombined with sentences of another report

Every pair carries the edits that turn its reference into its candidate, each with its GREEN error
category (a)-(f) (None for a harmless reorder) and clinical significance, plus the reference sentences
left matched. For (i), (iii) and (v) the log comes from sentence alignment (identical sentences match;
the rest are omissions or additions). Donor reports always come from the reference's own split, so with
the default split (reports grouped by normalised text) no report's text crosses splits; sentences shared by
different reports still do (see leakage.py). Pairs are unique across heuristics.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from radmetrics.inference.text.sentences import split_sentences

from ..corpus.corpora import Report
from . import edit_lexicons as fx

PAIR_SCHEMA_VERSION = 1
HEURISTICS = ("random", "remove_shuffle", "nearest_neighbour", "radgraph_permute", "recombine")


@dataclass
class Edit:
    kind: str
    sentence_index: int | None
    before: str
    after: str
    category: str | None
    significant: bool | None  # None: not known (an error an LLM was asked to inject, before annotation)


@dataclass
class PairRecord:
    id: str
    reference: str
    candidate: str
    heuristic: str
    split: str
    edits: list[Edit]
    matched_findings: list[str]
    reference_id: str
    donor_id: str | None = None
    schema_version: int = PAIR_SCHEMA_VERSION

    def to_dict(self) -> dict:
        return asdict(self)


def normalise_sentence(sentence: str) -> str:
    """Lower case, letters, digits and spaces only: how sentences are matched across a pair."""
    return re.sub(r"[^a-z0-9 ]", "", sentence.lower()).strip()


def omission_edit(index: int, sentence: str, kind: str = "omitted_sentence") -> Edit:
    """A reference sentence missing from the candidate: (f) for a change from a prior, else (b)."""
    if fx.is_comparison(sentence) and not fx.is_abnormal_finding(sentence):
        return Edit(kind, index, sentence, "", "f", bool(fx.CHANGE_WORDS.search(sentence)))
    return Edit(kind, index, sentence, "", "b", fx.is_abnormal_finding(sentence))


def addition_edit(index: int | None, sentence: str, kind: str = "added_sentence") -> Edit:
    """A candidate sentence absent from the reference: (e) for a comparison, else (a)."""
    if fx.is_comparison(sentence) and not fx.is_abnormal_finding(sentence):
        return Edit(kind, index, "", sentence, "e", False)
    return Edit(kind, index, "", sentence, "a", fx.is_abnormal_finding(sentence))


def align(ref_sents: list[str], cand_sents: list[str]) -> tuple[list[Edit], list[str]]:
    """Sentence alignment: identical (normalised) sentences match, the rest are omissions/additions."""
    cand_keys = [normalise_sentence(s) for s in cand_sents]
    ref_keys = {normalise_sentence(s) for s in ref_sents}
    edits, matched, used = [], [], set()
    for i, sent in enumerate(ref_sents):
        key = normalise_sentence(sent)
        j = next((j for j, k in enumerate(cand_keys) if k == key and j not in used), None)
        if j is None:
            edits.append(omission_edit(i, sent))
        else:
            used.add(j)
            matched.append(sent)
    for j, sent in enumerate(cand_sents):
        if j not in used and cand_keys[j] not in ref_keys:
            edits.append(addition_edit(j, sent))
    return edits, matched


@dataclass
class BuildContext:
    reports: list[Report]
    sentences: dict[str, list[str]]
    splits: dict[str, str]
    by_split: dict[str, list[Report]] = field(default_factory=dict)
    neighbours: dict[str, str] = field(default_factory=dict)

    def donor(self, ref: Report, rng: random.Random) -> Report | None:
        pool = self.by_split.get(self.splits[ref.id], [])
        for _ in range(10):
            other = rng.choice(pool)
            if other.id != ref.id and normalise_sentence(other.text) != normalise_sentence(ref.text):
                return other
        return None


def _pair_from_alignment(
    ref: Report, cand_sents: list[str], heuristic: str, ctx: BuildContext, donor_id=None
) -> PairRecord:
    edits, matched = align(ctx.sentences[ref.id], cand_sents)
    return PairRecord(
        "", ref.text, " ".join(cand_sents), heuristic, ctx.splits[ref.id], edits, matched, ref.id, donor_id
    )


def build_random(ref: Report, ctx: BuildContext, rng: random.Random) -> PairRecord | None:
    other = ctx.donor(ref, rng)
    return None if other is None else _pair_from_alignment(ref, ctx.sentences[other.id], "random", ctx, other.id)


def build_nearest_neighbour(ref: Report, ctx: BuildContext, rng: random.Random) -> PairRecord | None:
    other_id = ctx.neighbours.get(ref.id)
    return (
        None
        if other_id is None
        else _pair_from_alignment(ref, ctx.sentences[other_id], "nearest_neighbour", ctx, other_id)
    )


def build_remove_shuffle(ref: Report, ctx: BuildContext, rng: random.Random) -> PairRecord | None:
    sents = ctx.sentences[ref.id]
    if len(sents) < 2:
        return None
    n_remove = rng.randint(1, max(1, len(sents) // 2))
    removed = set(rng.sample(range(len(sents)), n_remove))
    kept = [i for i in range(len(sents)) if i not in removed]
    order = kept[:]
    rng.shuffle(order)
    edits = [omission_edit(i, sents[i], "removed_sentence") for i in sorted(removed)]
    if order != kept and len(order) > 1:
        edits.append(
            Edit(
                "reordered_sentences",
                None,
                " ".join(sents[i] for i in kept),
                " ".join(sents[i] for i in order),
                None,
                False,
            )
        )
    return PairRecord(
        "",
        ref.text,
        " ".join(sents[i] for i in order),
        "remove_shuffle",
        ctx.splits[ref.id],
        edits,
        [sents[i] for i in kept],
        ref.id,
    )


def _permutations(sents: list[str]) -> list[tuple[str, int]]:
    """Applicable edit kinds with the sentence each would touch."""
    options = []
    for i, s in enumerate(sents):
        if fx.negate(s):
            options.append(("flip_presence_to_absent", i))
        if fx.affirm(s):
            options.append(("flip_presence_to_present", i))
        if fx.is_abnormal_finding(s) and fx.change_laterality(s):
            options.append(("change_location", i))
        if fx.is_abnormal_finding(s) and fx.change_severity(s):
            options.append(("change_severity", i))
        if fx.is_abnormal_finding(s) or fx.is_normal(s):
            options.append(("delete_finding", i))
        if fx.is_comparison(s) and not fx.is_abnormal_finding(s):
            options.append(("drop_comparison", i))
    options.append(("insert_finding", len(sents)))
    if not any(fx.is_comparison(s) for s in sents):
        options.append(("add_comparison", len(sents)))
    return options


def build_radgraph_permute(ref: Report, ctx: BuildContext, rng: random.Random) -> PairRecord | None:
    sents = list(ctx.sentences[ref.id])
    options = _permutations(sents)
    rng.shuffle(options)
    chosen, touched = [], set()
    for kind, i in options:
        if i not in touched and len(chosen) < rng.randint(1, 3):
            chosen.append((kind, i))
            touched.add(i)
    candidate: list[str | None] = list(sents)
    appended: list[str] = []
    edits = []
    for kind, i in chosen:
        s = sents[i] if i < len(sents) else ""
        if kind == "flip_presence_to_absent":
            new = fx.negate(s)
            candidate[i] = new
            edits.append(Edit(kind, i, s, new, "b", True))
        elif kind == "flip_presence_to_present":
            new = fx.affirm(s)
            candidate[i] = new
            edits.append(Edit(kind, i, s, new, "a", True))
        elif kind == "change_location":
            new, _, _ = fx.change_laterality(s)
            candidate[i] = new
            edits.append(Edit(kind, i, s, new, "c", True))
        elif kind == "change_severity":
            new, _, _ = fx.change_severity(s)
            candidate[i] = new
            edits.append(Edit(kind, i, s, new, "d", True))
        elif kind == "delete_finding":
            candidate[i] = None
            edits.append(omission_edit(i, s, kind))
        elif kind == "drop_comparison":
            candidate[i] = None
            edits.append(Edit(kind, i, s, "", "f", bool(fx.CHANGE_WORDS.search(s))))
        elif kind == "insert_finding":
            donor = ctx.donor(ref, rng)
            pool = [
                x
                for x in (ctx.sentences[donor.id] if donor else [])
                if fx.is_abnormal_finding(x) and normalise_sentence(x) not in {normalise_sentence(y) for y in sents}
            ]
            if not pool:
                continue
            new = rng.choice(pool)
            appended.append(new)
            edits.append(Edit(kind, None, "", new, "a", True))
        elif kind == "add_comparison":
            new = rng.choice(fx.COMPARISON_SENTENCES)
            appended.append(new)
            edits.append(Edit(kind, None, "", new, "e", False))
    if not edits:
        return None
    touched_idx = {e.sentence_index for e in edits if e.sentence_index is not None}
    matched = [s for i, s in enumerate(sents) if i not in touched_idx]
    text = " ".join([s for s in candidate if s] + appended)
    return PairRecord("", ref.text, text, "radgraph_permute", ctx.splits[ref.id], edits, matched, ref.id)


def build_recombine(ref: Report, ctx: BuildContext, rng: random.Random) -> PairRecord | None:
    sents = ctx.sentences[ref.id]
    other = ctx.donor(ref, rng)
    if other is None or len(sents) < 2:
        return None
    keep = sorted(rng.sample(range(len(sents)), rng.randint(1, len(sents) - 1)))
    foreign = ctx.sentences[other.id]
    borrowed = rng.sample(foreign, rng.randint(1, min(2, len(foreign))))
    mixed = [sents[i] for i in keep] + borrowed
    rng.shuffle(mixed)
    return _pair_from_alignment(ref, mixed, "recombine", ctx, other.id)


BUILDERS: dict[str, Callable] = {
    "random": build_random,
    "remove_shuffle": build_remove_shuffle,
    "nearest_neighbour": build_nearest_neighbour,
    "radgraph_permute": build_radgraph_permute,
    "recombine": build_recombine,
}


def nearest_neighbours(
    reports: list[Report],
    splits: dict[str, str],
    encoder: str = "default",
    batch_size: int = 64,
    progress: bool = True,
) -> dict[str, str]:
    """For each report, the most similar other report of its split (cosine of mean-pooled embeddings)."""
    import torch

    from radmetrics.inference.models.text_encoder import TextEncoder

    vectors = TextEncoder(encoder, pooling="mean").encode(
        [r.text for r in reports], batch_size, progress, "embedding reports"
    )
    emb = torch.from_numpy(vectors)
    result = {}
    for split in set(splits.values()):
        idx = [i for i, r in enumerate(reports) if splits[r.id] == split]
        sims = emb[idx] @ emb[idx].T
        sims.fill_diagonal_(-2.0)
        texts = [normalise_sentence(reports[i].text) for i in idx]
        for row, i in enumerate(idx):
            for j in torch.argsort(sims[row], descending=True).tolist():
                if texts[j] != texts[row]:
                    result[reports[i].id] = reports[idx[j]].id
                    break
    return result


def build_pairs(
    reports: list[Report],
    splits: dict[str, str],
    heuristics=HEURISTICS,
    per_heuristic: int | None = None,
    seed: int = 0,
    sentence_method: str = "robust",
    encoder: str = "default",
    progress: bool = True,
) -> list[PairRecord]:
    """Build pairs with every heuristic; `per_heuristic` caps each (None = one attempt per reference per round)."""
    unknown = [h for h in heuristics if h not in BUILDERS]
    if unknown:
        raise ValueError(f"unknown heuristic(s) {unknown}; expected {list(BUILDERS)}")
    ctx = BuildContext(reports, {r.id: split_sentences(r.text, sentence_method) for r in reports}, splits)
    for r in reports:
        ctx.by_split.setdefault(splits[r.id], []).append(r)
    if "nearest_neighbour" in heuristics:
        ctx.neighbours = nearest_neighbours(reports, splits, encoder, progress=progress)
    seen: set[tuple[str, str]] = set()
    pairs: list[PairRecord] = []
    for h_index, heuristic in enumerate(heuristics):
        rng = random.Random(f"{seed}:{heuristic}")
        target = per_heuristic or len(reports)
        made, rounds = 0, 0
        # deterministic repeated passes over the references until the target is met (or nothing new appears)
        while made < target and rounds < 5:
            before = made
            order = list(reports)
            rng.shuffle(order)
            for ref in order:
                if made >= target:
                    break
                record = BUILDERS[heuristic](ref, ctx, rng)
                if record is None or not record.candidate.strip():
                    continue
                key = (ref.id, normalise_sentence(record.candidate))
                if key in seen or normalise_sentence(record.candidate) == normalise_sentence(record.reference):
                    continue
                seen.add(key)
                record.id = f"{heuristic}-{h_index}-{made:06d}"
                pairs.append(record)
                made += 1
            rounds += 1
            if made == before or heuristic == "nearest_neighbour":
                break
    return pairs
