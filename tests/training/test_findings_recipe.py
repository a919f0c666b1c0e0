"""The findings extractor's silver labels and recipe: build, train, resume, export, load, extract."""

import json

from radmetrics.data_builders.extractor_labels import code_words, read_coded_reports


def test_mesh_codes_read_as_words():
    assert code_words("Opacity/lung/base/left/mild") == "mild left base lung Opacity"
    assert code_words("Cardiomegaly") == "Cardiomegaly"
    reports = read_coded_reports(max_reports=5)
    assert len(reports) == 5 and all(r["text"] for r in reports)
    assert reports[0]["codes"] == [] and reports[1]["codes"] == [
        "borderline Cardiomegaly",
        "enlarged Pulmonary Artery",
    ]


def test_tiny_recipe_trains_resumes_exports_and_extracts(tmp_path):
    from radmetrics.inference.findings.extractor import FindingsExtractor
    from radmetrics.training.export import export_run
    from radmetrics.training.recipes import load_recipe

    recipe = load_recipe("findings/classifier")
    args = f"--config configs/findings/classifier/tiny.yaml --max_reports 60 --output_dir {tmp_path / 'run'}".split()
    run = recipe.main(args)
    provenance = json.loads((run / "silver" / "findings_provenance.json").read_text())
    assert provenance["radpref"] == "not used" and provenance["reports"] == 60
    results = json.loads((run / "eval_results.json").read_text())
    assert {"test_f1_finding", "test_rule_baseline_f1_finding", "test_support_other"} <= set(results)
    assert (run / "final" / ".complete").is_file() and (run / "embeddings.npz").is_file()
    assert recipe.main(args) == run  # complete: nothing is trained again
    export = export_run(run, tmp_path / "export")
    extractor = FindingsExtractor.from_export(export)
    found = extractor(
        ["Heart size is normal. No pneumothorax.", "Large right pleural effusion. Lungs otherwise clear."]
    )
    assert len(found) == 2 and all(isinstance(items, list) for items in found)
    assert "README.md" in {p.name for p in export.iterdir()}
