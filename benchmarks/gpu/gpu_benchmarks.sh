#!/usr/bin/env bash
# The GPU benchmarks and the gpu-marked tests, one after another, on a machine with one CUDA GPU.
#
#   bash benchmarks/gpu/gpu_benchmarks.sh OUT [STEP ...]     # STEP: green-distill lookalikes scoring radcliq green-small
#                                                        #       tests green-7b sft-phi-2
#                                                        # (default: all, in that order)
#
# Each step runs under its own time limit, so one that fails or hangs leaves the others their time. Its output goes to
# OUT/gpu_benchmarks.log, its results file is copied into OUT when the step ends if the step wrote it (a step stopped
# early keeps what it wrote; a file left from an earlier run is not copied), and a line per step says how it ended.
# Uses $PYTHON (default python3), which must have radmetrics and its scoring and training dependencies installed.
#   green-distill  benchmarks/green/green_small.py with configs/green/sft/small_semantic_gpu.yaml: GREEN small distilled from the
#                semantic teacher's annotations of every training pair, its test figures against the teacher and its
#                RadPref dev agreement (green and ROUGE-L: the MiniLM weights do not travel). Needs what
#                benchmarks/gpu/gpu_carry.py carries (the pairs, the SmolLM2 GGUF, wheels); $GREEN_DISTILL_ARGS adds recipe
#                arguments (the CPU rehearsal's tiny sizes), $GREEN_DISTILL_LIMIT its limit (default 300 s)
#   lookalikes   builds the full-size look-alikes on the CPU (86 s on 8 of the H200 machine's cores), so that the timed
#                steps' limits do not include it
#   scoring      benchmarks/speed/scoring_speed_vs_reference.py --device cuda --no-profile: CheXbert, RadGraph-XL, RaTEScore and
#                BERTScore on those look-alikes at 1,000 pairs, radmetrics alone, each checked against the CPU on 50 pairs
#   radcliq      the same for RadCliQ-v1, into its own results file, with radmetrics' profile of a third call
#   green-small  benchmarks/gpu/green_scoring_throughput.py --shape smollm2-135m: GREEN small's generation reports/s
#   tests        pytest -m gpu tests/training/test_gpu.py (flash-attn and bitsandbytes tests skip where those are missing)
#   green-7b     the same throughput on a 7B-shaped Llama, 128 pairs at batch 64 (128 runs out of the H200's 140 GB),
#                GREEN's two engines one after the other (generate; continuous batching), with their token agreement
#   sft-phi-2    benchmarks/gpu/sft_throughput.py --shape phi-2: GREEN SFT tokens/s and MFU through the recipe's trainer,
#                the config's options (4 rows a step), then fused AdamW, 8 rows a step and Liger kernels where Liger has
#                them (its check on a fixed batch says; not for Phi)
set -uo pipefail
out="${1:?usage: bash benchmarks/gpu/gpu_benchmarks.sh OUT [STEP ...]}"
shift
[ $# -gt 0 ] || set -- green-distill lookalikes scoring radcliq green-small tests green-7b sft-phi-2
python="${PYTHON:-python3}"
mkdir -p "$out"
log="$out/gpu_benchmarks.log"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false WANDB_MODE=offline PYTHONUNBUFFERED=1

run_step() {  # NAME LIMIT_S RESULTS_FILE COMMAND...
  local name=$1 limit=$2 results=$3 start rc
  shift 3
  start=$(date +%s)
  echo "=== $name: $*" >> "$log"
  timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  if [ -n "$results" ] && [ -f "$results" ] && [ "$(stat -c %Y "$results")" -ge "$start" ]; then cp "$results" "$out/"; fi
  echo "=== $name: exit $rc after $(( $(date +%s) - start )) s (limit $limit s)" | tee -a "$log"
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$python" -c "import sys, torch, transformers; print(sys.version.split()[0], torch.__version__, transformers.__version__, torch.cuda.get_device_name(0))"
} 2>&1 | tee -a "$log"

for step in "$@"; do
  case $step in
    green-distill) run_step green-distill "${GREEN_DISTILL_LIMIT:-300}" benchmarks/results/green_distill_gpu.json \
               "$python" benchmarks/green/green_small.py --teacher semantic --explanation summary \
               --config configs/green/sft/small_semantic_gpu.yaml \
               --radpref --radpref-metrics green rougeL --out checkpoints/bench_green_distill \
               --results benchmarks/results/green_distill_gpu.json ${GREEN_DISTILL_ARGS:+-- $GREEN_DISTILL_ARGS} ;;
    lookalikes) run_step lookalikes 240 "" "$python" -c "import sys; sys.path.insert(0, 'benchmarks/speed')
from scoring_speed_vs_reference import REPO, lookalikes_ready
lookalikes_ready(REPO / 'checkpoints' / 'lookalikes_full')" ;;
    scoring) run_step scoring 300 benchmarks/results/scoring_speed_vs_reference_cuda.json \
               "$python" benchmarks/speed/scoring_speed_vs_reference.py --device cuda --sides --pairs 1000 --no-profile \
               --metrics chexbert radgraph ratescore bertscore ;;
    radcliq) run_step radcliq 240 benchmarks/results/scoring_speed_vs_reference_cuda_radcliq.json \
               "$python" benchmarks/speed/scoring_speed_vs_reference.py --device cuda --sides --pairs 1000 --metrics radcliq \
               --results benchmarks/results/scoring_speed_vs_reference_cuda_radcliq.json ;;
    green-small) run_step green-small 90 benchmarks/results/green_scoring_throughput_smollm2-135m.json \
               "$python" benchmarks/gpu/green_scoring_throughput.py --shape smollm2-135m --pairs 256 --batch-size 64 ;;
    tests) run_step tests 100 "" "$python" -m pytest -q -m gpu -p no:cacheprovider tests/training/test_gpu.py ;;
    green-7b) run_step green-7b 200 benchmarks/results/green_scoring_throughput_7b.json \
               "$python" benchmarks/gpu/green_scoring_throughput.py --shape 7b --pairs 128 --batch-size 64 ;;
    sft-phi-2) run_step sft-phi-2 240 benchmarks/results/sft_throughput_phi-2.json \
               "$python" benchmarks/gpu/sft_throughput.py --shape phi-2 --set per_device_train_batch_size=8 ;;
    *) echo "unknown step $step (green-distill lookalikes scoring radcliq green-small tests green-7b sft-phi-2)" >&2; exit 2 ;;
  esac
done
