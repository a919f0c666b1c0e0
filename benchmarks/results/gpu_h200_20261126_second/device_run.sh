#!/usr/bin/env bash
# Session 36 device call: install carried wheels, build the full-size look-alikes on CPU cores 8-15 while the GPU runs
# GREEN SFT (phi-2) and GREEN generation (7B) on cores 0-7, then RadCliQ-v1, RadGraph-XL and RaTEScore at 1,000 pairs.
set -uo pipefail
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1 || { cat "$OUT/pip.log"; exit 1; }
cp -r .whl/site/* /tmp/site/
export PYTHONPATH=/tmp/site PYTHON=python3 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false WANDB_MODE=offline PYTHONUNBUFFERED=1
log="$OUT/device.log"
stamp() { echo "=== $(( $(date +%s) - t0 )) s: $*" | tee -a "$log"; }
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc
  python3 -c "import sys, torch, transformers, radmetrics.inference; print(sys.version.split()[0], torch.__version__, transformers.__version__, torch.cuda.get_device_name(0))"; } 2>&1 | tee -a "$log"
stamp setup done
pin() { if command -v taskset > /dev/null; then taskset -c "$@"; else shift; "$@"; fi; }
( cd benchmarks && pin 8-15 python3 -c "from pathlib import Path; from scoring_speed_vs_reference import lookalikes_ready, REPO; lookalikes_ready(REPO / 'checkpoints' / 'lookalikes_full')" > "$OUT/build.log" 2>&1; echo "build exit $? at $(( $(date +%s) - t0 )) s" >> "$OUT/build.log" ) &
build=$!
stamp sft-phi-2
pin 0-7 timeout --kill-after=5 100 python3 benchmarks/sft_throughput.py --shape phi-2 >> "$log" 2>&1; stamp "sft-phi-2 exit $?"
cp benchmarks/results/sft_throughput_phi-2.json "$OUT/" 2>/dev/null
pin 0-7 timeout --kill-after=5 90 python3 benchmarks/green_scoring_throughput.py --shape 7b --pairs 128 --batch-size 32 >> "$log" 2>&1; stamp "green-7b exit $?"
cp benchmarks/results/green_scoring_throughput_7b.json "$OUT/" 2>/dev/null
wait $build; cat "$OUT/build.log" | tail -3 | tee -a "$log"; stamp build waited
r=benchmarks/results/scoring_speed_vs_reference_cuda_radcliq.json
timeout --kill-after=5 200 python3 benchmarks/scoring_speed_vs_reference.py --device cuda --sides --pairs 1000 --metrics radcliq --results $r > "$OUT/radcliq.log" 2>&1; stamp "radcliq exit $?"
cp $r "$OUT/" 2>/dev/null
r=benchmarks/results/scoring_speed_vs_reference_cuda_batched.json
timeout --kill-after=5 $(( 585 - ($(date +%s) - t0) )) python3 benchmarks/scoring_speed_vs_reference.py --device cuda --sides --pairs 1000 --metrics radgraph ratescore --no-profile --results $r > "$OUT/radgraph_ratescore.log" 2>&1; stamp "radgraph ratescore exit $?"
cp $r "$OUT/" 2>/dev/null
