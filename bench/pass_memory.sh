#!/usr/bin/env bash
# Peak memory of what the page does on a pass, natively: `attnlab perplexity --capture` runs the
# forward pass keeping what the page keeps of it (every layer's queries, keys and values) and then
# the text's perplexity, and /usr/bin/time -v reports the process's peak RSS. Random BF16
# checkpoints of SmolLM2-135M's and Qwen2.5-0.5B's shapes at 1,024-8,192 tokens, and GPT-2 small
# (F32, as the built-in models) at 1,024. Not a timed test: the numbers go to bench/RESULTS.md.
#
#   bench/pass_memory.sh [build/native/attnlab] [WORKDIR]
#
# Random ids stand in for a text (the pass's memory does not depend on which tokens they are).
set -euo pipefail
cli=${1:-build/native/attnlab}
work=${2:-build/bench-pass-memory}
lengths=${LENGTHS:-"1024 2048 4096 8192"}
mkdir -p "$work"

checkpoint() {  # NAME ARGS...: a random checkpoint, made once
  local name=$1
  shift
  [[ -f $work/$name/config.json ]] || { mkdir -p "$work/$name" && "$cli" random-checkpoint --out "$work/$name" "$@" > /dev/null; }
}
checkpoint smollm2-135m --arch llama --layers 30 --heads 9 --kv-heads 3 --embd 576 --head-dim 64 --intermediate 1536 \
  --vocab 49152 --positions 8192 --tied 1 --dtype bf16
checkpoint qwen2.5-0.5b --arch qwen2 --layers 24 --heads 14 --kv-heads 2 --embd 896 --head-dim 64 --intermediate 4864 \
  --vocab 151936 --positions 8192 --tied 1 --dtype bf16
checkpoint gpt2-small --arch gpt2 --layers 12 --heads 12 --embd 768 --positions 1024 --vocab 50257

ids() {  # N VOCAB: N random ids below VOCAB, comma-separated
  python3 -c "import random,sys; r=random.Random(1); print(','.join(str(r.randrange($2)) for _ in range($1)))"
}

peak() {  # NAME VOCAB N: one row of the table
  local name=$1 vocab=$2 n=$3
  ids "$n" "$vocab" > "$work/ids-$n-$vocab.txt"
  local log="$work/time-$name-$n.txt"
  /usr/bin/time -v "$cli" perplexity --model "$work/$name" --ids "$(cat "$work/ids-$n-$vocab.txt")" --capture --json \
    > "$work/out-$name-$n.json" 2> "$log"
  local kb secs
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
  printf '| %-13s | %5d | %8.0f MB | %s |\n' "$name" "$n" "$(echo "$kb / 1024" | bc -l)" "$secs"
}

echo "| model         | L     | peak RSS    | wall |"
echo "|---|---|---|---|"
for n in $lengths; do peak smollm2-135m 49152 "$n"; done
for n in $lengths; do peak qwen2.5-0.5b 151936 "$n"; done
peak gpt2-small 50257 1024
