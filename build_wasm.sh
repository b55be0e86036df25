#!/usr/bin/env bash
# AttnLab build driver. One script for people and for CI, so both take the same path.
#
#   ./build_wasm.sh serve     set up, build the web app into dist/ and serve it on 127.0.0.1:8080
#   ./build_wasm.sh build     set up and build the static site into dist/
#   ./build_wasm.sh test      set up, build both targets and run every test suite
#   ./build_wasm.sh sanitize  native unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   ./build_wasm.sh setup     only install what is missing (Debian packages, ImGui sources, npm packages)
#   ./build_wasm.sh clean     remove build/ and dist/ (third_party/ and node_modules/ stay)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
PORT="${PORT:-8080}"

# Debian's emscripten 3.1.6 resolves acorn and friends from Debian's node modules.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"

APT_PACKAGES=(
  build-essential cmake pkg-config dpkg-dev
  emscripten binaryen
  libeigen3-dev libglfw3-dev catch2
  chromium xvfb xauth libgl1-mesa-dri
  firefox-esr webkit2gtk-driver
  fonts-dejavu-core
  libclang-rt-14-dev clang-format
  python3-matplotlib python3-mpmath
  slurm-wlm munge
)

# Each line says when it came (seconds since the start): CI's log then shows where its time went.
say() { printf '\033[1m[attnlab]\033[0m %s (at %d s)\n' "$*" "$SECONDS"; }
die() { printf '\033[1;31m[attnlab] error:\033[0m %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root to run: $*  (install sudo or run as root)"; fi
}

missing_packages() {
  local p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"
  done
  command -v node >/dev/null || echo nodejs
  command -v npm >/dev/null || echo npm
}

APT_UPDATED=0
apt_update_once() {
  if [ "$APT_UPDATED" = 0 ]; then
    say "apt-get update"
    as_root apt-get update -qq
    APT_UPDATED=1
  fi
}

ensure_packages() {
  local missing
  missing="$(missing_packages | tr '\n' ' ')"
  [ -z "${missing// /}" ] && return 0
  say "installing Debian packages: $missing"
  apt_update_once
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  missing="$(missing_packages | tr '\n' ' ')"
  [ -z "${missing// /}" ] || die "packages still missing after install: $missing"
}

# `apt-get source` needs a deb-src entry. Add one that mirrors the machine's own deb entry.
ensure_deb_src() {
  if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then return 0; fi
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f "$f" ]; then
    say "adding a deb-src entry (mirroring $f)"
    # Copy each stanza with Types: deb -> deb-src; keep URIs, suites, components and keyring.
    awk 'BEGIN{RS=""; ORS="\n\n"} /Types:[ \t]*deb/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" \
      | as_root tee /etc/apt/sources.list.d/attnlab-deb-src.sources >/dev/null
  elif [ -f /etc/apt/sources.list ] && grep -qE '^deb ' /etc/apt/sources.list; then
    say "adding deb-src lines (mirroring /etc/apt/sources.list)"
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      | as_root tee /etc/apt/sources.list.d/attnlab-deb-src.list >/dev/null
  else
    die "no Debian apt source found to derive a deb-src entry from"
  fi
  APT_UPDATED=0
}

# Dear ImGui core sources are not in libimgui-dev, so take Debian's source package.
ensure_imgui() {
  local dst="$ROOT/third_party/imgui"
  if [ -f "$dst/imgui.cpp" ] && [ -f "$dst/backends/imgui_impl_glfw.cpp" ]; then return 0; fi
  ensure_deb_src
  apt_update_once
  say "fetching Dear ImGui sources (apt-get source imgui)"
  local tmp="$ROOT/third_party/.imgui-src"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$tmp" && apt-get source -qq imgui >/dev/null) || die "apt-get source imgui failed"
  local src
  src="$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name 'imgui-*' | head -n 1)"
  [ -n "$src" ] && [ -f "$src/imgui.cpp" ] || die "apt-get source imgui produced no imgui.cpp"
  rm -rf "$dst" && mv "$src" "$dst" && rm -rf "$tmp"
  say "ImGui sources in third_party/imgui"
}

# Node packages for the tests (each folder under tests/, or one room below, with a package-lock.json).
ensure_npm() {
  local lock dir stamp
  for lock in "$ROOT"/tests/*/package-lock.json "$ROOT"/tests/*/*/package-lock.json; do
    dir="$(dirname "$lock")"
    stamp="$dir/node_modules/.attnlab-lock"
    if [ -f "$stamp" ] && cmp -s "$lock" "$stamp"; then continue; fi
    say "installing npm packages in ${dir#"$ROOT"/} (npm ci)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in ${dir#"$ROOT"/}"
    cp "$lock" "$stamp"
  done
}

setup() {
  ensure_packages
  ensure_imgui
  ensure_npm
}

configure() { # dir, extra cmake args...
  local dir="$1"; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then cmake -S "$ROOT" -B "$dir" "$@" >/dev/null; fi
}

build_native() {
  say "native build (build/native)"
  configure build/native -DCMAKE_BUILD_TYPE=Release
  cmake --build build/native -j "$JOBS"
}

build_wasm() {
  say "WebAssembly build (build/wasm)"
  if [ ! -f build/wasm/CMakeCache.txt ]; then
    emcmake cmake -S "$ROOT" -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build build/wasm -j "$JOBS"
  # The threaded page (attnlab-mt.*), which index.html picks when the page is cross-origin
  # isolated, and the unit tests once more with its worker pool (run_tests runs the ones that
  # exercise threads).
  say "WebAssembly build with threads (build/wasm-mt)"
  if [ ! -f build/wasm-mt/CMakeCache.txt ]; then
    emcmake cmake -S "$ROOT" -B build/wasm-mt -DCMAKE_BUILD_TYPE=Release -DATTNLAB_WASM_THREADS=ON >/dev/null
  fi
  cmake --build build/wasm-mt -j "$JOBS" --target attnlab attnlab_relaxed attnlab_tests attnlab_tests_relaxed
  # dist/ mirrors the site folders exactly, so that `serve` serves what `build` made.
  rm -rf dist.tmp && cp -r build/wasm/site dist.tmp && cp build/wasm-mt/site/attnlab-mt.* build/wasm-mt/site/attnlab-mt-relaxed.* dist.tmp/ \
    && rm -rf dist && mv dist.tmp dist
  say "static site in dist/ ($(du -sh dist | cut -f1))"
}

build_sanitize() {
  say "native unit tests under ASan + UBSan (build/sanitize)"
  configure build/sanitize -DCMAKE_BUILD_TYPE=Debug -DATTNLAB_SANITIZE=ON
  # Only what its tests run: the panels, the desktop window and the bench are not tested here.
  cmake --build build/sanitize -j "$JOBS" --target attnlab_tests attnlab attnlab_golden_tests
}

# Each suite appends "name|passed|failed|skipped" to $RESULTS; the summary line adds them up.
RESULTS=""
record() { RESULTS="$RESULTS$1|$2|$3|${4:-0}"$'\n'; }

run_ctest() { # label, build dir, ctest's own flags...
  local label="$1" dir="$2" log total failed skipped
  log="$(mktemp)"
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" "${@:3}") | tee "$log" || true
  total="$(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/p' "$log" | tail -n 1)"
  failed="$(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/p' "$log" | tail -n 1)"
  # A skipped test (e.g. the real-weights goldens without the checkpoint) is neither a pass nor a failure.
  skipped="$(grep -c '(Skipped)' "$log" || true)"
  rm -f "$log"
  if [ -z "$total" ]; then record "$label" 0 1; return; fi
  record "$label" "$((total - failed - skipped))" "$failed" "$skipped"
}

run_catch() { # label, test binary (.js), Catch2 test spec, node's own flags...
  local label="$1" log cases failed
  log="$(mktemp)"
  node "${@:4}" "$2" "$3" --use-colour no | tee "$log" || true
  if grep -q "All tests passed" "$log"; then
    cases="$(sed -nE 's/.*All tests passed.* in ([0-9]+) test cases?.*/\1/p' "$log" | tail -n 1)"
    record "$label" "${cases:-0}" 0
  else
    failed="$(sed -nE 's/^test cases:.*\| *([0-9]+) failed.*/\1/p' "$log" | tail -n 1)"
    record "$label" 0 "${failed:-1}"
  fi
  rm -f "$log"
}

summary() {
  local passed=0 failed=0 skipped=0 name p f k
  echo
  say "summary"
  while IFS='|' read -r name p f k; do
    [ -z "$name" ] && continue
    printf '  %-28s %4d passed %4d failed %4d skipped\n' "$name" "$p" "$f" "$k"
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
  done <<< "$RESULTS"
  if [ "$skipped" -gt 0 ]; then echo "attnlab: $passed passed, $failed failed, $skipped skipped"
  else echo "attnlab: $passed passed, $failed failed"; fi
  [ "$failed" -eq 0 ]
}

run_tests() {
  build_native
  run_ctest "native (ctest)" build/native
  build_wasm
  # The unit tests run as one node process per build (label catch-cases), counted by test case.
  run_ctest "wasm under node (ctest)" build/wasm -LE catch-cases
  run_catch "wasm unit tests under node" build/wasm/attnlab_tests.js "~[threads]"
  run_catch "wasm relaxed SIMD under node" build/wasm/attnlab_tests_relaxed.js "~[threads]" \
    --no-experimental-fetch --experimental-wasm-relaxed-simd
  say "the tests that use threads, in the pthreads build (worker pool) under node"
  run_catch "wasm pthreads under node" build/wasm-mt/attnlab_tests.js "[parallel],[gemm],[linear],[gpt2]"
  # The relaxed-SIMD build (attnlab-mt-relaxed.js), which the page loads where the browser has relaxed SIMD.
  run_catch "wasm pthreads relaxed SIMD" build/wasm-mt/attnlab_tests_relaxed.js "[parallel],[gemm],[linear],[gpt2]" \
    --no-experimental-fetch --experimental-wasm-relaxed-simd
  say "browser end-to-end test (headless Chromium)"
  local out="$ROOT/build/e2e" p f
  rm -f "$out/result.txt"
  node tests/e2e/run.mjs --site dist --out "$out" --cli build/native/attnlab || true
  # The test writes "N passed, N failed"; no file means it could not run at all.
  if read -r p _ f _ < "$out/result.txt" 2>/dev/null; then record "browser e2e (checks)" "$p" "$f"
  else record "browser e2e (checks)" 0 1; fi
  say "screenshots in build/e2e/"
  say "Firefox ESR and WebKitGTK smoke test (under Xvfb)"
  out="$ROOT/build/e2e-engines"
  rm -f "$out/result.txt"
  xvfb-run -a -s "-screen 0 1600x1000x24" node tests/e2e/engines.mjs --site dist --out "$out" --cli build/native/attnlab || true
  if read -r p _ f _ < "$out/result.txt" 2>/dev/null; then record "Firefox + WebKit (checks)" "$p" "$f"
  else record "Firefox + WebKit (checks)" 0 1; fi
  summary
}

serve() {
  say "serving dist/ at http://127.0.0.1:$PORT/  (Ctrl-C to stop)"
  exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$ROOT/dist"
}

cmd="${1:-build}"
case "$cmd" in
  setup)    setup ;;
  build)    setup; build_wasm ;;
  serve)    setup; build_wasm; serve ;;
  test)     setup; run_tests ;;
  sanitize)
    setup; build_sanitize
    # Any report fails the test: UBSan aborts (-fno-sanitize-recover), LeakSanitizer is on.
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    run_ctest "native ASan+UBSan (ctest)" build/sanitize; summary ;;
  native)   setup; build_native ;;
  clean)    rm -rf build dist ;;
  *) die "unknown command '$cmd' (use: serve | build | test | sanitize | setup | native | clean)" ;;
esac
