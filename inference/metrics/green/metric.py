"""GREEN (Ostmeier et al. 2024; Stanford-AIMI/GREEN): score = matched / (matched + significant errors (a)-(f)),
0 when nothing matched (section 3.2); see generation.py and summary.py beside it.

Generation: an exported `green` component (local causal LM, batched) or, with an endpoint, the LLM engine
(a vLLM/TGI server serving a GREEN checkpoint). Keys: `green`, and the per-report counts of significant
errors, insignificant errors and matched findings. A response that does not parse is not scored (None) and
counted; `meta["green"]` holds the parse rate and the clustered GREEN summary.
Options: `batch_size` (8), `max_new_tokens` (512), `summary` (True), `encoder` (summary embeddings; bundled MiniLM).
"""

from __future__ import annotations

from ..base import Metric, MetricOutput
from .format import parse_green_response

NAN = float("nan")


class Green(Metric):
    name = "green"
    keys = ("green", "green_significant_errors", "green_insignificant_errors", "green_matched_findings")
    higher_is_better = {"green": True, "green_significant_errors": False, "green_insignificant_errors": False,
                        "green_matched_findings": True}
    reference = "GREEN (Ostmeier et al. 2024, section 3.2 score, 3.3 summary; Stanford-AIMI/GREEN parser)"

    def _responses(self, references, candidates) -> tuple[list[str | None], list[str | None], dict]:
        """(responses, errors, meta): from the local component, else through the LLM engine."""
        from .generation import generate_green_responses, green_messages, load_green_model

        if "green" in self.components:
            model, tokenizer = load_green_model(self.components["green"])
            texts = generate_green_responses(model, tokenizer, references, candidates, self.options.get("batch_size", 8),
                                             self.options.get("max_new_tokens", 512), self.options.get("progress", True))
            return texts, [None] * len(texts), {}
        from ...llm.engine import LLMTask

        engine = self.llm_engine()
        results = engine.run([LLMTask(f"green-{i}", green_messages(r, c)) for i, (r, c) in enumerate(zip(references, candidates))])
        return [r.text if r.ok else None for r in results], [r.error for r in results], {"llm": engine.summary()}

    def compute(self, references, candidates):
        from .summary import green_summary

        responses, errors, meta = self._responses(references, candidates)
        values = {key: [] for key in self.keys}
        parses, details = [], []
        for text, error in zip(responses, errors):
            parse = parse_green_response(text) if text is not None else None
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
