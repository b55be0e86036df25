#!/usr/bin/env bash
# One task of the array that submit.sh submits: shard K = SLURM_ARRAY_TASK_ID of N of the run
# described by OUT/run.args (one argument a line), with SLURM_CPUS_PER_TASK threads, into
# OUT/shards/K. The CLI's progress goes to stderr, which is this task's Slurm log.
#SBATCH --job-name=attnlab-shard
set -euo pipefail
: "${ATTNLAB:?submit.sh sets ATTNLAB}" "${ATTNLAB_OUT:?submit.sh sets ATTNLAB_OUT}" "${ATTNLAB_TASKS:?submit.sh sets ATTNLAB_TASKS}"
k=${SLURM_ARRAY_TASK_ID:?run this as a Slurm array task}
mapfile -t args < "$ATTNLAB_OUT/run.args"
dir=$ATTNLAB_OUT/shards/$k
rm -rf "$dir"  # a task that was cancelled or failed leaves a partial folder; start it clean
echo "attnlab shard $k/$ATTNLAB_TASKS on $(hostname), ${SLURM_CPUS_PER_TASK:-1} threads: ${args[*]}" >&2
"$ATTNLAB" "${args[@]}" --shard "$k/$ATTNLAB_TASKS" --threads "${SLURM_CPUS_PER_TASK:-1}" --out "$dir"
echo "attnlab shard $k/$ATTNLAB_TASKS done" >&2
