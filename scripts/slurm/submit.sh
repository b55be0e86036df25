#!/usr/bin/env bash
# Submits an attnlab experiment to Slurm as a job array of N shards and a merge job that runs
# after every shard succeeded (afterok), and prints the two job ids. No scheduler of our own:
# Slurm runs, retries and accounts the tasks.
#
#   scripts/slurm/submit.sh EXPERIMENT --model M --text T [--text T2 ...] --out DIR --tasks N
#       [--resume] [sbatch options...] [-- experiment options...]
#
# Shard K writes DIR/shards/K (and its log DIR/logs/shard-K.log), the merge writes the files of
# the run without --shard into DIR. --resume submits only the shards without a finished folder
# (DIR/shards/K/shard.json), then the merge. The CLI is $ATTNLAB, or build/native/attnlab in
# this checkout. Each task uses SLURM_CPUS_PER_TASK threads (sbatch's --cpus-per-task).
set -euo pipefail
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 1 && $1 != -* ]] || usage
experiment=$1; shift
model= out= tasks= resume=0 texts=() sbatch_opts=() extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --model) model=${2:?--model needs a file}; shift 2 ;;
    --text) texts+=("${2:?--text needs a path}"); shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --tasks) tasks=${2:?--tasks needs a number}; shift 2 ;;
    --resume) resume=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) sbatch_opts+=("$1"); shift ;;
  esac
done
[[ -n $model && -n $out && -n $tasks && ${#texts[@]} -gt 0 ]] || { echo "submit.sh: --model, --text, --out and --tasks are required" >&2; usage; }
[[ $tasks =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --tasks wants a whole number >= 1, got '$tasks'" >&2; exit 2; }
attnlab=${ATTNLAB:-$here/../../build/native/attnlab}
[[ -x $attnlab ]] || { echo "submit.sh: no attnlab CLI at $attnlab (build it, or set ATTNLAB)" >&2; exit 1; }
attnlab=$(cd "$(dirname "$attnlab")" && pwd)/$(basename "$attnlab")
abs() { [[ $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
mkdir -p "$out/shards" "$out/logs"; out=$(cd "$out" && pwd)

# The run, one argument a line; tasks read it, so every shard runs the same command.
args=(experiment "$experiment" --model "$(abs "$model")")
for t in "${texts[@]}"; do args+=(--text "$(abs "$t")"); done
args+=(--quiet "${extra[@]}")
printf '%s\n' "${args[@]}" > "$out/run.args.new"
if [[ -f $out/run.args ]] && ! cmp -s "$out/run.args" "$out/run.args.new"; then
  [[ $resume == 1 ]] && { rm -f "$out/run.args.new"; echo "submit.sh: $out holds another run (its run.args differ); --resume needs the same command" >&2; exit 1; }
  rm -rf "$out/shards"/*  # a new run in the folder: the old shards do not belong to it
fi
mv "$out/run.args.new" "$out/run.args"
echo "$tasks" > "$out/tasks"

todo=()
for k in $(seq 1 "$tasks"); do
  [[ $resume == 1 && -f $out/shards/$k/shard.json ]] || todo+=("$k")
done
export ATTNLAB=$attnlab ATTNLAB_OUT=$out ATTNLAB_TASKS=$tasks
dependency=()
if [[ ${#todo[@]} -gt 0 ]]; then
  list=$(IFS=,; echo "${todo[*]}")
  array_id=$(sbatch --parsable --export=ALL --array="$list" --output="$out/logs/shard-%a.log" "${sbatch_opts[@]}" "$here/shard_task.sh")
  array_id=${array_id%%;*}
  echo "array $array_id: shards $list of $tasks"
  dependency=(--dependency="afterok:$array_id" --kill-on-invalid-dep=yes)
else
  echo "array: none (every shard of $tasks has finished)"
fi
merge_id=$(sbatch --parsable --export=ALL "${dependency[@]}" --output="$out/logs/merge.log" "${sbatch_opts[@]}" "$here/merge_task.sh")
echo "merge ${merge_id%%;*}"
