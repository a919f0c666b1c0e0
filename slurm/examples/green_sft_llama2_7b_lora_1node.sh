#!/bin/bash
# GREEN stage 2 with LoRA and ZeRO-3 CPU offload on one node.
sbatch --nodes=1 --time=12:00:00 slurm/launch.sbatch green/sft configs/green/sft/llama-2-7b-lora.yaml configs/accelerate/zero3_offload.yaml
