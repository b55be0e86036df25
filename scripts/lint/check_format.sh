#!/usr/bin/env bash
# A lint, not a test: every C++ file is as clang-format (.clang-format) writes it, so that formatting
# is settled by the tool, not in review. Fix with: clang-format -i FILE. Prints the files that differ
# and exits 1 if there is any. The generated Unicode tables are left as the generator writes them.
set -u
root="${1:-$(dirname "$0")/../..}"
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "clang-format not found (apt-get install clang-format)"; exit 2; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
done < <(find src tests bench fuzz -name node_modules -prune -o \( -name '*.cpp' -o -name '*.h' \) -print | grep -v 'src/tokenizer/unicode_classes.cpp' | sort)
if [ "$bad" = 0 ]; then echo "format: every C++ file is as clang-format writes it"; fi
exit "$bad"
