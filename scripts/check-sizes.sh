#!/usr/bin/env bash
# Production source files stay small: at most $MAX_LARGE of them over $LIMIT lines (the lines
# before a file's `#[cfg(test)]`). Shared store suites (`testsuite/`), memory adapters
# (`memory/`, `memory.rs`) and test modules (`tests.rs`, `*_tests.rs`, `tests/`) are not counted.
# Functions are held to 100 lines by clippy (`too_many_lines`, set in each crate's root).
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=400
MAX_LARGE=3
large=$(git ls-files 'crates/*.rs' 'bins/*.rs' \
  | grep -Ev '/(tests|benches|testsuite|memory)/|/memory\.rs$|(^|/|_)tests\.rs$' \
  | while read -r f; do
      n=$(awk '/^#\[cfg\(test\)\]/{exit} {c++} END{print c+0}' "$f")
      if [ "$n" -gt "$LIMIT" ]; then echo "$n $f"; fi
    done | sort -rn)
count=$(printf '%s' "$large" | grep -c . || true)
if [ "$count" -gt "$MAX_LARGE" ]; then
  echo "check-sizes: $count production files are over $LIMIT lines (at most $MAX_LARGE may be); split one by concern:" >&2
  echo "$large" >&2
  exit 1
fi
echo "check-sizes: $count production files over $LIMIT lines (at most $MAX_LARGE)"
