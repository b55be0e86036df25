#!/usr/bin/env bash
# Fuzzes every parser AttnLab applies to outside bytes, with libFuzzer + AddressSanitizer +
# UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh [SECONDS=60] [TARGET=all]
#       TARGET: safetensors | json | tokenizer | tokenizer_json | analyze_input | tour | attention_spec | shard_index | unit_records | all
#
# tokenizer_json feeds Tokenizer::load_json a tokenizer.json and, when it loads, encodes texts.
# analyze_input feeds `attnlab analyze`'s JSON input parser (parse_query_input) and, for small
# accepted inputs, runs the whole per-query analysis and checks its invariants. attention_spec feeds
# the attention plan's text (--attention SPEC) and runs each accepted normalizer on a row of scores.
# unit_records feeds a shard's units.txt (the per-unit records `attnlab merge` reads) and checks that
# accepted records round-trip exactly.
#
# Builds fuzz/<target>_fuzz.cpp with clang into build/fuzz/, seeds a working corpus from the
# committed fuzz/corpus/<target>/, runs each target for SECONDS and exits non-zero if any
# target found a crash, a sanitizer report, a broken invariant (the targets trap), a timeout
# or an out-of-memory. Reproducers land in build/fuzz/artifacts/<target>/; re-run one with
#   build/fuzz/<target>_fuzz build/fuzz/artifacts/<target>/crash-...
# Needs clang (14 on Debian 12) and its libFuzzer runtime, Debian's libclang-rt-14-dev,
# which ./build_wasm.sh setup installs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${1:-60}"
WHICH="${2:-all}"
OUT="$ROOT/build/fuzz"

case "$SECS" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$SECS'" >&2; exit 2 ;; esac
case "$WHICH" in
  all) TARGETS=(safetensors json tokenizer tokenizer_json analyze_input tour attention_spec shard_index llama_config unit_records) ;;
  safetensors|json|tokenizer|tokenizer_json|analyze_input|tour|attention_spec|shard_index|llama_config|unit_records) TARGETS=("$WHICH") ;;
  *) echo "fuzz.sh: unknown target '$WHICH' (safetensors, json, tokenizer, tokenizer_json, analyze_input, tour, attention_spec, shard_index, llama_config, unit_records or all)" >&2; exit 2 ;;
esac

CXX=""
for c in "${FUZZ_CXX:-}" clang++ clang++-14; do
  if [ -n "$c" ] && command -v "$c" >/dev/null; then CXX="$c"; break; fi
done
[ -n "$CXX" ] || { echo "fuzz.sh: clang++ not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }

# Each target links only the sources it exercises: the model and analysis layers have no
# I/O, so nothing else is needed.
sources_for() {
  case "$1" in
    safetensors) echo src/base/safetensors.cpp src/base/json.cpp src/base/utf8.cpp ;;
    json) echo src/base/json.cpp src/base/utf8.cpp ;;
    tokenizer|tokenizer_json) echo src/tokenizer/*.cpp src/base/json.cpp src/base/utf8.cpp ;;
    analyze_input) echo src/analysis/query_analysis.cpp src/analysis/normalizers.cpp src/analysis/selection.cpp \
                        src/analysis/separability.cpp src/analysis/softmax.cpp \
                        src/base/json.cpp src/base/utf8.cpp src/base/random.cpp ;;
    tour) echo src/app/tour/tour.cpp src/app/tour/builtin_tour.cpp src/app/view_state.cpp src/model/attention_plan.cpp src/analysis/normalizers.cpp src/analysis/softmax.cpp \
               src/base/json.cpp src/base/utf8.cpp src/base/random.cpp ;;
    attention_spec) echo src/model/attention_plan.cpp src/model/normalize_rows.cpp ;;
    unit_records) echo src/analysis/unit_slice.cpp ;;
    shard_index) echo src/base/shard_index.cpp src/base/safetensors.cpp src/base/safetensors_shards.cpp src/base/safetensors_write.cpp \
                      src/base/json.cpp src/base/utf8.cpp ;;
    llama_config) echo src/model/llama.cpp src/model/llama_load.cpp src/model/decoder.cpp src/model/checkpoint_tensors.cpp \
                       src/model/random_checkpoint.cpp src/model/linear.cpp src/model/gemm.cpp src/model/gemm_weights.cpp \
                       src/model/weight_matrix.cpp src/model/attention_plan.cpp src/model/normalize_rows.cpp \
                       src/base/safetensors.cpp src/base/safetensors_shards.cpp src/base/safetensors_write.cpp src/base/shard_index.cpp \
                       src/base/json.cpp src/base/utf8.cpp src/base/random.cpp src/base/parallel.cpp ;;
  esac
}

FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer
       "-fsanitize=fuzzer,address,undefined" -fno-sanitize-recover=all
       -Wall -Wextra -Wpedantic -Wshadow -Werror -Isrc -isystem /usr/include/eigen3 "-DATTNLAB_ASSETS_DIR=\"$ROOT/assets\"")

mkdir -p "$OUT"
for t in "${TARGETS[@]}"; do
  bin="$OUT/${t}_fuzz"
  echo "[fuzz] building $bin with $CXX"
  # shellcheck disable=SC2046
  if ! "$CXX" "${FLAGS[@]}" "fuzz/${t}_fuzz.cpp" $(sources_for "$t") -o "$bin" 2>"$OUT/${t}_build.log"; then
    cat "$OUT/${t}_build.log" >&2
    if grep -q "clang_rt.fuzzer\|-lFuzzer\|fuzzer" "$OUT/${t}_build.log"; then
      echo "fuzz.sh: libFuzzer's runtime seems missing: apt-get install libclang-rt-14-dev" >&2
    fi
    exit 2
  fi
done

count_files() { find "$1" -maxdepth 1 -type f | wc -l; }

failed=()
for t in "${TARGETS[@]}"; do
  corpus="$OUT/corpus/$t"       # grows with what libFuzzer finds; the seeds stay untouched
  artifacts="$OUT/artifacts/$t/"
  mkdir -p "$corpus" "$artifacts"
  log="$OUT/${t}_run.log"
  echo "[fuzz] $t: ${SECS}s, seeds fuzz/corpus/$t ($(count_files "fuzz/corpus/$t") files), log $log"
  set +e
  "$OUT/${t}_fuzz" "$corpus" "fuzz/corpus/$t" \
      -dict="fuzz/$t.dict" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
      -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
  speed="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)"
  if [ "$rc" -eq 0 ]; then
    echo "[fuzz] $t: no finding; ${execs:-?} executions (${speed:-?}/s), $cov, corpus $(count_files "$corpus") files"
  else
    failed+=("$t")
    echo "[fuzz] $t: FINDING (libFuzzer exit $rc); reproducer(s):" >&2
    ls "$artifacts" >&2 || true
    grep -E "ERROR|SUMMARY|runtime error|deadly signal|#[0-9]+ 0x" "$log" | head -30 >&2 || true
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "[fuzz] findings in: ${failed[*]}" >&2
  exit 1
fi
echo "[fuzz] all targets ran ${SECS}s with no finding"
