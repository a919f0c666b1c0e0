"""Scoring with the authors' released weights reproduces the reference packages, value for value.

Random-weight look-alikes of every released artefact, in its published format (tests/parity/lookalikes.py), are
scored here and compared with what f1chexbert 0.0.2, radgraph 0.1.18, ratescore 0.6.0 and radeval 2.2.1 computed on
the same files in their own environments (tests/data/released/*.json, written by tests/parity/make_fixtures.py):
labels, entities and relations exactly, scores to 1e-5, GREEN prompt token ids identical, on 63 report pairs
(60 IU X-ray pairs and 3 edge pairs), and on pairs whose candidate is an empty generation."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_args import score_args
from parity import green_parity, lookalikes
from parity.green_responses import responses as green_responses
from parity.reports import empty_candidate_pairs, fingerprint, parity_pairs

from radmetrics.inference import chexbert_f1, radgraph_f1
from radmetrics.inference.cli import main

pytestmark = pytest.mark.core  # scoring: runs in CI's core-only install too (.ci/core)

FIXTURES = Path(__file__).parents[1] / "data" / "released"
RADGRAPH_TYPES = ("radgraph", "radgraph-xl", "modern-radgraph-xl")


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Path:
    root = lookalikes.build(tmp_path_factory.mktemp("lookalikes"))
    digest = lookalikes.digest(root)
    for path in sorted(FIXTURES.glob("*.json")):
        made = json.loads(path.read_text(encoding="utf-8"))
        if "lookalike_digest" in made:
            assert made["lookalike_digest"] == digest, (
                f"{path.name} was made from other look-alikes; rerun tests/parity/make_fixtures.py"
            )
    return root


@pytest.fixture(scope="session")
def pairs():
    references, candidates = parity_pairs()
    for name in ("chexbert", "radgraph", "ratescore", "radeval"):
        made = fixture(name)["inputs"]
        assert (made["references"], made["candidates"]) == (fingerprint(references), fingerprint(candidates)), name
    return references, candidates


def base(root: Path, repo_id: str) -> str:
    return str(lookalikes.snapshot(root, repo_id))


def test_chexbert_labels_and_f1_reproduce_f1chexbert(released, pairs):
    from radmetrics.inference.metrics.chexbert.runner import CheXbertRunner

    expected = fixture("chexbert")["outputs"]
    runner = CheXbertRunner.from_component(
        str(released / "xdg" / "chexbert" / "chexbert.pth"), base(released, "bert-base-uncased")
    )
    references, candidates = pairs
    ref_labels, ref_embeddings = runner.labels_and_embeddings(references)
    hyp_labels, hyp_embeddings = runner.labels_and_embeddings(candidates)
    assert ref_labels.tolist() == expected["reference_classes"]
    assert hyp_labels.tolist() == expected["candidate_classes"]
    scores = chexbert_f1(ref_labels, hyp_labels)
    for n, report in ((14, expected["classification_report_14"]), (5, expected["classification_report_5"])):
        for kind in ("micro", "macro", "weighted"):
            assert scores[f"chexbert_f1_{n}_{kind}"] == pytest.approx(report[f"{kind} avg"]["f1-score"], abs=1e-5)
    similarity = (ref_embeddings * hyp_embeddings).sum(1) / (
        np.linalg.norm(ref_embeddings, axis=1) * np.linalg.norm(hyp_embeddings, axis=1)
    )
    assert similarity == pytest.approx(fixture("radeval")["outputs"]["chexbert_similarity"], abs=1e-5)


def compact(annotation: dict) -> dict:
    entities = [annotation["entities"][str(n + 1)] for n in range(len(annotation["entities"]))]
    return {
        "text": annotation["text"],
        "entities": [[e["start_ix"], e["end_ix"], e["label"], e["relations"]] for e in entities],
    }


@pytest.mark.parametrize("model_type", RADGRAPH_TYPES)
def test_radgraph_annotations_and_rewards_reproduce_radgraph(released, pairs, model_type):
    from radmetrics.inference.metrics.radgraph.dygie import RadGraphDyGIE

    expected = fixture("radgraph")["outputs"][model_type]
    tarball = lookalikes.snapshot(released, lookalikes.RRG) / f"{model_type}.tar.gz"
    extractor = RadGraphDyGIE.from_component(str(tarball), base(released, lookalikes.RADGRAPH_BASES[model_type]))
    batch_sizes = []  # reports of equal wordpiece length share an encoder call; the reference runs one at a time
    extractor.model.encoder.register_forward_hook(
        lambda _, args, kwargs, out: batch_sizes.append(len(kwargs["input_ids"])), with_kwargs=True
    )
    tokenize, tokenizer_calls = extractor.tokenizer, []  # radgraph tokenizes word by word; here, one call a run
    extractor.tokenizer = lambda *args, **kwargs: tokenizer_calls.append(args) or tokenize(*args, **kwargs)
    references, candidates = pairs
    ref_graphs, hyp_graphs = extractor.annotations(references), extractor.annotations(candidates)
    assert max(batch_sizes) > 1
    assert len(tokenizer_calls) == 2
    assert [compact(a) for a in ref_graphs] == expected["reference_annotations"]
    assert [compact(a) for a in hyp_graphs] == expected["candidate_annotations"]
    rewards = np.array([radgraph_f1(h, r, "all", case="reference") for h, r in zip(hyp_graphs, ref_graphs)])
    assert np.abs(rewards.T - np.array(expected["rewards"])).max() < 1e-5
    assert rewards.mean(0).tolist() == pytest.approx(expected["mean"], abs=1e-5)


def test_radcliq_options_give_it_models_of_its_own(released, pairs):
    """RadEval's keys in one process: `radgraph_*` from RadGraph-XL and `bertscore` from one encoder, RadCliQ from the
    original RadGraph and another BERTScore setting (options radgraph_model, bertscore_model), each equal to a run that
    gives RadCliQ those sub-scores as the run's own keys. Asked for alone, RadCliQ with both options computes neither
    replaced metric and needs no radgraph component."""
    from radmetrics.inference.scoring.scorer import Scorer

    rrg = lookalikes.snapshot(released, lookalikes.RRG)
    model = {kind: str(rrg / f"{kind}.tar.gz") for kind in ("radgraph", "radgraph-xl")}
    bases = {kind: base(released, lookalikes.RADGRAPH_BASES[kind]) for kind in model}
    chexbert = {"base_model": base(released, "bert-base-uncased")}

    def score(radgraph, bertscore, radcliq=None, metrics=("radgraph", "bertscore", "radcliq")):
        options = {
            "chexbert": chexbert,
            "radgraph": {"base_model": bases[radgraph]},
            "bertscore": bertscore,
            "radcliq": radcliq or {},
        }
        components = {
            "chexbert": str(rrg / "chexbert.pth"),
            **({"radgraph": model[radgraph]} if "radgraph" in metrics else {}),
        }
        scorer = Scorer(list(metrics), components, options, n_bootstrap=0)
        result = scorer(*pairs)
        return {
            "metrics": [spec.name for spec in scorer.specs],
            **{
                key: [row[key] for row in result.per_sample]
                for key in ("radgraph_partial", "bertscore", "radcliq_v1")
                if key in result.per_sample[0]
            },
        }

    radcliq_own = {
        "radgraph_model": model["radgraph"],
        "radgraph_base_model": bases["radgraph"],
        "bertscore_model": "default",
    }
    own = score("radgraph-xl", {"idf": False}, radcliq_own)
    alone = score("radgraph-xl", {"idf": False}, radcliq_own, metrics=["radcliq"])
    assert alone["metrics"] == ["bleu2", "chexbert", "radcliq"] and alone["radcliq_v1"] == own["radcliq_v1"]
    bf16 = score("radgraph-xl", {"idf": False}, {**radcliq_own, "precision": "bf16"}, metrics=["radcliq"])
    assert (
        0 < max(abs(a - b) for a, b in zip(bf16["radcliq_v1"], own["radcliq_v1"])) < 0.5
    )  # its own models ran in bf16
    as_keys = score(
        "radgraph", {"idf": True}
    )  # RadCliQ's BERTScore setting on the bundled encoder: layer 5, idf, rescaled
    xl = score("radgraph-xl", {"idf": False})
    assert own["radgraph_partial"] == xl["radgraph_partial"] and own["bertscore"] == xl["bertscore"]
    assert own["radcliq_v1"] == pytest.approx(as_keys["radcliq_v1"], abs=1e-9)
    assert own["radcliq_v1"] != pytest.approx(xl["radcliq_v1"], abs=1e-3)  # other models: other features
    with pytest.raises(ValueError, match="set radgraph_model too"):
        score("radgraph-xl", {}, {"radgraph_base_model": bases["radgraph"]})


@pytest.fixture(scope="session")
def ratescore_pipeline(released):
    from radmetrics.inference.metrics.ratescore.released import RaTEScorePipeline

    return RaTEScorePipeline.from_component(
        base(released, "Angelakeke/RaTE-NER-Deberta"), base(released, "FremyCompany/BioLORD-2023-C")
    )


def pairs_with_tied_matches(pipeline, ref_entities, cand_entities) -> set[int]:
    """Pairs where some entity has equally close matches of different types on the other side (an entity text found
    twice embeds identically). ratescore takes the best match with torch.topk(k=1), whose pick among exact ties varies
    with the CPU
    kernel (on this AMD EPYC it is not the pick the fixtures' machine made), so those pairs' scores are
    machine-dependent.
    """
    import torch

    tied = set()
    for i, (ref, cand) in enumerate(zip(ref_entities, cand_entities)):
        if ref and cand:
            similarity = (
                torch.nn.functional.normalize(pipeline.embed([t for t, _ in ref]), dim=1)
                @ torch.nn.functional.normalize(pipeline.embed([t for t, _ in cand]), dim=1).T
            )
            for rows, target in ((similarity, cand), (similarity.T, ref)):
                for best in (
                    rows >= rows.max(dim=1, keepdim=True).values - 1e-6
                ):  # equal texts may embed a rounding apart
                    if len({target[j][1] for j in best.nonzero().flatten().tolist()}) > 1:  # the pick decides the type
                        tied.add(i)
    return tied


def test_ratescore_sentences_entities_and_scores_reproduce_ratescore(ratescore_pipeline, pairs):
    from radmetrics.inference.metrics.ratescore.rush import rush_splitter

    expected = fixture("ratescore")["outputs"]
    references, candidates = pairs
    assert [rush_splitter().sentences(r) for r in references] == expected["reference_sentences"]
    assert [rush_splitter().sentences(c) for c in candidates] == expected["candidate_sentences"]
    scores, ref_entities, cand_entities = ratescore_pipeline.scores(references, candidates)
    as_lists = lambda found: [[list(e) for e in entities] for entities in found]  # noqa: E731
    assert as_lists(ref_entities) == expected["reference_entities"]
    assert as_lists(cand_entities) == expected["candidate_entities"]
    tied = pairs_with_tied_matches(ratescore_pipeline, ref_entities, cand_entities)
    assert len(scores) - len(tied) >= 30, (
        f"{len(tied)} of {len(scores)} pairs have tied matches: too few left to compare"
    )
    untied = lambda values: [v for i, v in enumerate(values) if i not in tied]  # noqa: E731
    assert untied(scores) == pytest.approx(untied(expected["scores_long"]), abs=1e-5)
    short = ratescore_pipeline.scores(references, candidates, "short")[0]
    assert untied(short) == pytest.approx(untied(expected["scores_short"]), abs=1e-5)


def test_ratescore_splits_each_distinct_report_once(ratescore_pipeline, pairs, monkeypatch):
    from radmetrics.inference.metrics.ratescore.rush import RushSplitter

    references, candidates = pairs
    expected = ratescore_pipeline.entities([*references, *candidates])
    split, sentences = [], RushSplitter.sentences
    monkeypatch.setattr(RushSplitter, "sentences", lambda self, text: split.append(text) or sentences(self, text))
    repeated = [*references, *candidates, *references]
    assert ratescore_pipeline.entities(repeated) == [*expected, *expected[: len(references)]]
    assert sorted(split) == sorted(set(repeated))


def test_ratescore_empty_report_bug_is_an_option(ratescore_pipeline):
    from parity.make_fixtures import inputs

    data, expected = inputs(), fixture("ratescore")["outputs"]["empty_report_scores"]
    references, candidates = data["empty_report_references"], data["empty_report_candidates"]
    reproduced, _, _ = ratescore_pipeline.scores(references, candidates, empty_reports="reference")
    assert (
        reproduced[: len(expected)] == pytest.approx(expected, abs=1e-5) and reproduced[len(expected) :] == [None] * 2
    )
    pairwise, _, _ = ratescore_pipeline.scores(references, candidates)
    assert len(pairwise) == 5 and pairwise[1] == pairwise[2] == 0.5  # a report without sentences: no entities
    assert pairwise[0] == pytest.approx(expected[0], abs=1e-5)  # the pairs before the first empty report agree


def test_green_prompt_ids_and_parser_reproduce_radeval(released, pairs):
    from radmetrics.inference.metrics.green.format import parse_green_response
    from radmetrics.inference.metrics.green.released import ReleasedGreen

    expected = fixture("radeval")["outputs"]
    green = ReleasedGreen(base(released, "StanfordAIMI/GREEN-RadLlama2-7b"))
    assert green.prompt_ids(*pairs) == expected["green_prompt_ids"]
    texts = green_responses()
    assert fingerprint(texts) == fixture("radeval")["inputs"]["green_responses"]
    for text, reference in zip(texts, expected["parsed_responses"]):
        parsed = parse_green_response(text, strict=False)
        assert (list(parsed.significant), list(parsed.insignificant), parsed.matched) == (
            reference["significant"],
            reference["insignificant"],
            reference["matched"],
        ), text
        assert parsed.score == pytest.approx(reference["green"])


def test_empty_candidates_score_as_the_reference_packages_score_them(released):
    """An empty generation is scored, not refused: CheXbert's labels and similarity, RadGraph F1's rewards at every
    level and GREEN's prompt are those of f1chexbert, radgraph and radeval for the same empty string."""
    from radmetrics.inference.metrics.chexbert.runner import CheXbertRunner
    from radmetrics.inference.metrics.green.released import ReleasedGreen
    from radmetrics.inference.metrics.radgraph.dygie import RadGraphDyGIE

    references, candidates = empty_candidate_pairs()
    assert fingerprint(candidates) == fixture("chexbert")["inputs"]["empty_candidate_candidates"]
    runner = CheXbertRunner.from_component(
        str(released / "xdg" / "chexbert" / "chexbert.pth"), base(released, "bert-base-uncased")
    )
    ref_labels, ref_embeddings = runner.labels_and_embeddings(references)
    hyp_labels, hyp_embeddings = runner.labels_and_embeddings(candidates)
    assert hyp_labels.tolist() == fixture("chexbert")["outputs"]["empty_candidate_classes"]
    similarity = (ref_embeddings * hyp_embeddings).sum(1) / (
        np.linalg.norm(ref_embeddings, axis=1) * np.linalg.norm(hyp_embeddings, axis=1)
    )
    assert similarity == pytest.approx(fixture("radeval")["outputs"]["empty_candidate_chexbert_similarity"], abs=1e-5)
    for model_type in RADGRAPH_TYPES:
        tarball = lookalikes.snapshot(released, lookalikes.RRG) / f"{model_type}.tar.gz"
        extractor = RadGraphDyGIE.from_component(str(tarball), base(released, lookalikes.RADGRAPH_BASES[model_type]))
        graphs = zip(extractor.annotations(candidates), extractor.annotations(references))
        rewards = np.array([radgraph_f1(h, r, "all", case="reference") for h, r in graphs])
        expected = np.array(fixture("radgraph")["outputs"][model_type]["empty_candidate_rewards"])
        assert np.abs(rewards.T - expected).max() < 1e-5 and not expected[:, 1].any(), model_type
    green = ReleasedGreen(base(released, "StanfordAIMI/GREEN-RadLlama2-7b"))
    assert (
        green.prompt_ids(references, candidates) == fixture("radeval")["outputs"]["empty_candidate_green_prompt_ids"]
    )


def test_released_green_refuses_a_prompt_other_than_greens(released, pairs, monkeypatch):
    from radmetrics.inference.metrics.base import OptionError
    from radmetrics.inference.metrics.green import released as released_green
    from radmetrics.inference.scoring.scorer import Scorer

    def load(*args, **kwargs):
        raise AssertionError("the model loaded before the prompt was refused")

    monkeypatch.setattr(released_green.ReleasedGreen, "__init__", load)
    with pytest.raises(OptionError, match="released GREEN model, which reads GREEN's prompt only"):
        Scorer(  # refused when the Scorer is built, before any pair is read
            ["green"],
            {"green": base(released, "StanfordAIMI/GREEN-RadLlama2-7b")},
            {"green": {"prompt": "short", "summary": False}},
            n_bootstrap=0,
        )


def test_fineradscore_lines_and_prompt_reproduce_the_authors_code(pairs):
    from radmetrics.inference.metrics.fineradscore.judge import fineradscore_messages, number_lines

    expected = fixture("fineradscore")["outputs"]
    references, candidates = pairs
    assert [
        f"Generated Text: {number_lines(c)} \n \n Ground Truth Text: {r}" for r, c in zip(references, candidates)
    ] == expected["queries"]
    assert fineradscore_messages(references[0], candidates[0]) == expected["gpt4_messages_first_pair"]
    assert fineradscore_messages(references[0], candidates[0], "claude3") == expected["claude3_messages_first_pair"]


def write_pairs(directory: Path, references, candidates) -> list[str]:
    for name, reports in (("refs.jsonl", references), ("hyps.jsonl", candidates)):
        (directory / name).write_text(
            "".join(json.dumps({"id": str(i), "report": r}) + "\n" for i, r in enumerate(reports))
        )
    return ["--refs", str(directory / "refs.jsonl"), "--hyps", str(directory / "hyps.jsonl"), "--bootstrap", "20"]


def test_score_cli_with_released_weights_as_paths_prints_the_reference_values(
    released, pairs, ratescore_pipeline, tmp_path, capsys
):
    """`radmetrics score --components chexbert=PATH radgraph=PATH rate_ner=PATH` on the look-alikes (`green=PATH`:
    test_score_cli_with_released_green_decodes_as_the_reference, one of the reference's batches at a time)."""
    out = tmp_path / "scores"
    rrg = lookalikes.snapshot(released, lookalikes.RRG)
    args = [
        "score",
        *write_pairs(tmp_path, *pairs),
        *"--metrics chexbert radgraph ratescore --components".split(),
        f"chexbert={rrg / 'chexbert.pth'}",
        f"radgraph={rrg / 'radgraph-xl.tar.gz'}",
        f"rate_ner={base(released, 'Angelakeke/RaTE-NER-Deberta')}",
        "--option",
        f"chexbert.base_model={base(released, 'bert-base-uncased')}",
        "--option",
        f"radgraph.base_model={base(released, 'microsoft/BiomedVLP-CXR-BERT-general')}",
        "--option",
        "radgraph.case=reference",
        "--option",
        f"ratescore.encoder={base(released, 'FremyCompany/BioLORD-2023-C')}",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    chexbert, radgraph = fixture("chexbert")["outputs"], fixture("radgraph")["outputs"]["radgraph-xl"]
    expected = {
        "chexbert_f1_14_micro": chexbert["classification_report_14"]["micro avg"]["f1-score"],
        "chexbert_f1_5_macro": chexbert["classification_report_5"]["macro avg"]["f1-score"],
        "chexbert_similarity": np.mean(fixture("radeval")["outputs"]["chexbert_similarity"]),
        "radgraph_simple": radgraph["mean"][0],
        "radgraph_partial": radgraph["mean"][1],
        "radgraph_complete": radgraph["mean"][2],
        "ratescore": np.mean(ratescore_pipeline.scores(*pairs)[0]),  # the reference's up to tied matches (above)
    }
    for key, value in expected.items():
        assert summary[key]["value"] == pytest.approx(value, abs=1e-5), key
        assert f"| {key} | {value:.4f} |" in printed


@pytest.mark.parametrize("batch", green_parity.batches(), ids=lambda pairs: f"pairs{pairs.start}-{pairs.stop - 1}")
def test_score_cli_with_released_green_decodes_as_the_reference(released, pairs, batch, tmp_path, capsys):
    """`radmetrics score --metrics green --components green=PATH` on one of radeval's batches of 8 parity pairs: every
    greedy step's argmax, recomputed from the run's own float32 logits, is the reference's token
    (tests/data/released/green_answer_ids.json) or a near tie within GREEN_ULPS last places (parity/decoding.py), then
    radeval's answers and scores exactly. Only the pairs in green_parity.NEAR_TIES may come that close: every other
    followed answer's smallest lead over its runner-up stays above 2 x GREEN_ULPS (the most the tolerance lets a
    kernel move a lead; measured kernels move it by 54 at most), so a float kernel cannot flip it.
    A pair the fixture held as text only (a batch not recorded) would be compared as text, and could differ only where
    one of the run's own decisions led by at most 2 x GREEN_ULPS (a kernel could have flipped it); every batch is
    recorded now."""
    from parity.decoding import ReferenceDecoding

    references, candidates = ([texts[i] for i in batch] for texts in pairs)
    radeval, ids = fixture("radeval")["outputs"], green_parity.answer_ids()
    out = tmp_path / "scores"
    args = [
        "score",
        *write_pairs(tmp_path, references, candidates),
        *f"--metrics green --components green={base(released, green_parity.GREEN)} --out {out}".split(),
        *"--option green.parser=reference --option green.summary=false".split(),
    ]
    followed = [ids[i] for i in batch]
    with ReferenceDecoding(followed, ulps=green_parity.GREEN_ULPS, dtype=torch.float32) as decoding:
        assert main(args) == 0
    responses = [json.loads(line)["response"] for line in (out / "details" / "green.jsonl").read_text().splitlines()]
    scores = [json.loads(line)["green"] for line in (out / "per_sample.jsonl").read_text().splitlines()]
    differ = [a for a, i in enumerate(batch) if responses[a] != radeval["green_analysis"][i]]
    # a followed answer is the reference's; one the fixture holds as text only may differ where a kernel can flip it
    assert all(followed[a] is None and decoding.could_flip(a) for a in differ), (differ, decoding.unfollowed_margins)
    assert [scores[a] for a in range(len(batch)) if a not in differ] == [
        radeval["green_scores"][i] for a, i in enumerate(batch) if a not in differ
    ]
    margins = sorted((margin, batch[a]) for a, margin in decoding.margins.items())
    unfollowed = sorted((margin, batch[a]) for a, margin in decoding.unfollowed_margins.items())
    print(f"pairs {batch.start}-{batch.stop - 1}: near ties {decoding.near_ties}, smallest margins {margins[:3]}")
    print(f"  unfollowed: smallest margins {unfollowed[:3]}; differ {differ}")
    known = [answer for answer in followed if answer is not None]
    assert decoding.mismatches == [] and decoding.steps == sum(map(green_parity.checked_steps, known))
    close = {batch[a] for a, _, _ in decoding.near_ties}
    close |= {batch[a] for a, margin in decoding.margins.items() if margin <= 2 * green_parity.GREEN_ULPS}
    assert close <= green_parity.NEAR_TIES, (decoding.near_ties, margins)
    assert len(decoding.margins) == len(known) and len(decoding.unfollowed_margins) == len(batch) - len(known)


@pytest.mark.slow
def test_kernel_sized_noise_in_the_released_greens_logits_still_decodes_as_the_reference(released, monkeypatch):
    """Every logit of every step of pair 24's batch moved by up to green_parity.KERNEL_ULPS float32 last places (the
    largest difference measured between MKL's and ATen's AVX2 and AVX-512 kernels on these logits), through pair 24's
    near tie: the answers still follow the reference's, any flip counted as a near tie."""
    from parity.decoding import kernel_noise

    from radmetrics.inference.metrics.green import released as released_green

    monkeypatch.setattr(released_green, "MAX_LENGTH", green_parity.NOISE_LENGTH)
    noise = kernel_noise(green_parity.KERNEL_ULPS, torch.float32, seed=1)
    found = green_parity.follow_released_green(released, range(24, 32), perturb=noise)
    steps = green_parity.NOISE_LENGTH - 697  # the batch's longest prompt has 697 tokens
    answers = [green_parity.answer_ids()[i] for i in range(24, 32)]
    assert found["mismatches"] == []
    assert found["steps"] == sum(min(steps, green_parity.checked_steps(answer)) for answer in answers)


@pytest.mark.slow
@pytest.mark.parametrize("difference", ["token", "candidate", "setting"])
def test_a_real_difference_from_the_released_greens_decoding_fails(released, pairs, monkeypatch, difference):
    """A wrong token in the reference's answer, another candidate report, another setting (a repetition penalty):
    each is a mismatch, not a near tie, on the first 103 steps of pairs 24-31 (whose longest prompt has 697 tokens).
    A mismatched step is forced to the reference's token too, so that every later step is still checked."""
    from radmetrics.inference.metrics.green import released as released_green

    monkeypatch.setattr(released_green, "MAX_LENGTH", 800)
    batch, candidates, setup = range(24, 32), None, None
    answers = [list(green_parity.answer_ids()[i]) for i in batch]
    if difference == "token":
        answers[0][10] += 1
    elif difference == "candidate":
        candidates = list(pairs[1][24:32])
        candidates[1] += " New small left pleural effusion."
    else:
        setup = lambda green: setattr(green.model.generation_config, "repetition_penalty", 1.3)  # noqa: E731
    found = green_parity.follow_released_green(released, batch, answers=answers, candidates=candidates, setup=setup)
    decoding = [m for m in found["mismatches"] if ": step " in m]
    assert found["steps"] == 8 * 103
    if difference == "token":
        # the wrong token, forced, changes what follows too: measured, 5 more mismatches in the next 92 steps
        assert decoding[0] == f"answer 0: step 10 draws token {answers[0][10] - 1}, the reference {answers[0][10]}"
        assert all(m.startswith("answer 0: step ") for m in decoding), decoding
    elif difference == "candidate":
        assert len(decoding) >= 10 and all(m.startswith("answer 1: step ") for m in decoding), decoding
    else:
        assert len({m.split(":")[0] for m in decoding}) >= 4, decoding


def test_score_cli_released_uses_the_cache(released, pairs, tmp_path):
    """`--components released` resolves every default release from the Hugging Face cache (HF_HUB_OFFLINE)."""
    references, candidates = pairs
    env = {
        **os.environ,
        "HF_HOME": str(released / "hf"),
        "HF_HUB_OFFLINE": "1",
        "RADMETRICS_CACHE": str(tmp_path / "cache"),
    }
    command = [
        sys.executable,
        "-m",
        "radmetrics.inference.cli",
        "score",
        *write_pairs(tmp_path, references[:12], candidates[:12]),
        *(
            "--metrics chexbert radgraph ratescore --components released --option radgraph.case=reference --out"
        ).split(),
        str(tmp_path / "out"),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()]
    radgraph = fixture("radgraph")["outputs"]["radgraph-xl"]["rewards"]
    assert [r["radgraph_partial"] for r in rows] == pytest.approx(radgraph[1][:12], abs=1e-5)
    assert [r["ratescore"] for r in rows] == pytest.approx(
        fixture("ratescore")["outputs"]["scores_long"][:12], abs=1e-5
    )


def test_weights_convert_gives_exports_that_score_the_same(released, pairs, tmp_path):
    from radmetrics.inference.metrics.chexbert.runner import CheXbertRunner
    from radmetrics.inference.metrics.radgraph.dygie import RadGraphDyGIE
    from radmetrics.inference.metrics.ratescore.released import RaTEScorePipeline

    references, _ = pairs
    rrg = lookalikes.snapshot(released, lookalikes.RRG)
    assert (
        main(
            [
                "weights",
                "convert",
                str(rrg / "chexbert.pth"),
                "--kind",
                "chexbert",
                "--out",
                str(tmp_path / "chexbert"),
                "--base-model",
                base(released, "bert-base-uncased"),
            ]
        )
        == 0
    )
    manifest = json.loads((tmp_path / "chexbert" / "radmetrics.json").read_text())
    assert manifest["component"] == "chexbert" and len(manifest["released"]["sha256"]) == 64
    labels, _ = CheXbertRunner.from_component(str(tmp_path / "chexbert")).labels_and_embeddings(references)
    assert labels.tolist() == fixture("chexbert")["outputs"]["reference_classes"]
    assert (
        main(
            [
                "weights",
                "convert",
                str(rrg / "modern-radgraph-xl.tar.gz"),
                "--kind",
                "radgraph",
                "--out",
                str(tmp_path / "radgraph"),
                "--base-model",
                base(released, "answerdotai/ModernBERT-base"),
            ]
        )
        == 0
    )
    graphs = RadGraphDyGIE.from_component(str(tmp_path / "radgraph")).annotations(references[:10])
    assert [compact(g) for g in graphs] == fixture("radgraph")["outputs"]["modern-radgraph-xl"][
        "reference_annotations"
    ][:10]
    assert (
        main(
            [
                "weights",
                "convert",
                base(released, "Angelakeke/RaTE-NER-Deberta"),
                "--kind",
                "rate_ner",
                "--out",
                str(tmp_path / "rate_ner"),
                "--base-model",
                base(released, "FremyCompany/BioLORD-2023-C"),
            ]
        )
        == 0
    )
    scores, _, _ = RaTEScorePipeline.from_component(str(tmp_path / "rate_ner")).scores(references[:10], pairs[1][:10])
    assert scores == pytest.approx(fixture("ratescore")["outputs"]["scores_long"][:10], abs=1e-5)


def test_weights_list_and_component_errors(capsys, tmp_path):
    from radmetrics.inference.loading.released import ARTEFACTS

    assert main(["weights", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(f"| {name} |" in listed for name in ARTEFACTS) and "Llama 2 Community Licence" in listed
    (tmp_path / "r.txt").write_text("No effusion.\n")
    base_args = score_args(str(tmp_path / "r.txt"), str(tmp_path / "r.txt"), str(tmp_path / "o"))
    capsys.readouterr()
    for entry, message in (
        ("labeler=x.pth", "unknown component kind 'labeler'"),
        ("chexbert=radgraph-xl", "radgraph-xl is a radgraph release, not chexbert"),
    ):
        assert main([*base_args, "--components", entry]) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1
    options = "--metrics bleu2 radgraph --components radgraph=radgraph-xl --option radgraph.cse=x".split()
    assert main([*base_args, *options]) == 2
    assert "metric radgraph has no option cse" in capsys.readouterr().err


def test_released_artefact_missing_offline_names_the_file(monkeypatch, tmp_path):
    from radmetrics.inference.loading.released import ArtefactError, fetch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        ArtefactError, match="chexbert.pth of StanfordAIMI/RRG_scorers was not found in the local Hugging Face cache"
    ):
        fetch("chexbert")


def test_green_tokenizer_code_runs_only_when_trusted(released, tmp_path):
    import shutil

    from radmetrics.inference.metrics.green.released import ReleasedGreen, RemoteCodeRequired

    model = tmp_path / "green"
    shutil.copytree(base(released, "StanfordAIMI/GREEN-RadLlama2-7b"), model)
    config = json.loads((model / "tokenizer_config.json").read_text())
    config.update(
        tokenizer_class="CheXagentTokenizer",
        auto_map={"AutoTokenizer": ["tokenization_chexagent.CheXagentTokenizer", None]},
    )
    (model / "tokenizer_config.json").write_text(json.dumps(config))
    (model / "tokenization_chexagent.py").write_text("raise RuntimeError('repository code ran')\n")
    with pytest.raises(RemoteCodeRequired, match="trust-remote-code"):
        ReleasedGreen(str(model))


def test_meta_eval_and_refits_run_for_every_component_metric(released, pairs, tmp_path):
    """`meta-eval correlate --components ...` scores every component metric; `--option radcliq.constants=FILE` and
    `--option ratescore.matrix=FILE` (what fit-radcliq and tune-ratescore write) change radcliq_v1 and ratescore."""
    import csv

    references, candidates = (p[:12] for p in pairs)
    rrg = lookalikes.snapshot(released, lookalikes.RRG)
    components = [
        "--components",
        f"chexbert={rrg / 'chexbert.pth'}",
        f"radgraph={rrg / 'radgraph-xl.tar.gz'}",
        f"rate_ner={base(released, 'Angelakeke/RaTE-NER-Deberta')}",
        "--option",
        f"chexbert.base_model={base(released, 'bert-base-uncased')}",
        "--option",
        f"radgraph.base_model={base(released, 'microsoft/BiomedVLP-CXR-BERT-general')}",
        "--option",
        f"ratescore.encoder={base(released, 'FremyCompany/BioLORD-2023-C')}",
    ]
    with open(tmp_path / "rated.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["reference", "candidate", "errors"])
        writer.writerows([r, c, i % 4] for i, (r, c) in enumerate(zip(references, candidates)))
    assert (
        main(
            [
                "meta-eval",
                "correlate",
                "--csv",
                str(tmp_path / "rated.csv"),
                "--human-column",
                "errors",
                *components,
                "--bootstrap",
                "20",
                "--out",
                str(tmp_path / "corr"),
            ]
        )
        == 0
    )
    keys = json.loads((tmp_path / "corr" / "kendall_tau.json").read_text())["metrics"]
    assert {
        "chexbert_f1_14_micro",
        "chexbert_similarity",
        "radgraph_partial",
        "radgraph_radcliq",
        "ratescore",
        "radcliq_v1",
    } <= set(keys)
    assert keys["radcliq_v1"]["higher_is_better"] is False

    def score(*extra) -> dict:
        out = tmp_path / f"score{len(extra)}"
        assert (
            main(
                [
                    "score",
                    *write_pairs(tmp_path, references, candidates),
                    "--metrics",
                    "radcliq",
                    "ratescore",
                    *components,
                    *extra,
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        return json.loads((out / "summary.json").read_text())

    published = score()
    constants = {
        "feature_order": ["radgraph_radcliq", "bertscore", "chexbert_similarity", "bleu2"],
        "scaler_mean_": [0.3, 0.4, 0.5, 0.2],
        "scaler_scale_": [0.2, 0.2, 0.2, 0.1],
        "coefs_with_bias_last": [-0.5, -0.2, -0.1, -0.2, 3.0],
    }
    (tmp_path / "radcliq.json").write_text(json.dumps(constants))
    matrix = json.loads(
        (Path(__file__).parents[2] / "inference" / "resources" / "affinity_short_weight.json").read_text()
    )
    (tmp_path / "matrix.json").write_text(json.dumps(matrix))
    refit = score(
        "--option",
        f"radcliq.constants={tmp_path / 'radcliq.json'}",
        "--option",
        f"ratescore.matrix={tmp_path / 'matrix.json'}",
    )
    assert refit["radcliq_v0"]["value"] == published["radcliq_v0"]["value"]
    assert refit["radcliq_v1"]["value"] != published["radcliq_v1"]["value"]
    assert refit["ratescore"]["value"] == pytest.approx(
        np.mean(fixture("ratescore")["outputs"]["scores_short"][:12]), abs=1e-5
    )
