#!/bin/bash
# Submit slurm/launch.sbatch with the cluster resources given on the command line or in the environment.
#
#   slurm/submit.sh [--nodes N] [--gpus-per-node G] [--cpus-per-task C] [--partition P] [--account A] [--time T]
#                   [--exclusive] RECIPE CONFIG [ACCELERATE_CONFIG] [-- recipe overrides]
#
# Each flag falls back to a variable, then to a default:
#   --nodes          RADMETRICS_SLURM_NODES          1
#   --gpus-per-node  RADMETRICS_SLURM_GPUS_PER_NODE  8 (also the processes per node: accelerate's GPUS_PER_NODE)
#   --cpus-per-task  RADMETRICS_SLURM_CPUS_PER_TASK  64 (one task per node: the node's CPUs for the run)
#   --partition      RADMETRICS_SLURM_PARTITION      the cluster's default partition
#   --account        RADMETRICS_SLURM_ACCOUNT        your default account
#   --time           RADMETRICS_SLURM_TIME           the partition's default time limit
#   --exclusive      RADMETRICS_SLURM_EXCLUSIVE=1    not exclusive (other jobs may share the node's free GPUs)
# SBATCH (default: sbatch) is the command that submits; every other sbatch flag can go in SBATCH_EXTRA_ARGS.
set -euo pipefail

usage() {
    sed -n '4,5p' "$0" | sed 's/^# *//' >&2
    exit 2
}
nodes=${RADMETRICS_SLURM_NODES:-1}
gpus=${RADMETRICS_SLURM_GPUS_PER_NODE:-8}
cpus=${RADMETRICS_SLURM_CPUS_PER_TASK:-64}
partition=${RADMETRICS_SLURM_PARTITION:-}
account=${RADMETRICS_SLURM_ACCOUNT:-}
time_limit=${RADMETRICS_SLURM_TIME:-}
exclusive=${RADMETRICS_SLURM_EXCLUSIVE:-0}
while [ "$#" -gt 0 ]; do
    case "$1" in
        --exclusive) exclusive=1; shift; continue ;;
        --nodes=* | --gpus-per-node=* | --cpus-per-task=* | --partition=* | --account=* | --time=*)
            name=${1%%=*}; value=${1#*=}; shift ;;
        --nodes | --gpus-per-node | --cpus-per-task | --partition | --account | --time)
            [ "$#" -ge 2 ] || { echo "submit.sh: $1 needs a value" >&2; exit 2; }
            name=$1; value=$2; shift 2 ;;
        --help | -h) usage ;;
        --*) echo "submit.sh: unknown option $1 (sbatch's other flags go in SBATCH_EXTRA_ARGS)" >&2; exit 2 ;;
        *) break ;;
    esac
    case "$name" in
        --nodes) nodes=$value ;;
        --gpus-per-node) gpus=$value ;;
        --cpus-per-task) cpus=$value ;;
        --partition) partition=$value ;;
        --account) account=$value ;;
        --time) time_limit=$value ;;
    esac
done
[ "$#" -ge 2 ] || usage
for count in "$nodes" "$gpus" "$cpus"; do
    [[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: '$count' is not a positive count (nodes, GPUs, CPUs)" >&2; exit 2; }
done
case "$exclusive" in 0 | 1) ;; *) echo "submit.sh: RADMETRICS_SLURM_EXCLUSIVE is 0 or 1, not '$exclusive'" >&2; exit 2 ;; esac

flags=(--nodes="$nodes" --gpus-per-node="$gpus" --cpus-per-task="$cpus")
[ -z "$partition" ] || flags+=(--partition="$partition")
[ -z "$account" ] || flags+=(--account="$account")
[ -z "$time_limit" ] || flags+=(--time="$time_limit")
[ "$exclusive" = 0 ] || flags+=(--exclusive)
# shellcheck disable=SC2086  # SBATCH_EXTRA_ARGS is a list of flags
exec env GPUS_PER_NODE="$gpus" "${SBATCH:-sbatch}" "${flags[@]}" ${SBATCH_EXTRA_ARGS:-} \
    "$(dirname "$0")/launch.sbatch" "$@"
