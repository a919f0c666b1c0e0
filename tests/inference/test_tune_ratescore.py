import json

from radmetrics.data_builders.corpus.corpus_io import assign_splits
from radmetrics.data_builders.pairs.builders import build_pairs
from radmetrics.data_builders.silver.ner import tag_sentence
from radmetrics.inference.metrics.ratescore.score import load_affinity
from radmetrics.inference.text.sentences import split_sentences


def _entities(text):
    out = []
    for sentence in split_sentences(text):
        tagged = tag_sentence(sentence)
        out += [[" ".join(tagged["tokens"][a : b + 1]), kind] for a, b, kind in tagged["spans"]]
    return out


def test_tune_ratescore_cli_writes_a_loadable_matrix(iu_reports, tmp_path):
    from radmetrics.inference.cli import main

    reports = iu_reports[:150]
    pairs = build_pairs(
        reports, assign_splits(reports), heuristics=["radgraph_permute", "random"], per_heuristic=25, progress=False
    )
    data = tmp_path / "rated.jsonl"
    with open(data, "w") as fh:
        for p in pairs:
            errors = sum(1 for e in p.edits if e.significant)
            fh.write(
                json.dumps(
                    {
                        "reference_entities": _entities(p.reference),
                        "candidate_entities": _entities(p.candidate),
                        "total_errors": errors,
                    }
                )
                + "\n"
            )
    assert (
        main(["meta-eval", "tune-ratescore", "--data", str(data), "--trials", "12", "--out", str(tmp_path / "tuned")])
        == 0
    )
    summary = json.loads((tmp_path / "tuned" / "tuning.json").read_text())
    assert summary["n_pairs"] == len(pairs) and summary["tau_b"] >= summary["default_long_tau_b"]  # in-sample
    held = summary["held_out"]  # tuned on 4/5 of the pairs, measured on the rest, for each fold
    assert held["folds"] == 5 and len(held["per_fold"]) == 5 and -1 <= held["tuned_tau_b"] <= 1
    weights, neg_weight = load_affinity(str(tmp_path / "tuned" / "affinity_tuned.json"))
    assert len(weights) == 25 and 0.0 <= neg_weight <= 1.0


def test_tune_ratescore_names_bad_rows(tmp_path, capsys):
    from radmetrics.inference.cli import main

    data = tmp_path / "bad.jsonl"
    data.write_text('{"reference_entities": [], "total_errors": 1}\n')
    assert main(["meta-eval", "tune-ratescore", "--data", str(data), "--out", str(tmp_path / "o")]) == 2
    assert "bad.jsonl: line 1 lacks field" in capsys.readouterr().err
