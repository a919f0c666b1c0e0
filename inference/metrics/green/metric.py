"""GREEN (Ostmeier et al. 2024; Stanford-AIMI/GREEN): score = matched / (matched + significant errors (a)-(f)),
0 when nothing matched (section 3.2); see generation.py and summary.py beside it.

Generation: a released GREEN model (StanfordAIMI/GREEN-RadLlama2-7b and the others: prompt, chat template,
special tokens, batching and decoding as radeval 2.2.1 does, see `released.py`), radmetrics' own exported `green`
component (the prompt it was trained with, GREEN's or `short`, its chat template, batches sorted by length,
`max_new_tokens` separate from the prompt), or, with an
endpoint, the LLM engine (a vLLM/TGI server serving a GREEN checkpoint). Keys: `green`, and the per-report counts of
significant errors, insignificant errors and matched findings. A response that does not parse is not scored (None)
and counted; `meta["green"]` holds the parse rate and the clustered GREEN summary.
Options: `parser` ("strict" default, or "reference": RadEval's, where a response without the sections scores 0),
`prompt` ("green", appendix A.1, or "short": what a server hosting a `prompt: short` export must be sent; an export's
own prompt is read from its manifest, and a different `prompt` is refused, as is any but "green" for a released model),
`trust_remote_code` (released models whose tokenizer is repository code), `batch_size` (8), `max_new_tokens` (512,
radmetrics' exports), `summary` (True), `encoder` (summary embeddings; bundled MiniLM).
"""

from __future__ import annotations

from ..base import Metric, MetricOutput
from .format import parse_green_response

NAN = float("nan")


def released_source(path: str) -> tuple[str, str] | None:
    """(directory, name) of a released GREEN model or a converted one (its manifest names the release); None for
    radmetrics' own exports. Reads no weights, so a wrong option is refused before the model loads."""
    from ...loading.checkpoint import load_manifest
    from ...loading.released import ARTEFACTS, fetch, identify

    local = fetch(path)
    if identify("green", local) == "export":
        directory, manifest = load_manifest(local, "green")
        return (str(directory), manifest["released"]["source"]) if "released" in manifest else None
    return str(local), ARTEFACTS[path].repo_id if path in ARTEFACTS else str(path)


def released_green(path: str, trust_remote_code: bool, batch_size: int):
    """A `ReleasedGreen` for a released model or a converted one; None for radmetrics' own exports."""
    from .released import ReleasedGreen

    source = released_source(path)
    return None if source is None else ReleasedGreen(*source, trust_remote_code, batch_size)


class Green(Metric):
    name = "green"
    option_names = ("parser", "prompt", "trust_remote_code", "batch_size", "max_new_tokens", "summary", "encoder")
    keys = ("green", "green_significant_errors", "green_insignificant_errors", "green_matched_findings")
    higher_is_better = {"green": True, "green_significant_errors": False, "green_insignificant_errors": False,
                        "green_matched_findings": True}
    reference = "GREEN (Ostmeier et al. 2024, section 3.2 score, 3.3 summary; Stanford-AIMI/GREEN parser)"

    def _responses(self, references, candidates) -> tuple[list[str | None], list[str | None], dict]:
        """(responses, errors, meta): from the local component, else through the LLM engine."""
        from ...loading.checkpoint import load_manifest
        from .generation import generate_green_responses, green_messages, load_green_model, trained_prompt
        from .released import ReleasedGreen

        if "green" in self.components:
            path = self.components["green"]
            trust, batch_size = self.options.get("trust_remote_code", False), self.options.get("batch_size", 8)
            source = self.loaded("source", lambda: released_source(path), path)
            if source is not None:
                if self.options.get("prompt", "green") != "green":
                    raise ValueError(f"green option prompt={self.options['prompt']!r}: {path} is a released "
                                     "GREEN model, which reads GREEN's prompt only")
                released = self.loaded("released", lambda: ReleasedGreen(*source, trust, batch_size), path, trust, batch_size)
                texts, errors = released.responses(references, candidates, self.options.get("progress", True))
                return texts, errors, {}
            prompt = self.loaded("prompt", lambda: trained_prompt(load_manifest(path, "green")[1]), path)  # read once, before any weights
            if self.options.get("prompt", prompt) != prompt:
                raise ValueError(f"green option prompt={self.options['prompt']!r}: the export {path} was "
                                 f"trained with the {prompt!r} prompt, which scoring uses")
            model, tokenizer, _ = self.loaded("model", lambda: load_green_model(path), path)
            texts = generate_green_responses(model, tokenizer, references, candidates, self.options.get("batch_size", 8),
                                             self.options.get("max_new_tokens", 512), self.options.get("progress", True),
                                             prompt=prompt)
            return texts, [None] * len(texts), {}
        from ...llm.engine import LLMTask

        engine = self.llm_engine()
        prompt = self.options.get("prompt", "green")
        results = engine.run([LLMTask(f"green-{i}", green_messages(r, c, prompt=prompt)) for i, (r, c) in enumerate(zip(references, candidates))])
        return [r.text if r.ok else None for r in results], [r.error for r in results], {"llm": engine.summary()}

    def compute(self, references, candidates):
        from .summary import green_summary

        parser = self.options.get("parser", "strict")
        if parser not in ("strict", "reference"):
            raise ValueError(f"green option parser={parser!r}: expected 'strict' or 'reference'")
        responses, errors, meta = self._responses(references, candidates)
        values = {key: [] for key in self.keys}
        parses, details = [], []
        for text, error in zip(responses, errors):
            parse = parse_green_response(text, strict=parser == "strict") if text is not None else None
            parses.append(parse)
            if parse is None or not parse.parsed:
                for key in self.keys:
                    values[key].append(NAN)
                details.append({"response": text, "error": error or "unparsable: " + "; ".join(parse.problems)})
                continue
            values["green"].append(parse.score)
            values["green_significant_errors"].append(float(parse.significant_total))
            values["green_insignificant_errors"].append(float(sum(parse.insignificant)))
            values["green_matched_findings"].append(float(parse.matched))
            details.append({"response": text, "significant": list(parse.significant), "insignificant": list(parse.insignificant),
                            "matched": parse.matched})
        kept = [(t, p) for t, p in zip(responses, parses) if p is not None and p.parsed]
        meta["green"] = {"responses": len(parses), "parsed": len(kept), "parse_rate": len(kept) / len(parses) if parses else None}
        if self.options.get("summary", True):
            meta["green"]["summary"] = green_summary([t for t, _ in kept], [p for _, p in kept], self.options.get("encoder", "default"))
        return MetricOutput(values, details=details, meta=meta)
