"""Score signatures: stable (same signature and inputs, same values) and sensitive (any change of weights, or of an
option that changes values, changes the signature; an option that changes no value does not)."""

import json

import pytest
from cli_args import compare_in, score_in

from radmetrics.inference.cli import main
from radmetrics.inference.scoring.scorer import Scorer
from radmetrics.inference.scoring.signature import fingerprint, version

REFS = [
    "Small left pleural effusion. Heart size is normal.",
    "No acute cardiopulmonary process.",
    "Mild cardiomegaly.",
]
HYPS = ["Small right pleural effusion. Heart size is normal.", "", "The heart is mildly enlarged."]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "cache"))


def fake_export(folder, component: str, weights: bytes):
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    files = {"model.safetensors": __import__("hashlib").sha256(weights).hexdigest()}
    (folder / "radmetrics.json").write_text(json.dumps({"component": component, "files": files}))
    return str(folder)


def test_same_signature_and_inputs_give_the_same_values():
    metrics = ["bleu2", "rougeL", "bertscore", "semantic_green"]
    first, second = Scorer(metrics, n_bootstrap=0)(REFS, HYPS), Scorer(metrics, n_bootstrap=0)(REFS, HYPS)
    assert first.signatures == second.signatures and set(first.signatures) == set(first.summary)
    assert first.per_sample == second.per_sample
    assert first.signatures["rougeL"] == f"rougeL|use_stemmer:True|v:{version()}"
    assert first.signatures["bertscore"].startswith("bertscore|baseline_path:auto|idf:False|model:all-MiniLM-L6-v2#")
    assert "|cpu-fp32|" in first.signatures["semantic_green_matched_findings"]


def test_value_changing_options_change_the_signature_and_others_do_not():
    def signature(options):
        return Scorer(["bertscore"], metric_options={"bertscore": options}).signatures()["bertscore"]

    base = signature({})
    assert signature({"idf": True}) != base and signature({"precision": "bf16"}) != base
    assert signature({"num_layers": 4}) != base
    assert signature({"batch_size": 3}) == base and signature({"device": "cpu"}) == base  # no value changes
    threshold = Scorer(["semantic_green"], metric_options={"semantic_green": {"threshold": 0.6}}).signatures()
    assert "threshold:0.6" in threshold["semantic_green"]


def test_other_weights_change_the_signature(tmp_path):
    one = fake_export(tmp_path / "a", "radgraph", b"weights one")
    two = fake_export(tmp_path / "b", "radgraph", b"weights two")
    same = fake_export(tmp_path / "c", "radgraph", b"weights one")
    assert fingerprint(one) != fingerprint(two) and fingerprint(one) == fingerprint(same)

    def signature(path):
        return Scorer(["radgraph"], components={"radgraph": path}).signatures()["radgraph_partial"]

    assert signature(one) != signature(two) and signature(one) == signature(same)
    assert signature(one).startswith(f"radgraph_partial|w:{fingerprint(one)}|case:insensitive|")
    composite = Scorer(["radcliq"], components={"radgraph": one, "chexbert": two}).signatures()["radcliq_v1"]
    assert f"radgraph.w:{fingerprint(one)}" in composite and "bertscore.model:all-MiniLM-L6-v2" in composite


def test_signature_only_prints_without_scoring(tmp_path, capsys):
    assert main(["score", "--signature-only", "--metrics", "rougeL", "bleu4"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"bleu4|v:{version()}", f"rougeL|use_stemmer:True|v:{version()}"]


def test_run_json_records_inputs_signatures_and_pairs(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(REFS) + "\n")
    (tmp_path / "hyps.txt").write_text("\n".join(HYPS) + "\n")
    assert score_in(tmp_path, "--metrics", "rougeL", "--bootstrap", "0") == 0
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    import hashlib

    assert run["pairs"] == 3 and run["signatures"]["rougeL"].startswith("rougeL|")
    assert run["inputs"]["references"]["sha256"] == hashlib.sha256((tmp_path / "refs.txt").read_bytes()).hexdigest()
    assert (
        json.loads((tmp_path / "out" / "summary.json").read_text())["rougeL"]["signature"]
        == run["signatures"]["rougeL"]
    )
    assert run["signatures"]["rougeL"] in (tmp_path / "out" / "summary.md").read_text()
    assert run["signatures"]["rougeL"] in (tmp_path / "out" / "report.html").read_text()


def test_an_llm_judged_metric_through_the_answer_cache(tmp_path):
    """Two runs of FineRadScore with one signature (its judge's model in it) give the same values, the second from the
    answer cache."""
    from llm_fault_server import FaultServer
    from test_llm_metrics import fineradscore_judge, write_endpoint

    pytest.importorskip("openai")
    with FaultServer(responder=fineradscore_judge) as server:
        endpoint = write_endpoint(tmp_path / "judge.yaml", server)
        runs = [
            Scorer(["fineradscore"], n_bootstrap=0, endpoint=endpoint, llm_cache=tmp_path / "answers.sqlite")(
                REFS, HYPS
            )
            for _ in range(2)
        ]
        asked = server.requests
    assert asked == 3  # the second run asked nothing
    assert runs[0].signatures == runs[1].signatures and "|judge:judge|" in runs[0].signatures["fineradscore_sum"]
    assert runs[0].per_sample == runs[1].per_sample


def test_a_hub_snapshot_is_pinned_by_its_commit_without_a_download(tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--org--model" / "snapshots" / "0123456789abcdef"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert fingerprint(str(snapshot)) == "org/model#012345"
    assert fingerprint(str(snapshot / "config.json")) == "org/model/config.json#012345"
    plain = tmp_path / "data" / "snapshots" / "run3"  # a folder that is not a Hub cache snapshot: hashed
    plain.mkdir(parents=True)
    (plain / "model.pt").write_bytes(b"weights")
    assert fingerprint(str(plain / "model.pt")).startswith("model.pt#") and "run3" not in fingerprint(
        str(plain / "model.pt")
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    assert fingerprint("org/not-cached") == "org/not-cached"  # no local copy: the name alone, nothing fetched


def test_a_read_only_cache_does_not_stop_a_signature(tmp_path, monkeypatch):
    (tmp_path / "weights.bin").write_bytes(b"w")
    monkeypatch.setenv("RADMETRICS_CACHE", str(tmp_path / "ro"))
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "fingerprints.json").write_text("{half written")
    (tmp_path / "ro").chmod(0o500)
    try:
        assert fingerprint(str(tmp_path / "weights.bin")).startswith("weights.bin#")
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_compare_outputs_carry_the_signatures(tmp_path):
    (tmp_path / "refs.txt").write_text("\n".join(REFS) + "\n")
    (tmp_path / "a.txt").write_text("\n".join(HYPS) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(reversed(HYPS)) + "\n")
    assert compare_in(tmp_path, "--metrics", "rougeL", "--bootstrap", "20", out="o") == 0
    signature = f"rougeL|use_stemmer:True|v:{version()}"
    assert json.loads((tmp_path / "o" / "compare.json").read_text())["keys"]["rougeL"]["signature"] == signature
    assert signature in (tmp_path / "o" / "report.html").read_text()
