"""Silver RaTE-NER labels: the 5 RaTEScore entity types (seed 001 section 2.1) in span and IOB form.

Composition of lexicon atoms (entity_lexicon): a contiguous run of modifiers and anatomy ending in an
abnormality or disease head is one entity of the head's type ("small left pleural effusion" ->
ABNORMALITY), NON-ABNORMALITY / NON-DISEASE when the head is negated ("no pneumonia" -> NON-DISEASE);
a run ending in anatomy is ANATOMY ("left lower lobe"); a normal descriptor ("clear", "in situ") is
NON-ABNORMALITY, as in the paper's appendix example ("in situ", Non-Abnormality). Uncertain heads keep
their positive type: RaTE-NER has no uncertainty class.

Spans are `[start, end, type]` over word tokens with an inclusive end (PURE's convention).
"""

from __future__ import annotations

from radmetrics.inference.loading.components import RATE_ENTITY_TYPES
from radmetrics.inference.text.entity_lexicon import Atom, find_atoms
from radmetrics.inference.text.sentences import tokenize

HEAD_TYPES = {"abnormality": ("ABNORMALITY", "NON-ABNORMALITY"), "disease": ("DISEASE", "NON-DISEASE")}


def _anatomy_span(run: list[Atom]) -> list[int] | None:
    """The run minus leading severity and trailing location modifiers, if it still ends in anatomy."""
    while run and run[0].kind == "severity":
        run = run[1:]
    last = max((n for n, a in enumerate(run) if a.kind == "anatomy"), default=None)
    if last is None:
        return None
    return [run[0].start, run[last].end]


def entity_spans(tokens: list[str]) -> list[list]:
    spans: list[list] = []
    run: list[Atom] = []

    def flush() -> None:
        span = _anatomy_span(run)
        if span:
            spans.append([*span, "ANATOMY"])
        run.clear()

    for atom in find_atoms(tokens):
        if run and atom.start != run[-1].end + 1:
            flush()
        if atom.kind in HEAD_TYPES:
            positive, negative = HEAD_TYPES[atom.kind]
            start = run[0].start if run else atom.start
            spans.append([start, atom.end, negative if atom.status == "absent" else positive])
            run.clear()
        elif atom.kind == "normal":
            flush()
            spans.append([atom.start, atom.end, "NON-ABNORMALITY"])
        else:
            run.append(atom)
    flush()
    return spans


def spans_to_iob(n_tokens: int, spans: list[list]) -> list[str]:
    tags = ["O"] * n_tokens
    for start, end, kind in spans:
        if kind not in RATE_ENTITY_TYPES:
            raise ValueError(f"unknown RaTE-NER entity type {kind!r}")
        tags[start] = f"B-{kind}"
        for i in range(start + 1, end + 1):
            tags[i] = f"I-{kind}"
    return tags


def tag_sentence(sentence: str) -> dict:
    tokens = tokenize(sentence)
    spans = entity_spans(tokens)
    return {"tokens": tokens, "ner_tags": spans_to_iob(len(tokens), spans), "spans": spans}
