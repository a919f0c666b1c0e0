"""Every radmetrics metric as an offline `evaluate` module: loads from the folder radmetrics writes, carries features,
a description and a citation, computes the Scorer's values, and works inside a Trainer's compute_metrics."""

import pytest

from radmetrics.inference.scoring.evaluate_modules import module_path, write_evaluate_modules
from radmetrics.inference.scoring.registry import REGISTRY
from radmetrics.inference.scoring.scorer import Scorer

evaluate = pytest.importorskip("evaluate")

REFS = ["No acute cardiopulmonary process.", "Mild cardiomegaly.", "Small left pleural effusion.", "Lungs are clear."]
HYPS = ["No acute cardiopulmonary process.", "The heart is mildly enlarged.", "", "Normal chest."]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_every_metric_has_a_module_with_info(tmp_path):
    folders = write_evaluate_modules(tmp_path / "spaces")
    assert sorted(f.name for f in folders) == sorted(REGISTRY)
    for name in REGISTRY:
        module = evaluate.load(str(tmp_path / "spaces" / name))
        assert set(module.features) == {"predictions", "references"} and module.citation.startswith("@")
        assert all(key in module.description for key in REGISTRY[name].keys)
        card = (tmp_path / "spaces" / name / "README.md").read_text()
        assert card.startswith("---\ntitle: radmetrics") and f'evaluate.load(module_path("{name}")' in card


def test_the_card_example_runs():
    """The card's code, run as written: it loads radmetrics' module by path (a bare evaluate.load("bertscore") would
    fetch the Hub's own BERTScore)."""
    from radmetrics.inference.scoring.evaluate_modules import metric_card

    code = metric_card("bertscore").split("```python\n")[1].split("```")[0]
    namespace = {}
    exec(code.replace("metric.compute(", "values = metric.compute("), namespace)
    assert type(namespace["metric"]).__name__ == "Radmetrics_bertscore" and set(namespace["values"]) == {"bertscore"}


@pytest.mark.parametrize("name", ["bleu2", "bleu4", "rougeL", "bertscore"])
def test_module_computes_the_scorer_values(name):
    module = evaluate.load(module_path(name))
    values = module.compute(predictions=HYPS, references=REFS)
    expected = Scorer([name], n_bootstrap=0)(REFS, HYPS).summary
    assert values == {key: pytest.approx(expected[key]["value"], abs=1e-9) for key in REGISTRY[name].keys}


def test_options_components_and_intervals_reach_the_scorer():
    module = evaluate.load(module_path("bertscore"), options={"rescale_with_baseline": False})
    raw = module.compute(predictions=HYPS, references=REFS, bootstrap=50)
    assert raw["bertscore"] == pytest.approx(
        Scorer(["bertscore"], metric_options={"bertscore": {"rescale_with_baseline": False}}, n_bootstrap=0)(
            REFS, HYPS
        ).summary["bertscore"]["value"]
    )
    assert raw["bertscore_ci95"][0] <= raw["bertscore"] <= raw["bertscore_ci95"][1]
    with pytest.raises(Exception, match="missing component checkpoints: radgraph needs radgraph"):
        evaluate.load(module_path("radgraph")).compute(predictions=HYPS, references=REFS)


def test_module_inside_a_trainer_compute_metrics(tmp_path, iu_reports):
    """A tiny causal LM evaluated by a Trainer whose compute_metrics decodes its greedy next-token guesses and scores
    them with the rougeL module."""
    import numpy as np
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    from radmetrics.training.tiny import tiny_llama_config, train_bpe_tokenizer

    texts = [r.text for r in iu_reports[:60]]
    tokenizer = train_bpe_tokenizer(texts, tmp_path / "tokenizer", vocab_size=400)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(
        tiny_llama_config(len(tokenizer), tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    )
    rows = [tokenizer(text)["input_ids"][:32] for text in texts[:8]]
    rows = [row + [tokenizer.pad_token_id] * (32 - len(row)) for row in rows]
    data = Dataset.from_dict({"input_ids": rows, "labels": rows})
    rouge = evaluate.load(module_path("rougeL"))
    seen = {}

    def compute_metrics(prediction):
        guesses = np.argmax(prediction.predictions, axis=-1)
        labels = np.where(prediction.label_ids == -100, tokenizer.pad_token_id, prediction.label_ids)
        predictions = tokenizer.batch_decode(guesses, skip_special_tokens=True)
        references = tokenizer.batch_decode(labels, skip_special_tokens=True)
        seen.update(predictions=predictions, references=references)
        return rouge.compute(predictions=predictions, references=references)

    trainer = Trainer(
        model=model,
        args=TrainingArguments(str(tmp_path / "run"), per_device_eval_batch_size=4, report_to="none", use_cpu=True),
        eval_dataset=data,
        compute_metrics=compute_metrics,
    )
    metrics = trainer.evaluate()
    expected = Scorer(["rougeL"], n_bootstrap=0)(seen["references"], seen["predictions"]).summary["rougeL"]["value"]
    assert metrics["eval_rougeL"] == pytest.approx(expected)
