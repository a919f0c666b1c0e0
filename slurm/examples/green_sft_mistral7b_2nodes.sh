#!/bin/bash
# GREEN stage 2 (full fine-tuning, ZeRO-3) on 2 nodes x 8 GPUs; stage 1 first with green_pretrain_*.sh.
sbatch --nodes=2 --time=24:00:00 slurm/launch.sbatch green/sft configs/green/sft/mistral-7b.yaml configs/accelerate/zero3.yaml \
    -- --model_name_or_path checkpoints/green_pretrain_mistral-7b/final
