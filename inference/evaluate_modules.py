"""Every radmetrics metric as a Hugging Face `evaluate` module, offline.

    import evaluate
    from radmetrics.inference.evaluate_modules import module_path

    rouge = evaluate.load(module_path("rougeL"))
    rouge.compute(predictions=generated, references=references)          # {"rougeL": ...}, the Scorer's value
    radgraph = evaluate.load(module_path("radgraph"), components={"radgraph": "exports/radgraph"})
    green = evaluate.load(module_path("green"), components={"green": "exports/green"}, options={"max_new_tokens": 256})

`module_path(name)` writes the module once under RADMETRICS_CACHE (default ~/.cache/radmetrics) and returns its
folder; `write_evaluate_modules(DIR)` writes all of them, each in the layout of a Hub Space (`NAME/NAME.py`, a
`README.md` metric card, `requirements.txt`), ready to push. `evaluate.load` of a local folder works without the Hub.

What the module computes is `Scorer([name], components, {name: options})(references, predictions)`: the same values,
summary by summary (`bootstrap` > 0 adds `<key>_ci95`). Components, options and an LLM endpoint are given to `load`
(kept for every `compute`, models loaded once per module) or to `compute` (that call only). Features: predictions and
references are strings; an empty prediction is scored, as everywhere in radmetrics.
"""

from __future__ import annotations

import os
from pathlib import Path

from .registry import REGISTRY

CITATIONS = {
    "bleu": """@inproceedings{papineni2002bleu, title={BLEU: a Method for Automatic Evaluation of Machine Translation},
  author={Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing}, booktitle={ACL}, year={2002}}""",
    "rouge": """@inproceedings{lin2004rouge, title={ROUGE: A Package for Automatic Evaluation of Summaries}, author={Lin, Chin-Yew},
  booktitle={Text Summarization Branches Out}, year={2004}}""",
    "bertscore": """@inproceedings{zhang2020bertscore, title={BERTScore: Evaluating Text Generation with BERT},
  author={Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav}, booktitle={ICLR}, year={2020}}""",
    "chexbert": """@inproceedings{smit2020chexbert, title={CheXbert: Combining Automatic Labelers and Expert Annotations for Accurate
  Radiology Report Labeling Using BERT}, author={Smit, Akshay and Jain, Saahil and Rajpurkar, Pranav and Pareek, Anuj and Ng, Andrew Y.
  and Lungren, Matthew P.}, booktitle={EMNLP}, year={2020}}""",
    "radgraph": """@inproceedings{jain2021radgraph, title={RadGraph: Extracting Clinical Entities and Relations from Radiology Reports},
  author={Jain, Saahil and others}, booktitle={NeurIPS Datasets and Benchmarks}, year={2021}}""",
    "radcliq": """@article{yu2023evaluating, title={Evaluating progress in automatic chest X-ray radiology report generation},
  author={Yu, Feiyang and others}, journal={Patterns}, volume={4}, number={9}, year={2023}}""",
    "ratescore": """@inproceedings{zhao2024ratescore, title={RaTEScore: A Metric for Radiology Report Generation},
  author={Zhao, Weike and Wu, Chaoyi and Zhang, Xiaoman and Zhang, Ya and Wang, Yanfeng and Xie, Weidi}, booktitle={EMNLP}, year={2024}}""",
    "green": """@inproceedings{ostmeier2024green, title={GREEN: Generative Radiology Report Evaluation and Error Notation},
  author={Ostmeier, Sophie and others}, booktitle={Findings of EMNLP}, year={2024}}""",
    "fineradscore": """@inproceedings{huang2024fineradscore, title={FineRadScore: A Radiology Report Line-by-Line Evaluation Technique
  Generating Corrections with Severity Scores}, author={Huang, Alyssa and Banerjee, Oishi and Wu, Kay and Pontes Reis, Eduardo and
  Rajpurkar, Pranav}, booktitle={Machine Learning for Healthcare}, year={2024}}""",
    "radfact": """@article{bannur2024maira2, title={MAIRA-2: Grounded Radiology Report Generation}, author={Bannur, Shruthi and others},
  journal={arXiv:2406.04449}, year={2024}}""",
}
CITATION_OF_METRIC = {"bleu2": "bleu", "bleu4": "bleu", "rougeL": "rouge"}

SCRIPT = '''"""radmetrics `{name}` as an `evaluate` module (written by radmetrics.inference.evaluate_modules)."""

from radmetrics.inference.evaluate_modules import evaluate_module_class

RadmetricsMetric = evaluate_module_class("{name}")
'''


def _description(name: str) -> str:
    spec = REGISTRY[name]
    needs = f" Needs the component(s) {', '.join(spec.requires_components)} (`components={{kind: path}}`)." if spec.requires_components else ""
    llm = " Judged by an LLM: pass `endpoint` (an endpoint YAML, see configs/llm/)." if spec.judged_by_llm else ""
    return (f"radmetrics `{name}`: score keys {', '.join(spec.keys)}, the values `radmetrics score --metrics {name}` gives "
            f"(each key's reference implementation is named in the radmetrics README).{needs}{llm}")


def evaluate_module_class(name: str):
    """The `evaluate.Metric` subclass that computes radmetrics metric `name` through the Scorer."""
    import datasets
    import evaluate

    if name not in REGISTRY:
        raise ValueError(f"no radmetrics metric {name!r}; metrics: {', '.join(REGISTRY)}")
    spec = REGISTRY[name]

    class RadmetricsMetric(evaluate.Metric):
        def __init__(self, *args, components: dict | None = None, options: dict | None = None, endpoint=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.components, self.options, self.endpoint = dict(components or {}), dict(options or {}), endpoint
            self._scorers: dict = {}

        def _info(self):
            return evaluate.MetricInfo(
                description=_description(name),
                citation=CITATIONS[CITATION_OF_METRIC.get(name, name)],
                inputs_description="predictions: generated reports (str); references: reference reports (str). Optional compute "
                                   "arguments: components, options, endpoint, bootstrap (resamples for a 95% interval, 0 = none).",
                features=datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
                reference_urls=["https://github.com/radmetrics/radmetrics"],
            )

        def _compute(self, predictions, references, components: dict | None = None, options: dict | None = None, endpoint=None,
                     bootstrap: int = 0):
            from .scorer import Scorer

            components = {**self.components, **(components or {})}
            options = {**self.options, **(options or {})}
            endpoint = endpoint if endpoint is not None else self.endpoint
            key = (tuple(sorted(components.items())), repr(sorted(options.items())), repr(endpoint), bootstrap)
            if key not in self._scorers:  # one Scorer per setting: its metric instances keep their models loaded
                self._scorers[key] = Scorer([name], components, {name: options}, n_bootstrap=bootstrap, endpoint=endpoint)
            result = self._scorers[key](list(references), list(predictions))
            values = {k: result.summary[k]["value"] for k in spec.keys}
            if bootstrap:
                values.update({f"{k}_ci95": result.summary[k]["ci95"] for k in spec.keys})
            return values

    RadmetricsMetric.__name__ = RadmetricsMetric.__qualname__ = f"Radmetrics_{name}"
    return RadmetricsMetric


def metric_card(name: str) -> str:
    spec = REGISTRY[name]
    needed = [kind.split("|")[0] for kind in spec.requires_components]
    load_arguments = ", components={" + ", ".join(f'"{k}": "exports/{k}"' for k in needed) + "}" if needed else ""
    if spec.judged_by_llm:
        load_arguments += ', endpoint="configs/llm/openai_gpt4o.yaml"'
    return f"""---
title: radmetrics {name}
tags:
- evaluate
- metric
- radiology
description: "{_description(name).replace('"', "'")}"
---

# radmetrics `{name}`

{_description(name)}

```python
import evaluate
from radmetrics.inference.evaluate_modules import module_path

# by path: this folder, module_path (the copy radmetrics writes), or the Hub Space it is pushed to as "<user>/<space>";
# a bare evaluate.load("{name}") would load the Hub's own metric of that name, if there is one
metric = evaluate.load(module_path("{name}"){load_arguments})
metric.compute(predictions=["No acute findings."], references=["No acute cardiopulmonary process."])
```

Returns {', '.join(f'`{k}`' for k in spec.keys)} (with `bootstrap=N`, each key's 95% interval as `<key>_ci95`).

## Citation

```bibtex
{CITATIONS[CITATION_OF_METRIC.get(name, name)]}
```
"""


def write_evaluate_module(name: str, out_dir: str | os.PathLike) -> Path:
    """`out_dir/name/` holding `name.py`, a README metric card and requirements.txt (a Hub Space's layout)."""
    if name not in REGISTRY:
        raise ValueError(f"no radmetrics metric {name!r}; metrics: {', '.join(REGISTRY)}")
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(SCRIPT.format(name=name), encoding="utf-8")
    (folder / "README.md").write_text(metric_card(name), encoding="utf-8")
    (folder / "requirements.txt").write_text("radmetrics[train]\n", encoding="utf-8")
    return folder


def write_evaluate_modules(out_dir: str | os.PathLike) -> list[Path]:
    return [write_evaluate_module(name, out_dir) for name in REGISTRY]


def module_path(name: str) -> str:
    """The folder of metric `name`'s evaluate module under the radmetrics cache, written when missing or outdated."""
    from .loading.released import radmetrics_cache

    folder = radmetrics_cache() / "evaluate" / name
    if not (folder / f"{name}.py").is_file() or (folder / f"{name}.py").read_text(encoding="utf-8") != SCRIPT.format(name=name):
        write_evaluate_module(name, folder.parent)
    return str(folder)
