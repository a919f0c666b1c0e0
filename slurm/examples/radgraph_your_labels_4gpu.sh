#!/bin/bash
# A RadGraph-style extractor on your own RadGraph annotations, on one shared node with 4 GPUs:
#   radmetrics data import radgraph-json my_radgraph.json --out data/my_radgraph          # or brat ANN_FOLDER
#   radmetrics rehearse configs/radgraph/train/base.yaml -- --silver_dir data/my_radgraph
sbatch --partition="${PARTITION:?set PARTITION}" --account="${ACCOUNT:?set ACCOUNT}" --gpus-per-node=4 \
    --cpus-per-task=32 --time=04:00:00 \
    slurm/launch.sbatch radgraph/train configs/radgraph/train/base.yaml configs/accelerate/ddp.yaml \
    -- --silver_dir data/my_radgraph
