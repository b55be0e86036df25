#!/usr/bin/env bash
# AttnLab against ONNX Runtime, side by side in one run (bench/RESULTS.md). Developer-time only:
# it needs Debian's python3-torch and python3-onnx (to export the graph) and the npm registry
# (onnxruntime-node and onnxruntime-web); CI never runs it. Extra arguments go to compare.mjs,
# e.g. --lengths 128 --repeats 1 for a quick look.
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
mkdir -p "$OUT/ckpt"
[ -f "$OUT/ckpt/model.safetensors" ] || build/native/attnlab random-checkpoint --out "$OUT/ckpt"
[ -f "$OUT/gpt2.onnx" ] || /usr/bin/python3 bench/onnx/export_gpt2.py "$OUT/ckpt" "$OUT/gpt2.onnx"
exec node bench/onnx/compare.mjs --onnx "$OUT/gpt2.onnx" --checkpoint "$OUT/ckpt" --cli build/native/attnlab \
  --native build/native/attnlab_bench --wasm build/wasm/attnlab_bench.js --wasm-mt build/wasm-mt/attnlab_bench.js \
  --wasm-relaxed build/wasm/attnlab_bench_relaxed.js --wasm-mt-relaxed build/wasm-mt/attnlab_bench_relaxed.js "$@"
