#!/bin/bash
# A CheXbert-style labeler (bert-base) on your own CheXpert-style labels, on one shared node with 4 GPUs:
#   radmetrics data import chexpert-csv my_labels.csv --out data/my_chexpert
#   radmetrics rehearse configs/chexbert/finetune/base.yaml -- --silver_dir data/my_chexpert
sbatch --partition="${PARTITION:?set PARTITION}" --account="${ACCOUNT:?set ACCOUNT}" --gpus-per-node=4 \
    --cpus-per-task=32 --time=04:00:00 \
    slurm/launch.sbatch chexbert/finetune configs/chexbert/finetune/base.yaml configs/accelerate/ddp.yaml \
    -- --silver_dir data/my_chexpert
