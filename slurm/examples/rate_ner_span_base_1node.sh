#!/bin/bash
# RaTE-NER span model (DeBERTa-v3-base) on one node with DDP.
sbatch --nodes=1 --time=04:00:00 slurm/launch.sbatch rate_ner/span configs/rate_ner/span/base.yaml configs/accelerate/ddp.yaml
