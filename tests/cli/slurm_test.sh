#!/usr/bin/env bash
# scripts/slurm on a real Slurm: a one-node cluster on localhost (scripts/slurm/local_cluster.sh)
# runs normalizer-swap on AttnLab tiny as a 4-task array and its merge job; the merged files must
# equal a one-process run's byte for byte (the summary apart from its timing). Then a second run
# with one task cancelled (scancel): the merge job must not run, `attnlab merge` must refuse the set
# naming the missing shard, and submit.sh --resume must run that shard alone and complete the set.
# Exit 77 (ctest: Skipped, printed as SKIP) when Slurm cannot start here.
#
#   tests/cli/slurm_test.sh PATH/TO/attnlab
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export ATTNLAB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/attnlab-slurm-XXXXXX)
cluster=$tmp/cluster
cleanup() { "$root/scripts/slurm/local_cluster.sh" stop "$cluster" || true; rm -rf "$tmp"; }
trap cleanup EXIT
set +e
"$root/scripts/slurm/local_cluster.sh" start "$cluster" > "$tmp/env" 2> "$tmp/start.err"
rc=$?
set -e
if [[ $rc == 77 ]]; then echo "SKIP: $(cat "$tmp/start.err")"; exit 77; fi
[[ $rc == 0 ]] || { cat "$tmp/start.err"; exit 1; }
source "$tmp/env"

passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); echo "  ok    $1"; else failed=$((failed + 1)); echo "  FAIL  $1"; fi; }
state() { scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | cut -d= -f2 | paste -sd, -; }
# Waits until no task of job $1 is pending or running (at most $2 s).
wait_done() {
  for _ in $(seq $(($2 * 5))); do
    s=$(state "$1"); [[ -n $s && ! $s =~ PENDING|RUNNING|CONFIGURING|COMPLETING ]] && return 0; sleep 0.2
  done
  echo "  job $1 still '$(state "$1")' after $2 s"; return 1
}
same_as_reference() {
  local ok=0
  for f in normalizer_swap.csv normalizer_swap_layers.csv; do cmp -s "$tmp/ref/$f" "$1/$f" || { echo "  $1/$f differs"; ok=1; }; done
  diff -q <(sed 's/,"timing":{[^}]*}//' "$tmp/ref/normalizer-swap.json") \
          <(sed 's/,"timing":{[^}]*}//' "$1/normalizer-swap.json") >/dev/null || { echo "  $1/normalizer-swap.json differs"; ok=1; }
  return $ok
}

printf 'The cluster ran the swap table one shard at a time, and the merge put it back together.\n' > "$tmp/text.txt"
opts=(-- --max-tokens 12)
"$ATTNLAB" experiment normalizer-swap --model "$root/assets/tiny" --text "$tmp/text.txt" --out "$tmp/ref" --quiet --max-tokens 12 > /dev/null 2>&1
submit() { "$root/scripts/slurm/submit.sh" normalizer-swap --model "$root/assets/tiny" --text "$tmp/text.txt" --tasks 4 "$@"; }

# 1. Four tasks and the merge, straight through.
submit --out "$tmp/run1" "${opts[@]}" > "$tmp/submit1"
merge1=$(awk '$1 == "merge" {print $2}' "$tmp/submit1")
check "submit.sh prints the array's and the merge's job ids" "grep -q '^array [0-9]*: shards 1,2,3,4 of 4' '$tmp/submit1' && [[ -n '$merge1' ]]"
wait_done "$merge1" 90
check "the merge job completes after the array" "[[ \$(state $merge1) == COMPLETED ]]"
check "the merged files equal the one-process run's" "same_as_reference '$tmp/run1'"
check "each task logged its progress to its Slurm log" "grep -q 'attnlab shard 3/4 done' '$tmp/run1/logs/shard-3.log'"

# 2. Held, shard 2 cancelled, released: the merge must not run, and the set is refused.
submit --out "$tmp/run2" --hold "${opts[@]}" > "$tmp/submit2"
array2=$(awk '$1 == "array" {print $2}' "$tmp/submit2" | tr -d :)
merge2=$(awk '$1 == "merge" {print $2}' "$tmp/submit2")
scancel "${array2}_2"
scontrol release "$array2" "$merge2" 2>/dev/null || true
wait_done "$array2" 90
wait_done "$merge2" 30 || true
check "with shard 2 cancelled the merge job does not complete" "[[ \$(state $merge2) != COMPLETED && ! -f '$tmp/run2/normalizer_swap.csv' ]]"
set +e; "$ATTNLAB" merge "$tmp/run2"/shards/* --out "$tmp/run2-merge" 2> "$tmp/refused"; rc=$?; set -e
check "attnlab merge refuses the set, naming shard 2" "[[ $rc == 1 ]] && grep -q 'shard(s) 2 of 4 missing' '$tmp/refused'"

# 3. --resume runs shard 2 alone, then the merge.
submit --out "$tmp/run2" --resume "${opts[@]}" > "$tmp/submit3"
merge3=$(awk '$1 == "merge" {print $2}' "$tmp/submit3")
check "--resume submits only the missing shard" "grep -q '^array [0-9]*: shards 2 of 4' '$tmp/submit3'"
wait_done "$merge3" 90
check "the resumed set merges into the one-process run's files" "[[ \$(state $merge3) == COMPLETED ]] && same_as_reference '$tmp/run2'"

echo "slurm_test: $passed passed, $failed failed"
[[ $failed == 0 ]]
