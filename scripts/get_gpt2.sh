#!/usr/bin/env bash
# Downloads Hugging Face's GPT-2 small (openai-community/gpt2, pinned revision) for the
# [real-weights] golden tests and the CLI, and verifies sizes and SHA-256 checksums.
#
#   scripts/get_gpt2.sh [DIR]        default DIR: ~/.cache/attnlab/gpt2
#   ATTNLAB_GPT2_DIR=DIR ./build_wasm.sh test
#
# Needs internet access to huggingface.co (the build machines here have none).
set -euo pipefail

dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/gpt2}"
revision=607a30d783dfa663caf39e06633721c8d4cfcd7e
base="https://huggingface.co/openai-community/gpt2/resolve/$revision"
# name, size in bytes, sha256 (the values Hugging Face publishes for this revision)
files=(
  "model.safetensors 548105171 248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707"
  "config.json 665 0daed7749b4f02b8f76240d5444551d7b08712dab4d0adb8239c56ba823bb7b4"
)

command -v curl >/dev/null || { echo "get_gpt2: curl is needed (apt-get install curl)" >&2; exit 1; }
command -v sha256sum >/dev/null || { echo "get_gpt2: sha256sum is needed (coreutils)" >&2; exit 1; }
mkdir -p "$dir"

verify() { # file size sha
  [ -f "$1" ] && [ "$(stat -c %s "$1")" = "$2" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$3" ]
}

for entry in "${files[@]}"; do
  read -r name size sha <<< "$entry"
  target="$dir/$name"
  if verify "$target" "$size" "$sha"; then
    echo "get_gpt2: $name already present and verified"
    continue
  fi
  echo "get_gpt2: downloading $name ($size bytes)"
  curl --fail --location --retry 3 --continue-at - --progress-bar -o "$target.part" "$base/$name" || {
    echo "get_gpt2: download of $name failed (no internet access to huggingface.co?)" >&2; exit 1; }
  if ! verify "$target.part" "$size" "$sha"; then
    echo "get_gpt2: $name does not match the published size/SHA-256; removed it" >&2
    rm -f "$target.part"
    exit 1
  fi
  mv "$target.part" "$target"
done
echo "get_gpt2: GPT-2 small is in $dir"
echo "  run the golden tests with: ATTNLAB_GPT2_DIR=$dir ./build_wasm.sh test"
