#!/usr/bin/env bash
# A lint, not a test: the rooms' one-way order (docs/architecture.md), checked on the includes.
#
#   base                      ->  Eigen and the standard library only
#   tokenizer, model          ->  base
#   analysis                  ->  base, model
#   app                       ->  the engine and ImGui; never the platform or an entry point
#     app/plot                ->  the app's seams only (file_export.h, widget_rects.h)
#     app/work                ->  the plot kit's data types, the session; never panels or tours
#     app/panels              ->  plot, work, the session; never tours or the app's top
#     app/tour                ->  anything in app but the app's top (app.h)
#   platform                  ->  never an entry point
#
# Prints each offending include and exits 1 if there is any.
set -u
src="${1:-$(dirname "$0")/../../src}"
bad=0
offend() { # folder, extended regex of forbidden includes, why
  local hits
  hits="$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$src/$1" 2>/dev/null)"
  if [ -n "$hits" ]; then echo "$3:"; echo "$hits"; bad=1; fi
}
ui='imgui|GLFW/|GL/|GLES|emscripten'
offend base "$ui|tokenizer/|model/|analysis/|app/|platform/|main/" "src/base must use only Eigen and the standard library"
offend tokenizer "$ui|model/|analysis/|app/|platform/|main/" "src/tokenizer may use only src/base"
offend model "$ui|tokenizer/|analysis/|app/|platform/|main/" "src/model may use only src/base"
offend analysis "$ui|tokenizer/|app/|platform/|main/" "src/analysis may use only src/base and src/model"
offend app 'GLFW/|GL/|GLES|emscripten|platform/|main/' "src/app must not reach into the platform or the entry points"
offend app/plot 'app/(panels|work|tour)/|app/(app|session|view_state|panel_context)\.h' "src/app/plot is a kit: it must not know the session, panels or tours"
offend app/work 'app/(panels|tour)/|app/app\.h' "src/app/work computes: it must not include panels, tours or the app's top"
offend app/panels 'app/tour/|app/app\.h' "src/app/panels must not include tours or the app's top"
offend app/tour 'app/app\.h' "src/app/tour must not include the app's top"
offend platform 'main/' "src/platform must not include the entry points"
if [ "$bad" = 0 ]; then echo "layers: base -> tokenizer, model -> analysis -> app (plot, work -> panels -> tour -> top) -> platform -> main holds"; fi
exit "$bad"
