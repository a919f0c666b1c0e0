"""Streaming, resumable `radmetrics score`: the door checks, the stream file's header and refusals, resuming after the
last complete chunk, and outputs built from the stream equal to those of one in-memory `Scorer` call."""

import json

import pytest
from cli_args import compare_in, score_in

from radmetrics.inference.files import run_output
from radmetrics.inference.files.output_paths import OutputPathError
from radmetrics.inference.files.run_output import write_result
from radmetrics.inference.files.score_stream import STREAM_NAME, differing_field, scan
from radmetrics.inference.scoring import streaming
from radmetrics.inference.scoring.score_run import score_into_folder
from radmetrics.inference.scoring.scorer import Scorer
from radmetrics.inference.scoring.streaming import memory_source, merge_meta

WORDS = "heart size normal lungs clear no effusion pneumothorax small left basilar opacity atelectasis mild".split()


def reports(n: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + "." for _ in range(n)]


def write_inputs(folder, n=11):
    refs, hyps = reports(n, 1), reports(n, 2)
    hyps[4] = ""  # an empty generation is scored
    (folder / "refs.txt").write_text("\n".join(refs) + "\n")
    (folder / "hyps.txt").write_text("\n".join(hyps) + "\n")
    return refs, hyps


def stream_run(folder, out="out", chunk=3, metrics=("bleu2", "bleu4", "rougeL"), overwrite=False, report=None):
    refs = (folder / "refs.txt").read_text().splitlines()
    hyps = (folder / "hyps.txt").read_text().splitlines()
    scorer = Scorer(list(metrics), n_bootstrap=50, seed=3)
    source = memory_source(scorer, refs, hyps)
    inputs = {"references": str(folder / "refs.txt"), "candidates": str(folder / "hyps.txt")}
    (folder / out).mkdir(exist_ok=True)
    lines = []
    score_into_folder(scorer, source, folder / out, inputs, {}, chunk, overwrite, report or lines.append)
    return lines


@pytest.mark.parametrize("command", ["score", "compare"])
def test_an_unwritable_out_is_refused_in_one_line_before_any_metric_runs(tmp_path, capsys, monkeypatch, command):
    write_inputs(tmp_path)
    (tmp_path / "a.txt").write_text((tmp_path / "hyps.txt").read_text())
    (tmp_path / "b.txt").write_text((tmp_path / "refs.txt").read_text())

    def refuse(*args, **kwargs):
        raise AssertionError("a metric ran before --out was checked")

    monkeypatch.setattr("radmetrics.inference.metrics.base.Metric.__call__", refuse)
    bad = "hyps.txt/x"  # under a file
    code = score_in(tmp_path, "--metrics", "rougeL", out=bad) if command == "score" else compare_in(tmp_path, out=bad)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "hyps.txt is a file, not a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("empty", ["refs.txt", "hyps.txt", "b.txt"])
def test_an_input_with_no_reports_is_refused_naming_it(tmp_path, capsys, monkeypatch, empty):
    write_inputs(tmp_path)
    (tmp_path / "a.txt").write_text((tmp_path / "hyps.txt").read_text())
    (tmp_path / "b.txt").write_text((tmp_path / "refs.txt").read_text())
    (tmp_path / empty).write_text("")
    if empty == "b.txt":
        code = compare_in(tmp_path, "--metrics", "rougeL")
    else:
        code = score_in(tmp_path, "--metrics", "rougeL")
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{tmp_path / empty}: no reports in the file" in err


def test_streamed_outputs_equal_one_in_memory_call_byte_for_byte(tmp_path):
    refs, hyps = write_inputs(tmp_path)
    stream_run(tmp_path, chunk=3)
    result = Scorer(["bleu2", "bleu4", "rougeL"], n_bootstrap=50, seed=3)(refs, hyps)
    write_result(result, tmp_path / "memory", refs, hyps)
    for name in ("per_sample.jsonl", "summary.json", "summary.md", "report.html"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes(), name
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["bleu4"]["value"] == result.summary["bleu4"]["value"]  # the corpus value, from the statistics
    header, done, chunks, _, finished = scan(tmp_path / "out" / STREAM_NAME)
    assert (done, chunks, finished) == (11, 4, True) and header["chunk_size"] == 3 and header["pairs"] == 11
    assert set(header["signatures"]) == {"bleu2", "bleu4", "rougeL"} and len(header["inputs"]["candidates"]) == 64


class Killed(Exception):
    pass


def test_a_run_cut_short_resumes_after_its_last_complete_chunk_and_scores_no_pair_twice(tmp_path, monkeypatch):
    write_inputs(tmp_path)
    stream_run(tmp_path, out="whole")
    scored = []
    real = streaming.chunk_rows

    def counting(specs, metrics, outputs, ids, start):
        scored.extend(ids)
        return real(specs, metrics, outputs, ids, start)

    monkeypatch.setattr(streaming, "chunk_rows", counting)

    def kill_after_two_chunks(line):
        if line.startswith("scored 6 "):
            raise Killed

    with pytest.raises(Killed):
        stream_run(tmp_path, report=kill_after_two_chunks)
    with open(tmp_path / "out" / STREAM_NAME, "a") as fh:  # a chunk cut short by the kill: dropped on resume
        fh.write('{"i": 6, "id": "6", "values": {"bleu2": 0.5')
    lines = stream_run(tmp_path)
    assert "resuming: 6 of 11 pairs scored in 2 complete chunk(s) of 3; scoring from pair 7" in lines[0]
    assert scored == [str(i) for i in range(11)]  # each pair scored once over both processes
    for name in ("per_sample.jsonl", "summary.json", "details", "report.html"):
        whole, resumed = tmp_path / "whole" / name, tmp_path / "out" / name
        assert (not whole.exists() and not resumed.exists()) or whole.read_bytes() == resumed.read_bytes(), name
    rows = [json.loads(line) for line in (tmp_path / "out" / STREAM_NAME).read_text().splitlines()]
    assert [r["i"] for r in rows if "i" in r] == list(range(11))


def test_every_chunk_done_but_outputs_missing_writes_them_without_scoring(tmp_path, monkeypatch):
    write_inputs(tmp_path)

    def kill_at_the_end(line):
        if line.startswith("scored 11 "):
            raise Killed

    with pytest.raises(Killed):
        stream_run(tmp_path, report=kill_at_the_end)
    monkeypatch.setattr(streaming, "chunk_rows", lambda *a: pytest.fail("a pair was scored again"))
    lines = stream_run(tmp_path)
    assert "every pair was scored by an earlier run" in lines[0]
    assert len((tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()) == 11


def test_a_finished_run_or_another_runs_folder_is_refused_unless_overwrite(tmp_path, capsys):
    write_inputs(tmp_path)
    assert score_in(tmp_path, "--metrics", "rougeL", "--chunk-size", "4") == 0
    assert score_in(tmp_path, "--metrics", "rougeL", "--chunk-size", "4") == 2
    assert "holds a finished run: pass --overwrite" in capsys.readouterr().err
    (tmp_path / "out" / STREAM_NAME).write_text(
        (tmp_path / "out" / STREAM_NAME).read_text().replace('{"complete": true}\n', "")
    )
    original = (tmp_path / "hyps.txt").read_text()
    (tmp_path / "hyps.txt").write_text(original.replace("heart", "HEART"))
    assert score_in(tmp_path, "--metrics", "rougeL", "--chunk-size", "4") == 2
    err = capsys.readouterr().err.strip()
    assert "holds a run of other inputs or options (inputs.candidates differs)" in err and len(err.splitlines()) == 1
    (tmp_path / "hyps.txt").write_text(original)
    assert score_in(tmp_path, "--metrics", "rougeL", "--chunk-size", "5") == 2
    assert "(chunk_size differs)" in capsys.readouterr().err
    assert score_in(tmp_path, "--metrics", "bleu2", "--chunk-size", "4") == 2
    assert "(signatures.bleu2 differs)" in capsys.readouterr().err
    assert score_in(tmp_path, "--metrics", "bleu2", "--chunk-size", "4", "--overwrite") == 0
    assert "bleu2" in json.loads((tmp_path / "out" / "summary.json").read_text())
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "summary.json").write_text("{}")
    assert score_in(tmp_path, "--metrics", "bleu2", out="old") == 2
    assert "holds the results of another run" in capsys.readouterr().err


def test_a_chunk_size_below_one_is_refused(tmp_path, capsys):
    write_inputs(tmp_path)
    assert score_in(tmp_path, "--metrics", "rougeL", "--chunk-size", "0") == 2
    assert "--chunk-size 0" in capsys.readouterr().err


def test_headers_name_the_first_field_that_differs():
    old = {"inputs": {"references": "a", "candidates": "b"}, "pairs": 3}
    assert differing_field(old, old) is None
    assert differing_field(old, {**old, "inputs": {"references": "a", "candidates": "c"}}) == "inputs.candidates"
    assert differing_field(old, {**old, "chunk_size": 2}) == "chunk_size"


def test_a_metric_whose_values_depend_on_the_whole_call_is_scored_in_one_chunk():
    class Plain:
        def values_depend_on_corpus(self):
            return False

    class Idf(Plain):
        def values_depend_on_corpus(self):
            return True

    assert streaming.chunk_size_for([Plain()], 1000, 5000) == 1000
    assert streaming.chunk_size_for([Plain(), Idf()], 1000, 5000) == 5000


def test_bertscore_with_idf_depends_on_the_call():
    from radmetrics.inference.metrics.bertscore.metric import BertScore

    assert BertScore(idf=True).values_depend_on_corpus() and not BertScore().values_depend_on_corpus()


def test_chunk_metas_merge_counts_and_keep_what_they_share():
    metas = [
        {"llm": {"totals": {"answered": 2}, "endpoint": "x"}},
        {"llm": {"totals": {"answered": 3}, "endpoint": "x"}},
    ]
    assert merge_meta(metas) == {"llm": {"totals": {"answered": 5}, "endpoint": "x"}}
    assert merge_meta([{"rate": 0.5}, {"rate": 0.25}]) == {"rate": [0.5, 0.25]}


def test_report_html_embeds_the_worst_pairs_up_to_its_cap_and_counts_all(tmp_path, monkeypatch):
    write_inputs(tmp_path)
    monkeypatch.setattr(run_output, "REPORT_PAIRS", 4)
    stream_run(tmp_path, metrics=("rougeL",))
    page = (tmp_path / "out" / "report.html").read_text()
    data = json.loads(page.split('<script id="data" type="application/json">')[1].split("</script>")[0])
    values = [json.loads(line)["rougeL"] for line in (tmp_path / "out" / "per_sample.jsonl").read_text().splitlines()]
    assert len(data["rows"]) == 4 and "11 pairs" in page and "holds the 4 worst on rougeL" in page
    assert sorted(row["values"][0] for row in data["rows"]) == sorted(values)[:4]
    assert "(n=11)" in page  # the distribution counts every pair


def test_a_streamed_report_is_written_a_pair_at_a_time(tmp_path, monkeypatch):
    """The page's rows are made and written one by one: the memory that writes report.html does not grow with the
    pairs it embeds (at 10,000 pairs it held every pair's row, detail and the page's text at once)."""
    import weakref

    class Row(dict):  # a dict that a weak reference can follow
        pass

    made, most_alive, real = [], [0], run_output.sample_row

    def tracked(*args):
        row = Row(real(*args))
        made.append(weakref.ref(row))
        most_alive[0] = max(most_alive[0], sum(ref() is not None for ref in made))
        return row

    write_inputs(tmp_path)
    monkeypatch.setattr(run_output, "sample_row", tracked)
    stream_run(tmp_path, metrics=("rougeL",))
    page = (tmp_path / "out" / "report.html").read_text()
    data = json.loads(page.split('<script id="data" type="application/json">')[1].split("</script>")[0])
    assert len(made) == len(data["rows"]) == 11
    assert most_alive[0] <= 2  # the row being written and the one made after it


def test_each_scored_chunk_gives_the_memory_it_freed_back(tmp_path, monkeypatch):
    """glibc kept what each chunk freed, so a run's peak climbed chunk after chunk (semantic_green: 645 -> 752 MiB
    over six chunks of 500 pairs); each chunk now ends by giving it back, after its outputs are dropped."""
    refs, hyps = write_inputs(tmp_path)
    scorer = Scorer(["rougeL"], n_bootstrap=0)
    outputs_held = []
    monkeypatch.setattr(streaming, "release_freed_memory", lambda: outputs_held.append(len(scorer.upstream)) or True)
    (tmp_path / "out").mkdir()
    inputs = {"references": str(tmp_path / "refs.txt"), "candidates": str(tmp_path / "hyps.txt")}
    score_into_folder(scorer, memory_source(scorer, refs, hyps), tmp_path / "out", inputs, {}, 3)
    assert outputs_held == [0, 0, 0, 0]  # 11 pairs in chunks of 3: once per chunk, its outputs dropped first


def test_freed_memory_goes_back_where_the_c_library_is_glibc():
    import platform

    from radmetrics.inference.scoring.heap import release_freed_memory

    assert release_freed_memory() is (platform.libc_ver()[0] == "glibc")


def test_large_blocks_are_mapped_before_the_first_chunk_is_scored(tmp_path, monkeypatch):
    """Within a chunk, glibc's dynamic mmap threshold let the heap grow by what the encoder's freed activations left,
    and a run of more chunks peaked higher (semantic_green, 1,000 -> 10,000 pairs: +15-25%); the threshold is now
    fixed before any metric runs."""
    refs, hyps = write_inputs(tmp_path)
    scorer = Scorer(["rougeL"], n_bootstrap=0)
    order = []
    monkeypatch.setattr(streaming, "map_large_blocks", lambda: order.append("mapped") or True)
    monkeypatch.setattr(streaming, "release_freed_memory", lambda: order.append("chunk") or True)
    (tmp_path / "out").mkdir()
    inputs = {"references": str(tmp_path / "refs.txt"), "candidates": str(tmp_path / "hyps.txt")}
    score_into_folder(scorer, memory_source(scorer, refs, hyps), tmp_path / "out", inputs, {}, 3)
    assert order == ["mapped", "chunk", "chunk", "chunk", "chunk"]


def test_a_freed_large_block_does_not_raise_the_mmap_threshold():
    """With the threshold fixed, a block of 3 MiB allocated after one of 4 MiB was freed is mmapped (glibc's dynamic
    threshold would have risen to 4 MiB and put it in the heap)."""
    import ctypes
    import ctypes.util
    import platform

    from radmetrics.inference.scoring.heap import map_large_blocks

    assert map_large_blocks() is (platform.libc_ver()[0] == "glibc")
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("mallinfo2 is glibc 2.33 and later")

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd")] + [
            (name, ctypes.c_size_t) for name in ("usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
        ]

    libc.mallinfo2.restype, libc.malloc.restype = MallInfo2, ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(4 << 20))
    mapped = libc.mallinfo2().hblks
    block = libc.malloc(3 << 20)
    try:
        assert libc.mallinfo2().hblks == mapped + 1
    finally:
        libc.free(block)


def test_a_folder_that_is_not_a_stream_is_refused(tmp_path):
    from radmetrics.inference.files.score_stream import open_stream

    (tmp_path / STREAM_NAME).write_text("not json\n")
    with pytest.raises(OutputPathError, match="is not a radmetrics score stream"):
        open_stream(tmp_path, {"pairs": 1})


def test_a_corpus_level_key_without_per_pair_statistics_is_refused_by_name(tmp_path, monkeypatch):
    import numpy as np

    from radmetrics.inference.metrics.base import Metric, MetricOutput
    from radmetrics.inference.scoring import registry

    class CorpusOnly(Metric):
        name, keys, higher_is_better = "corpus_only", ("corpus_only",), {"corpus_only": True}

        def compute(self, references, candidates):
            values = [float(len(c)) for c in candidates]
            return MetricOutput({"corpus_only": values}, corpus_aggregate={"corpus_only": lambda idx: np.sum(idx)})

    monkeypatch.setitem(registry.REGISTRY, "corpus_only", CorpusOnly)
    write_inputs(tmp_path)
    with pytest.raises(RuntimeError, match="metric corpus_only aggregates corpus_only over the corpus without"):
        stream_run(tmp_path, metrics=("corpus_only",))
