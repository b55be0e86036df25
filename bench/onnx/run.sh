#!/usr/bin/env bash
# AttnLab against ONNX Runtime, side by side in one run (bench/RESULTS.md). Developer-time only:
# it needs Debian's python3-torch and python3-onnx (to export the graph) and the npm registry
# (onnxruntime-node and onnxruntime-web); CI never runs it. Extra arguments go to compare.mjs,
# e.g. --lengths 128 --repeats 1 for a quick look. `run.sh --model smollm2 [...]`: the Llama-family
# model of issue 37 (SmolLM2-135M's shape, F32 and BF16), prefill up to L = 4096 and decode.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
OUT=build/bench_onnx
for pkg in python3-torch python3-onnx; do
  dpkg -s "$pkg" >/dev/null 2>&1 || { echo "bench/onnx/run.sh: needs Debian's $pkg (apt-get install $pkg)" >&2; exit 2; }
done
# --ignore-scripts: onnxruntime-node's install script downloads CUDA files; its CPU binaries ship in the package.
[ -d bench/onnx/node_modules ] || (cd bench/onnx && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
./build_wasm.sh native >/dev/null
./build_wasm.sh build >/dev/null
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
cmake --build build/wasm -j 2 --target attnlab_bench attnlab_bench_relaxed >/dev/null
cmake --build build/wasm-mt -j 2 --target attnlab_bench attnlab_bench_relaxed >/dev/null
BUILDS=(--cli build/native/attnlab --native build/native/attnlab_bench --wasm build/wasm/attnlab_bench.js
  --wasm-mt build/wasm-mt/attnlab_bench.js --wasm-relaxed build/wasm/attnlab_bench_relaxed.js
  --wasm-mt-relaxed build/wasm-mt/attnlab_bench_relaxed.js)
if [ "${1:-}" = "--model" ] && [ "${2:-}" = "smollm2" ]; then
  # Issue 37's Llama-family peer: SmolLM2-135M's shape with random weights (the options below are
  # the ones attnlab_bench --model smollm2-135m builds in memory: the same bytes, checked by SHA-256),
  # F32 and the same weights in BF16; the graphs are F32 either way (export_llama.py).
  shape=(--arch llama --layers 30 --heads 9 --kv-heads 3 --embd 576 --head-dim 64 --intermediate 1536 --vocab 49152
    --positions 8192 --tied 1)
  mkdir -p "$OUT/llama-f32" "$OUT/llama-bf16"
  [ -f "$OUT/llama-f32/model.safetensors" ] || build/native/attnlab random-checkpoint "${shape[@]}" --out "$OUT/llama-f32"
  [ -f "$OUT/llama-bf16/model.safetensors" ] || build/native/attnlab random-checkpoint "${shape[@]}" --dtype bf16 --out "$OUT/llama-bf16"
  [ -f "$OUT/llama.onnx" ] || /usr/bin/python3 bench/onnx/export_llama.py "$OUT/llama-f32" "$OUT/llama.onnx"
  [ -f "$OUT/llama-decode.onnx" ] || /usr/bin/python3 bench/onnx/export_llama.py "$OUT/llama-f32" "$OUT/llama-decode.onnx" --decode
  exec node bench/onnx/compare.mjs --onnx "$OUT/llama.onnx" --onnx-decode "$OUT/llama-decode.onnx" --checkpoint "$OUT/llama-f32" \
    --checkpoint-bf16 "$OUT/llama-bf16" --decode 32 "${BUILDS[@]}" "$@"
fi
mkdir -p "$OUT/ckpt"
[ -f "$OUT/ckpt/model.safetensors" ] || build/native/attnlab random-checkpoint --out "$OUT/ckpt"
[ -f "$OUT/gpt2.onnx" ] || /usr/bin/python3 bench/onnx/export_gpt2.py "$OUT/ckpt" "$OUT/gpt2.onnx"
exec node bench/onnx/compare.mjs --onnx "$OUT/gpt2.onnx" --checkpoint "$OUT/ckpt" "${BUILDS[@]}" "$@"
