#!/bin/bash
# GREEN stage 2 with LoRA and ZeRO-3 on one node x 8 GPUs (twice the accumulation keeps the 2-node global batch).
sbatch --nodes=1 --time=12:00:00 slurm/launch.sbatch green/sft configs/green/sft/llama-2-7b-lora.yaml configs/accelerate/zero3.yaml \
    -- --gradient_accumulation_steps 16
