#!/usr/bin/env bash
# Installs the tools the project's commands need when they are missing: `just` (from PyPI's
# rust-just, a packaged binary; cargo install as a fallback), and for `test` (the default
# argument: the recipe about to run) cargo-machete and cargo-deny.
set -euo pipefail
cd "$(dirname "$0")/.."
recipe=${1:-test}

TOOLS=.tools
if ! command -v just >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/just" ]; then
  echo "bootstrap: installing just" >&2
  if python3 -m venv "$TOOLS" >/dev/null 2>&1 && "$TOOLS/bin/pip" install -q rust-just >/dev/null 2>&1; then
    :
  else
    cargo install --locked --root "$TOOLS" just
  fi
fi
if [ "$recipe" != test ]; then
  exit 0
fi
if ! command -v cargo-machete >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/cargo-machete" ]; then
  echo "bootstrap: installing cargo-machete (unused-dependency check of just test; about a minute to build)" >&2
  cargo install --locked --root "$TOOLS" cargo-machete
fi
if ! command -v cargo-deny >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/cargo-deny" ]; then
  # an unoptimized build: about 1.5 minutes on 2 cores instead of 5 or more, and its check of
  # this workspace still takes seconds
  echo "bootstrap: installing cargo-deny (licence, duplicate and source check of just test; about two minutes to build)" >&2
  cargo install --locked --debug --root "$TOOLS" cargo-deny
fi
