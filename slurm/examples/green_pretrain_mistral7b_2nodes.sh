#!/bin/bash
# GREEN stage 1 (domain-adaptive pretraining, ZeRO-3) on 2 nodes x 8 GPUs.
sbatch --nodes=2 --time=24:00:00 slurm/launch.sbatch green/pretrain configs/green/pretrain/mistral-7b.yaml configs/accelerate/zero3.yaml
