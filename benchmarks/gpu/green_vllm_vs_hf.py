"""GREEN scoring at scale: vLLM offline (`vllm.LLM`) against Hugging Face `generate`, on the same prompts.

    # a released model
    python benchmarks/gpu/green_vllm_vs_hf.py --model /models/GREEN-RadLlama2-7b --max-new-tokens 512
    # a radmetrics export
    python benchmarks/gpu/green_vllm_vs_hf.py --model exports/green --max-new-tokens 512
    # random 7B-shaped Llama
    python benchmarks/gpu/green_vllm_vs_hf.py --shape 7b --pairs 256
    # random tiny Llama (smoke run)
    python benchmarks/gpu/green_vllm_vs_hf.py --shape tiny --pairs 64

Pairs: IU X-ray reports, each scored against another (as in green_scoring_throughput.py). Prompts as the scorer
builds them: for a released model as `ReleasedGreen` does (RadEval's chat template, the tokenizer's EOS appended,
2,048-token cut; the model in fp16, as RadEval loads it), for an export with `green_messages` and its chat template
(bf16), for a random model as green_scoring_throughput.py does (its model is saved to a temporary folder, under
$TMPDIR, for vLLM; 13.5 GB for the 7b shape). Both engines get the same token ids (vLLM runs without a tokenizer)
and the same dtype, decode greedily with the same new-token budget and stop at EOS; a random model has no EOS and
always uses the whole budget.
HF: batches sorted by length, left-padded, `model.generate` (the repository's scoring path). vLLM: every prompt at
once with its defaults (continuous batching, paged KV cache, automatic prefix caching: the GREEN instructions that
open every prompt are computed once, as they would be when serving). HF runs first and its memory is freed before
vLLM starts (vLLM's engine runs in a spawned process, since CUDA is initialised by then).
Figures: reports/s of each after a warm-up; the share of responses identical token for token, the mean share of
the common prefix, each engine's parse rate and the share of pairs given the same GREEN score. Greedy decoding in
bf16/fp16 can differ between kernels (another reduction order flips a near-tie and everything after it differs);
these shares measure that, nothing is forced equal.
Writes benchmarks/results/green_vllm_vs_hf_<name>.json (or --out). Needs a CUDA GPU and the vllm package.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import random
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARMUP_TOKENS = 8


@dataclass
class Setup:
    model: object  # the HF model; dropped before vLLM starts
    directory: Path  # the folder vLLM loads
    prompts: list[list[int]]
    pad_id: int
    eos_id: int | None  # None: every response uses the whole budget
    tokenizer: object


def require_gpu_and_vllm() -> None:
    import torch

    missing = [
        what
        for what, absent in (
            ("a CUDA GPU", not torch.cuda.is_available()),
            ("the vllm package", importlib.util.find_spec("vllm") is None),
        )
        if absent
    ]
    if missing:
        sys.exit(f"green_vllm_vs_hf: needs {' and '.join(missing)}; nothing was run (vLLM runs on GPUs only)")


def report_pairs(count: int) -> tuple[list[str], list[str]]:
    """`count` IU reports and, as their candidates, `count` other reports in a seeded random order."""
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    reports = [r.text for r in iu_xray_corpus()]
    if 2 * count > len(reports):
        sys.exit(f"green_vllm_vs_hf: the IU corpus has {len(reports)} reports, enough for {len(reports) // 2} pairs")
    references, candidates = reports[:count], reports[count : 2 * count]
    random.Random(0).shuffle(candidates)
    return references, candidates


def export_prompts(tokenizer, references, candidates, prompt: str = "green") -> list[list[int]]:
    """Token ids as generate_green_responses feeds an export: green_messages (the export's prompt) in the chat
    template, no extra specials."""
    from radmetrics.inference.llm.local import render_prompt
    from radmetrics.inference.metrics.green.generation import green_messages

    return [
        tokenizer(render_prompt(tokenizer, green_messages(r, c, prompt=prompt)), add_special_tokens=False)["input_ids"]
        for r, c in zip(references, candidates)
    ]


def model_setup(path: str, references, candidates, trust_remote_code: bool) -> Setup:
    """A released GREEN model (prompts as ReleasedGreen builds them) or a radmetrics export."""
    from radmetrics.inference.loading.checkpoint import load_manifest
    from radmetrics.inference.loading.released import fetch, identify
    from radmetrics.inference.metrics.green.generation import load_green_model
    from radmetrics.inference.metrics.green.metric import released_green

    local = fetch(path)
    directory = load_manifest(local, "green")[0] if identify("green", local) == "export" else local
    released = released_green(path, trust_remote_code, batch_size=8)  # None for radmetrics' own exports
    if released is not None:
        model, tokenizer, prompts = released.model, released.tokenizer, released.prompt_ids(references, candidates)
    else:
        model, tokenizer, prompt = load_green_model(path)
        prompts = export_prompts(tokenizer, references, candidates, prompt)
    pad_id = tokenizer.eos_token_id if tokenizer.pad_token_id is None else tokenizer.pad_token_id
    return Setup(model, Path(directory), prompts, pad_id, tokenizer.eos_token_id, tokenizer)


def random_setup(shape: str, references, candidates, directory: Path) -> Setup:
    """green_scoring_throughput.py's random Llama (no EOS), saved to `directory` for vLLM."""
    from green_scoring_throughput import random_llama  # the sibling script (benchmarks/ is on sys.path)

    model, tokenizer = random_llama(shape)
    model.save_pretrained(directory)
    return Setup(
        model, directory, export_prompts(tokenizer, references, candidates), tokenizer.pad_token_id, None, tokenizer
    )


def until_eos(ids: list[int], eos_id: int | None) -> list[int]:
    return ids[: ids.index(eos_id)] if eos_id is not None and eos_id in ids else ids


def left_pad(prompts: list[list[int]], pad_id: int):
    """(input_ids, attention_mask) of `prompts` left-padded to the longest."""
    import torch

    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    return ids, mask


def hf_generate(
    model, prompts: list[list[int]], pad_id: int, eos_id: int | None, batch_size: int, max_new_tokens: int
) -> list[list[int]]:
    """Greedy new token ids of every prompt (cut before EOS), in batches sorted by length (longest first),
    left-padded."""
    import torch

    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    results: list = [None] * len(prompts)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        ids, mask = left_pad([prompts[i] for i in chunk], pad_id)
        with torch.no_grad():
            output = model.generate(
                input_ids=ids.to(model.device),
                attention_mask=mask.to(model.device),
                do_sample=False,
                max_new_tokens=max_new_tokens,
                pad_token_id=pad_id,
                eos_token_id=eos_id,
            )
        for i, row in zip(chunk, output[:, ids.shape[1] :].tolist()):
            results[i] = until_eos(row, eos_id)
    return results


def synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def run_hf(setup: Setup, batch_size: int, max_new_tokens: int) -> tuple[list[list[int]], float]:
    hf_generate(setup.model, setup.prompts[:batch_size], setup.pad_id, setup.eos_id, batch_size, WARMUP_TOKENS)
    synchronize()
    start = time.perf_counter()
    outputs = hf_generate(setup.model, setup.prompts, setup.pad_id, setup.eos_id, batch_size, max_new_tokens)
    synchronize()
    return outputs, time.perf_counter() - start


def run_vllm(
    setup: Setup, dtype: str, max_new_tokens: int, memory_fraction: float, trust_remote_code: bool
) -> tuple[list[list[int]], float]:
    os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")  # CUDA is initialised: a forked engine would fail
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    llm = LLM(
        model=str(setup.directory),
        dtype=dtype,
        skip_tokenizer_init=True,
        seed=0,
        gpu_memory_utilization=memory_fraction,
        trust_remote_code=trust_remote_code,
    )
    stop = {"ignore_eos": True} if setup.eos_id is None else {"stop_token_ids": [setup.eos_id]}
    prompts = [TokensPrompt(prompt_token_ids=ids) for ids in setup.prompts]
    warmup = [
        TokensPrompt(prompt_token_ids=ids[:32]) for ids in setup.prompts[:8]
    ]  # short: no timed prompt cached whole
    llm.generate(
        warmup, SamplingParams(temperature=0.0, max_tokens=WARMUP_TOKENS, detokenize=False, **stop), use_tqdm=False
    )
    params = SamplingParams(temperature=0.0, max_tokens=max_new_tokens, detokenize=False, **stop)
    start = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    return [until_eos(list(o.outputs[0].token_ids), setup.eos_id) for o in outputs], seconds


def common_prefix(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def agreement(first: list[list[int]], second: list[list[int]]) -> dict:
    """Share of identical responses and mean share of the common prefix (of the longer response)."""
    n = len(first)
    return {
        "identical_share": round(sum(a == b for a, b in zip(first, second)) / n, 4),
        "mean_common_prefix_share": round(
            sum(common_prefix(a, b) / max(len(a), len(b), 1) for a, b in zip(first, second)) / n, 4
        ),
    }


def score_agreement(tokenizer, first: list[list[int]], second: list[list[int]]) -> dict:
    """Parse rates of both engines' decoded responses and the share of pairs with the same GREEN score."""
    from radmetrics.inference.metrics.green.format import parse_green_response

    def parses(outputs):
        return [parse_green_response(tokenizer.decode(ids, skip_special_tokens=True)) for ids in outputs]

    a, b = parses(first), parses(second)
    n = len(a)
    return {
        "hf_parse_rate": round(sum(p.parsed for p in a) / n, 4),
        "vllm_parse_rate": round(sum(p.parsed for p in b) / n, 4),
        "same_green_score_share": round(sum(p.score == q.score for p, q in zip(a, b)) / n, 4),
    }


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model", help="a released GREEN folder, a catalogue name or a radmetrics export (else --shape)"
    )
    parser.add_argument("--shape", default="tiny", choices=["tiny", "7b"], help="random Llama when no --model")
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32, help="HF generate batch size")
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.85, help="vLLM's share of the GPU memory")
    parser.add_argument(
        "--trust-remote-code", action="store_true", help="released models whose tokenizer is repository code"
    )
    parser.add_argument(
        "--out", type=Path, help="result JSON (default benchmarks/results/green_vllm_vs_hf_<name>.json)"
    )
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    require_gpu_and_vllm()
    import gc

    import torch

    references, candidates = report_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as workdir:
        if args.model:
            setup = model_setup(args.model, references, candidates, args.trust_remote_code)
        else:
            setup = random_setup(args.shape, references, candidates, Path(workdir))
        dtype = str(setup.model.dtype).removeprefix("torch.")
        attention = setup.model.config._attn_implementation
        hf, hf_seconds = run_hf(setup, args.batch_size, args.max_new_tokens)
        setup.model = None
        gc.collect()
        torch.cuda.empty_cache()
        vllm_outputs, vllm_seconds = run_vllm(
            setup, dtype, args.max_new_tokens, args.gpu_memory_utilization, args.trust_remote_code
        )
    name = Path(args.model).name if args.model else args.shape
    result = {
        "model": args.model or f"random {args.shape} Llama",
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "command": shlex.join(
            ["python", "benchmarks/gpu/green_vllm_vs_hf.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "versions": versions("torch", "transformers", "vllm"),
        "pairs": args.pairs,
        "max_new_tokens": args.max_new_tokens,
        "dtype": dtype,
        "hf_attention": attention,
        "hf_batch_size": args.batch_size,
        "stops_at_eos": setup.eos_id is not None,
        "hf": engine_figures(hf, hf_seconds),
        "vllm": engine_figures(vllm_outputs, vllm_seconds),
        "vllm_speedup": round(hf_seconds / vllm_seconds, 2),
        **agreement(hf, vllm_outputs),
        **score_agreement(setup.tokenizer, hf, vllm_outputs),
    }
    out = args.out or ROOT / "benchmarks" / "results" / f"green_vllm_vs_hf_{name}.json"
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


def versions(*packages: str) -> dict:
    found = {}
    for package in packages:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def engine_figures(outputs: list[list[int]], seconds: float) -> dict:
    return {
        "seconds": round(seconds, 2),
        "reports_per_s": round(len(outputs) / seconds, 3),
        "new_tokens_per_s": round(sum(map(len, outputs)) / seconds, 1),
        "mean_new_tokens": round(sum(map(len, outputs)) / len(outputs), 1),
    }


if __name__ == "__main__":
    main()
