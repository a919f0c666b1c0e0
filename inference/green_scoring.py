"""GREEN scoring (Ostmeier et al. 2024, sections 3.2-3.3): generate GREEN analyses, parse them, score, summarise.

Generation with an exported GREEN model: the appendix A.1 prompt (each report cut to its first 300 words, as
the reference does), the model's chat template, greedy decoding in batches sorted by prompt length with left
padding, and a new-token budget (`max_new_tokens`) independent of the prompt length: the reference's shared
2048-token prompt+output limit silently truncates answers to long reports. Across several processes
(`accelerate launch`), the pairs are sharded and the results gathered back in input order. The same prompt and
parser also run through the LLM engine, so a vLLM/TGI server hosting a GREEN checkpoint can generate.

A response the parser cannot read is reported (score None, counted), not scored 0.
"""

from __future__ import annotations

import numpy as np

from .green_format import CATEGORY_LETTERS, GreenParse, green_prompt

MAX_REPORT_WORDS = 300


def truncate_words(text: str, max_words: int = MAX_REPORT_WORDS) -> str:
    words = text.split()
    return " ".join(words[:max_words])


def green_messages(reference: str, candidate: str, max_words: int = MAX_REPORT_WORDS) -> list[dict]:
    return [{"role": "user", "content": green_prompt(truncate_words(reference, max_words), truncate_words(candidate, max_words))}]


def generate_green_responses(model, tokenizer, references, candidates, batch_size: int = 8, max_new_tokens: int = 512,
                             progress: bool = True, shard: bool = True) -> list[str]:
    """GREEN analyses of every pair from a causal LM. Under `accelerate launch` (and `shard`), each process
    generates its share of the pairs and all processes receive every result, in input order."""
    from accelerate import PartialState

    from .llm_local import generate_sorted, render_prompt

    state = PartialState() if shard else None
    indices = list(range(len(references)))
    if state is not None and state.num_processes > 1:
        with state.split_between_processes(indices) as mine:
            indices = list(mine)
    prompts = [render_prompt(tokenizer, green_messages(references[i], candidates[i])) for i in indices]
    outputs = generate_sorted(model, tokenizer, prompts, {"max_tokens": max_new_tokens, "temperature": 0.0}, batch_size,
                              progress=progress and (state is None or state.is_main_process))
    results = [(i, text) for i, (text, _, _) in zip(indices, outputs)]
    if state is not None and state.num_processes > 1:
        from accelerate.utils import gather_object

        results = gather_object(results)
    return [text for _, text in sorted(results)]


def load_green_model(path: str):
    """An exported GREEN checkpoint (manifest checked) as (model, tokenizer) for generation."""
    from .checkpoint import load_manifest
    from .models import load_causal_lm

    directory, _ = load_manifest(path, "green")
    return load_causal_lm(directory, min_vocab=50)


def error_lines(response: str, section_title: str = "Clinically Significant Errors") -> dict[str, list[str]]:
    """The error descriptions listed per category in one section: "(a) ...: 2. first; second." -> {"a": [...]}."""
    import re

    found = {c: [] for c in CATEGORY_LETTERS}
    match = re.search(rf"\[{re.escape(section_title)}\]:\s*(.*?)(?:\n\s*\n|\Z)", response or "", re.DOTALL)
    if not match:
        return found
    for letter, rest in re.findall(r"^\(([a-f])\) [^:]*: \d+\.?(.*)$", match.group(1), re.MULTILINE):
        found[letter] = [e.strip(" .") for e in rest.split(";") if e.strip(" .")]
    return found


def _best_k_labels(embeddings: np.ndarray, max_k: int = 8):
    """KMeans labels with k chosen by the silhouette score (one cluster when there are too few points)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    n = len(embeddings)
    if n < 3:
        return np.zeros(n, dtype=int)
    best, best_score = np.zeros(n, dtype=int), -1.0
    for k in range(2, min(max_k, n - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(embeddings)
        if len(set(labels)) < 2:
            continue
        score = silhouette_score(embeddings, labels)
        if score > best_score:
            best, best_score = labels, score
    return best


def green_summary(responses: list[str], parses: list[GreenParse], encoder="default", max_k: int = 8) -> dict:
    """The clustered GREEN summary (section 3.3): per category, the share of reports without such a significant
    error ("accuracy"), and the significant error sentences clustered (sentence-transformer embeddings, k by
    silhouette), each cluster named by the sentence nearest its centre, largest cluster first."""
    from .text_encoder import TextEncoder

    scored = [(r, p) for r, p in zip(responses, parses) if p.parsed]
    summary = {}
    for position, letter in enumerate(CATEGORY_LETTERS):
        errors = [e for r, _ in scored for e in error_lines(r)[letter]]
        entry = {"accuracy": float(np.mean([p.significant[position] == 0 for _, p in scored])) if scored else None,
                 "errors": len(errors), "clusters": []}
        if errors:
            embeddings = np.asarray(TextEncoder(encoder).encode(errors))
            labels = _best_k_labels(embeddings, max_k)
            for label in sorted(set(labels), key=lambda c: -int(np.sum(labels == c))):
                members = np.flatnonzero(labels == label)
                centre = embeddings[members].mean(axis=0)
                nearest = members[int(np.argmin(np.linalg.norm(embeddings[members] - centre, axis=1)))]
                entry["clusters"].append({"representative": errors[nearest], "size": int(len(members))})
        summary[letter] = entry
    return summary
