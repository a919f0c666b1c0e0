"""Sentence splitting and word tokenisation for radiology reports (shared by the silver labelers in
data_builders and the component runners in inference, so both see the same sentences and words).

- `fineradscore`: the regex of FineRadScore (Huang et al. 2024, appendix A), `(?<!\\d)\\.(?!\\d|$) `,
  which splits at ". " unless a digit precedes or follows the period (the period is dropped, as re.split does).
- `robust` (default): keeps decimals ("2.5 cm") and abbreviations ("e.g.", "approx.") intact, splits numbered
  lists ("1. ... 2. ...") and missing spaces after a period ("vein.2. Mild", "effusion.Mild"), and drops
  the list numbers.
"""

from __future__ import annotations

import re

FINERADSCORE_PATTERN = re.compile(r"(?<!\d)\.(?!\d|$) ")
ABBREVIATIONS = {
    "e.g",
    "i.e",
    "approx",
    "vs",
    "dr",
    "mr",
    "mrs",
    "ms",
    "st",
    "fig",
    "cf",
    "etc",
    "no",
    "nos",
    "min",
    "max",
    "ant",
    "post",
    "lat",
    "ap",
    "pa",
    "rt",
    "lt",
    "sq",
    "cm",
    "mm",
}
_LIST_MARKER = re.compile(r"(?:(?<=^)|(?<=[.:;!?]))\s*\(?(\d{1,2})[.)]\s*(?=[A-Za-z(])")
_GLUED = re.compile(r"(?<=[a-z]{2})\.(?=[A-Z][a-z])")


_WORD = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]+(?:['-][A-Za-z]+)*|[^\sA-Za-z\d]")


def tokenize(sentence: str) -> list[str]:
    """Words: numbers (decimals kept), words with inner apostrophes/hyphens, single punctuation marks."""
    return _WORD.findall(sentence)


def split_fineradscore(text: str) -> list[str]:
    return [part.strip() for part in FINERADSCORE_PATTERN.split(text.strip()) if part.strip()]


def _ends_with_abbreviation(chunk: str) -> bool:
    word = re.split(r"\s", chunk.rstrip("."))[-1].lower() if chunk.strip() else ""
    # "No." alone is a sentence in reports ("Pneumothorax? No."), so only treat it as an abbreviation before a digit
    return word in ABBREVIATIONS - {"no"} or (len(word) == 1 and word.isalpha())


def split_robust(text: str) -> list[str]:
    text = " ".join(text.split())
    text = _GLUED.sub(". ", text)
    text = _LIST_MARKER.sub("\n", text)
    sentences: list[str] = []
    for block in text.split("\n"):
        start = 0
        for match in re.finditer(r"[.!?](?=\s+|$)|[。！？]", block):  # CJK full stops need no space after them
            end = match.end()
            chunk = block[start:end].strip()
            if not chunk:
                continue
            nxt = block[end:].lstrip()[:1]
            if _ends_with_abbreviation(chunk) and nxt and not nxt.isupper():
                continue
            sentences.append(chunk)
            start = end
        tail = block[start:].strip()
        if tail:
            sentences.append(tail)
    return [s for s in sentences if re.search(r"[^\W_]", s)]  # a letter or digit of any script ("___" is none)


# Abbreviations radiologists write, read as their words before findings are extracted and judged.
_ABBREVIATIONS = {
    r"lt": "left",
    r"rt": "right",
    r"b/l": "bilateral",
    r"ptx": "pneumothorax",
    r"ett": "endotracheal tube",
    r"ngt": "nasogastric tube",
    r"ogt": "orogastric tube",
    r"ij": "internal jugular",
    r"picc": "peripherally inserted central catheter",
    r"cxr": "chest radiograph",
}
LOBE_ABBREVIATIONS = {
    "rul": "right upper lobe",
    "rml": "right middle lobe",
    "rll": "right lower lobe",
    "lul": "left upper lobe",
    "lll": "left lower lobe",
}
_LOBE = re.compile(r"\b(" + "|".join(LOBE_ABBREVIATIONS) + r")\b", re.I)
# Words that continue a phrase after an abbreviation's period ("Rt. lower lobe"); before any other word the period
# ends the sentence ("on the rt. no ptx.").
_CONTINUATIONS = (
    r"(?:lower|upper|middle|mid|lung|lungs|lobe|base|bases|apex|side|sided|hemithorax|hemidiaphragm|pleural|chest|"
    r"internal|subclavian|basilar|perihilar|costophrenic|line|catheter|tube)"
)
_ABBREVIATION = re.compile(
    r"(?<![\w/])("
    + "|".join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
    + r")(?:\.(?=\s+"
    + _CONTINUATIONS
    + r"\b))?(?![\w/])",  # "Lt. lower lobe": the period goes with the word
    re.I,
)


# Read only with `extended` (semantic_green's judge=model): a side written as one capital letter ("R IJ line",
# "small L effusion") and the central venous catheter.
_SIDE_LETTER = re.compile(r"(?<![\w/.])([LR])(?![\w/.])(?=\s+[A-Za-z])")
_SIDES = {"L": "left", "R": "right"}
_CVC = re.compile(r"(?<![\w/])cvc(?![\w/])", re.I)
# Diagnoses written as abbreviations, read only with `extended`: the judge's frame names diagnoses as words.
_DIAGNOSIS_ABBREVIATIONS = {
    "chf": "congestive heart failure",
    "tb": "tuberculosis",
    "pna": "pneumonia",
    "ild": "interstitial lung disease",
}
_DIAGNOSIS = re.compile(r"(?<![\w/])(" + "|".join(_DIAGNOSIS_ABBREVIATIONS) + r")(?!\w)", re.I)  # "CHF/overload"
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+)$")
# A query written before a finding ("? tiny pneumothorax", "?aspiration"), which the splitter would read as a question
# mark ending a sentence.
_QUERY = re.compile(r"(?:(?<=^)|(?<=[\s(,;]))\?\s*(?=[A-Za-z])")


def _word(expansion: str, match: re.Match, extended: bool) -> str:
    """The expansion, capitalised with `extended` where the abbreviation starts a sentence (so that "Portable AP. ETT
    tip ..." stays two sentences)."""
    if extended and _SENTENCE_START.search(match.string[: match.start()]):
        return expansion[0].upper() + expansion[1:]
    return expansion


def expand_abbreviations(text: str, lobes: bool = False, extended: bool = False) -> str:
    """ "Lt pleural effusion" -> "left pleural effusion", "b/l" -> "bilateral", "PTX", "ETT", "NGT", ... as words;
    with `lobes`, the lobes too ("RUL" -> "right upper lobe"); with `extended`, "R"/"L" before a word as sides, "CVC",
    CHF, TB, PNA and ILD, a query before a finding ("?aspiration") as "query", and an expansion that starts a
    sentence capitalised.
    semantic_green's judge=model reads with both; judge=rules keeps the reading its values were measured with."""
    if extended:
        text = _QUERY.sub("query ", text)
        text = _SIDE_LETTER.sub(lambda m: _word(_SIDES[m.group(1)], m, True), text)
        text = _CVC.sub(lambda m: _word("central venous catheter", m, True), text)
        text = _DIAGNOSIS.sub(lambda m: _word(_DIAGNOSIS_ABBREVIATIONS[m.group(1).lower()], m, True), text)
    text = _ABBREVIATION.sub(lambda m: _word(_ABBREVIATIONS[m.group(1).lower()], m, extended), text)
    if not lobes:
        return text
    return _LOBE.sub(lambda m: _word(LOBE_ABBREVIATIONS[m.group(1).lower()], m, extended), text)


def split_sentences(text: str, method: str = "robust") -> list[str]:
    if method == "robust":
        return split_robust(text)
    if method == "fineradscore":
        return split_fineradscore(text)
    raise ValueError(f"unknown sentence splitter {method!r}; expected 'robust' or 'fineradscore'")


def report_sentences(reports) -> list[list[list[str]]]:
    """Reports -> sentences -> words (empty sentences dropped), as the silver labelers see them."""
    return [[words for words in (tokenize(s) for s in split_sentences(report)) if words] for report in reports]


def sentences_with_owner(reports) -> tuple[list[list[str]], list[int]]:
    """Every report's word-tokenised sentences in one list, and the index of the report each came from."""
    flat, owner = [], []
    for n, sentences in enumerate(report_sentences(reports)):
        flat.extend(sentences)
        owner.extend([n] * len(sentences))
    return flat, owner


def statements(report: str) -> list[str]:
    """A report's sentences without their full stops, empty ones dropped: what the semantic GREEN teacher matches and
    what GREEN's numbered prompt numbers (R1, R2, ... and C1, C2, ...), so that both count the same statements."""
    return [s for s in (sentence.strip().rstrip(".。").strip() for sentence in split_sentences(report)) if s]
