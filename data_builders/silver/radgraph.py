"""Silver RadGraph-style extraction in DyGIE JSONL (RadGraph schema, Jain et al. 2021).

Entities are single words, as in RadGraph's own annotations: anatomy and location words are ANAT-DP;
abnormality, disease, normal-descriptor and severity words are OBS-DP / OBS-U / OBS-DA by their clause
status. Relations:
- modify: the later words of a multi-word term modify its first word ("angles" -> "costophrenic", as in
  the radgraph package's gold); a location word modifies the next entity; a severity word modifies the
  next observation head;
- located_at: an observation head -> the anatomy run right before it ("pleural effusion"), else for a
  descriptor the nearest anatomy earlier in its clause ("lungs are clear"), else the first anatomy after
  it in its clause ("opacity in the right base");
- suggestive_of: an observation -> the next observation after a cue ("consistent with", "may represent").

DyGIE layout: `doc_key`, `sentences` (token lists), `ner` per sentence `[start, end, label]` and
`relations` per sentence `[s1, e1, s2, e2, label]`, all indices document-level and inclusive.

These rules and the entity lexicon were developed against the radgraph package's 10 gold reports
(data/radgraph), so agreement measured on those reports (radgraph_agreement.py) is in-sample.
"""

from __future__ import annotations

import re

from radmetrics.inference.text.entity_lexicon import Atom, find_atoms
from radmetrics.inference.text.sentences import tokenize

STATUS_LABEL = {"present": "OBS-DP", "uncertain": "OBS-U", "absent": "OBS-DA"}
HEADS = ("abnormality", "disease", "normal")
CLAUSE_BREAK = {",", ";", ".", ":", "and", "but", "or", "however", "with", "without"}
SUGGESTIVE = re.compile(
    r"\b(suggest\w*|concerning for|consistent with|compatible with|represent\w*|reflect\w*|"
    r"likely|due to|secondary to|related to|from)\b"
)


def _clause_ids(tokens: list[str]) -> list[int]:
    ids, current = [], 0
    for token in tokens:
        if token.lower() in CLAUSE_BREAK:
            current += 1
        ids.append(current)
    return ids


def extract_sentence(tokens: list[str]) -> tuple[list[list], list[list]]:
    """(entities [start, end, label], relations [s1, e1, s2, e2, label]) with sentence-level indices."""
    atoms = find_atoms(tokens)
    clause = _clause_ids(tokens)
    entities, relations = [], []
    for atom in atoms:
        label = "ANAT-DP" if atom.kind in ("anatomy", "location") else STATUS_LABEL[atom.status]
        for i in range(atom.start, atom.end + 1):
            entities.append([i, i, label])
            if i > atom.start:
                relations.append([i, i, atom.start, atom.start, "modify"])

    def link(a: Atom, b: Atom, label: str) -> None:
        relations.append([a.start, a.start, b.start, b.start, label])

    for n, atom in enumerate(atoms):
        later = atoms[n + 1 :]
        if atom.kind == "location" and later:
            link(atom, later[0], "modify")
        elif atom.kind == "severity":
            head = next((b for b in later if b.kind in HEADS and clause[b.start] == clause[atom.start]), None)
            if head:
                link(atom, head, "modify")
        if atom.kind not in HEADS:
            continue
        anatomy = _location_of(atoms[:n], later, atom, clause)
        if anatomy:
            link(atom, anatomy, "located_at")
        target = next((b for b in later if b.kind in ("abnormality", "disease")), None)
        if target and SUGGESTIVE.search(" ".join(tokens[atom.end + 1 : target.start]).lower()):
            link(atom, target, "suggestive_of")
    return entities, relations


def _location_of(before: list[Atom], after: list[Atom], head: Atom, clause: list[int]) -> Atom | None:
    anatomy_before = [a for a in before if a.kind == "anatomy" and clause[a.start] == clause[head.start]]
    run_start = head.start
    for a in reversed(before):  # the contiguous modifier/anatomy run right before the head
        if a.end + 1 != run_start or a.kind not in ("anatomy", "location", "severity"):
            break
        run_start = a.start
        if a.kind == "anatomy":
            return a
    if head.kind == "normal" and anatomy_before:
        return anatomy_before[-1]
    return next((a for a in after if a.kind == "anatomy" and clause[a.start] == clause[head.start]), None)


def extract_document(doc_key: str, sentences: list[str]) -> dict:
    from radmetrics.inference.metrics.radgraph.annotation import dygie_document

    words = [tokenize(sentence) for sentence in sentences]
    return dygie_document(doc_key, ((w, *extract_sentence(w)) for w in words))
