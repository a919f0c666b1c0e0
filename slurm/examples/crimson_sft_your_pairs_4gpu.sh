#!/bin/bash
# A CRIMSON evaluator (MedGemma-4B, LoRA) on your own pairs, on one shared node with 4 GPUs:
#   radmetrics data annotate --format crimson --pairs my_pairs.csv --reference-field findings+impression \
#       --candidate-field generated --endpoint configs/llm/openai_gpt4o.yaml --out data/my_crimson
#   radmetrics rehearse configs/crimson/sft/medgemma-4b-lora.yaml -- --annotations_dir data/my_crimson
sbatch --partition="${PARTITION:?set PARTITION}" --account="${ACCOUNT:?set ACCOUNT}" --gpus-per-node=4 \
    --cpus-per-task=32 --time=24:00:00 \
    slurm/launch.sbatch crimson/sft configs/crimson/sft/medgemma-4b-lora.yaml configs/accelerate/zero3.yaml \
    -- --annotations_dir data/my_crimson
