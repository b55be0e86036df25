#!/usr/bin/env bash
# The layers' one-way dependency, checked on the sources:
#   base, tokenizer, model, analysis  ->  Eigen and the standard library only
#   app              ->  may use ImGui, never the platform or an entry point
#   platform         ->  never an entry point
# Prints each offending include and exits 1 if there is any.
set -u
src="${1:-$(dirname "$0")/../../src}"
bad=0
offend() { # folder, extended regex of forbidden includes, why
  local hits
  hits="$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$src/$1" 2>/dev/null)"
  if [ -n "$hits" ]; then echo "$3:"; echo "$hits"; bad=1; fi
}
for core in base tokenizer model analysis; do
  offend "$core" 'imgui|GLFW/|GL/|GLES|emscripten|app/|platform/|main/' "src/$core must use only Eigen and the standard library"
done
offend app 'GLFW/|GL/|GLES|emscripten|platform/|main/' "src/app must not reach into the platform or the entry points"
offend platform 'main/' "src/platform must not include the entry points"
if [ "$bad" = 0 ]; then echo "layers: model/analysis -> app -> platform -> main holds"; fi
exit "$bad"
