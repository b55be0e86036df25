#!/usr/bin/env bash
# The job that submit.sh makes wait for the array (afterok): joins OUT/shards/* into OUT.
#SBATCH --job-name=attnlab-merge
set -euo pipefail
: "${ATTNLAB:?submit.sh sets ATTNLAB}" "${ATTNLAB_OUT:?submit.sh sets ATTNLAB_OUT}"
"$ATTNLAB" merge "$ATTNLAB_OUT"/shards/* --out "$ATTNLAB_OUT"
