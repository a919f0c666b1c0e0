#!/bin/bash
# RaTE-NER (IOB, DeBERTa-v3-base) on your own entity labels, on one shared node with 4 GPUs:
#   radmetrics data import conll my_reports.conll --out data/my_ner   # --labels-from-data: types beyond the five
#   radmetrics rehearse configs/rate_ner/iob/base.yaml -- --silver_dir data/my_ner   # checks them, then a CPU rehearsal
sbatch --partition="${PARTITION:?set PARTITION}" --account="${ACCOUNT:?set ACCOUNT}" --gpus-per-node=4 \
    --cpus-per-task=32 --time=04:00:00 \
    slurm/launch.sbatch rate_ner/iob configs/rate_ner/iob/base.yaml configs/accelerate/ddp.yaml \
    -- --silver_dir data/my_ner
