"""Tiny encoder recipes train on CPU from the bundled corpus, resume, export and score."""

import json

import pytest

from radmetrics.training.common.run_dir import complete_checkpoints, read_eval_results

COMMON = (
    "--model_name_or_path tiny-bert --max_eval_samples 200 --per_device_train_batch_size 32 "
    "--learning_rate 0.003 --report_to none --save_strategy steps --save_steps 20 --eval_strategy no "
    "--logging_steps 1000 --seed 0"
).split()


def recipe_args(silver_dir, run, options: str) -> list[str]:
    """COMMON, the silver labels, the run folder and OPTIONS ("--max_steps 60 ...")."""
    return [*COMMON, "--silver_dir", str(silver_dir), "--output_dir", str(run), *options.split()]


@pytest.fixture(scope="module")
def silver_dir(tmp_path_factory, iu_reports):
    from radmetrics.data_builders.corpus.corpus_io import assign_splits
    from radmetrics.data_builders.silver.dataset import write_silver

    out = tmp_path_factory.mktemp("silver")
    write_silver(iu_reports, assign_splits(iu_reports), out, labelers=["chexpert", "rate_ner"], progress=False)
    return out


def test_rate_ner_iob_trains_resumes_and_beats_baseline(silver_dir, tmp_path, capsys):
    from radmetrics.training.rate_ner import iob

    args = recipe_args(silver_dir, tmp_path / "run", "--max_train_samples 3000 --max_seq_length 48")
    iob.main([*args, "--max_steps", "20"])  # an interrupted run: stops after its first checkpoint
    assert [p.name for p in complete_checkpoints(tmp_path / "run")] == ["checkpoint-20"]
    import shutil

    shutil.rmtree(tmp_path / "run" / "final")  # as if the run had been killed before finishing
    run_dir = iob.main([*args, "--max_steps", "90", "--label_all_subwords", "true"])
    state = json.loads((tmp_path / "run" / "checkpoint-90" / "trainer_state.json").read_text())
    assert state["global_step"] == 90 and "resuming from" in capsys.readouterr().out
    results = read_eval_results(run_dir)
    assert results["test_f1"] > 0.3
    assert {"test_f1_ANATOMY", "test_precision", "baseline_word_majority_test_f1"} <= set(results)


def test_chexbert_trains_exports_and_scores(silver_dir, tmp_path):
    from radmetrics.inference.loading.checkpoint import load_manifest
    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.chexbert import finetune
    from radmetrics.training.export import export_run

    run_dir = finetune.main(recipe_args(silver_dir, tmp_path / "run", "--max_steps 60 --max_seq_length 96"))
    results = read_eval_results(run_dir)
    assert results["test_kappa"] > results["baseline_majority_test_kappa"]
    assert "rule_labeler_negbio_test_macro_f1" in results and "negbio_test_macro_f1" in results
    export = export_run(run_dir, tmp_path / "export")
    _, manifest = load_manifest(export, "chexbert")
    assert (
        "| test_kappa |" in (export / "README.md").read_text()
        and manifest["eval_results"]["test_kappa"] == results["test_kappa"]
    )
    refs = ["Small left pleural effusion.", "No acute cardiopulmonary process.", "Cardiomegaly with mild edema."]
    hyps = ["No pleural effusion.", "No acute cardiopulmonary process.", "Enlarged heart."]
    result = Scorer(["chexbert"], {"chexbert": str(export)}, n_bootstrap=50)(refs, hyps)
    precision_recall = {
        f"chexbert_{part}_{n}_{kind}"
        for part in ("precision", "recall")
        for n in (14, 5)
        for kind in ("micro", "macro")
    }
    assert set(result.summary) == {
        "chexbert_f1_14_micro",
        "chexbert_f1_14_macro",
        "chexbert_f1_14_weighted",
        "chexbert_f1_5_micro",
        "chexbert_f1_5_macro",
        "chexbert_f1_5_weighted",
        "chexbert_similarity",
        *precision_recall,
    }
    assert set(result.meta["chexbert"]["per_condition"]["Cardiomegaly"]) == {"precision", "recall", "f1", "support"}
    assert result.per_sample[1]["chexbert_similarity"] == pytest.approx(1.0, abs=1e-5)


def test_ratescore_scores_through_an_exported_tagger(silver_dir, tmp_path):
    from radmetrics.inference.scoring.scorer import Scorer
    from radmetrics.training.export import export_run
    from radmetrics.training.rate_ner import iob

    options = "--max_train_samples 3000 --max_steps 60 --max_seq_length 48"
    run_dir = iob.main(recipe_args(silver_dir, tmp_path / "run", options))
    export = export_run(run_dir, tmp_path / "export")
    refs = ["Small left pleural effusion. The heart is normal in size.", "No pneumothorax."]
    hyps = ["Small left pleural effusion. The heart is normal in size.", "."]  # no entity in the candidate
    result = Scorer(["ratescore"], {"rate_ner_iob": str(export)}, n_bootstrap=20)(refs, hyps)
    assert result.per_sample[0]["ratescore"] == pytest.approx(1.0, abs=1e-5)
    assert result.per_sample[1]["ratescore"] == 0.5  # no entities on one side: RaTEScore's documented value
    assert result.details["ratescore"][0]["reference_entities"]
