#!/bin/bash
# GREEN stage 2 (LoRA, ZeRO-3) on your own pairs, on one shared node with 4 GPUs of your partition and account:
#   radmetrics data annotate --pairs my_pairs.csv --reference-field findings+impression --candidate-field generated \
#       --out data/my_annotations              # semantic teacher over findings: train with --prompt findings
#   radmetrics rehearse configs/green/sft/llama-2-7b-lora.yaml -- --pairs_dir data/my_annotations --prompt findings
# Set PARTITION and ACCOUNT (or use slurm/submit.sh with RADMETRICS_SLURM_PARTITION and _ACCOUNT). Accumulating 32
# steps on 4 GPUs keeps the config's 2-node x 8-GPU global batch.
sbatch --partition="${PARTITION:?set PARTITION}" --account="${ACCOUNT:?set ACCOUNT}" --gpus-per-node=4 \
    --cpus-per-task=32 --time=24:00:00 \
    slurm/launch.sbatch green/sft configs/green/sft/llama-2-7b-lora.yaml configs/accelerate/zero3.yaml \
    -- --pairs_dir data/my_annotations --prompt findings --gradient_accumulation_steps 32
