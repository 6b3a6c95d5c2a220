#!/usr/bin/env bash
# Installs the tools the project's commands need when they are missing: `just` (from PyPI's
# rust-just, a packaged binary; cargo install as a fallback), and for `test` (the default
# argument: the recipe about to run) cargo-machete and cargo-deny.
set -euo pipefail
cd "$(dirname "$0")/.."
recipe=${1:-test}

TOOLS=.tools
# `cargo install`, tried a second time when the first fails: a CI run once lost its cargo-deny
# build to the linker dying of a bus error (SIGBUS) while it wrote the binary, which the same
# build does not repeat; a build that really fails fails twice
install() {
  cargo install --locked --root "$TOOLS" "$@" || {
    echo "bootstrap: cargo install $* failed; trying once more" >&2
    cargo install --locked --root "$TOOLS" "$@"
  }
}
if ! command -v just >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/just" ]; then
  echo "bootstrap: installing just" >&2
  if python3 -m venv "$TOOLS" >/dev/null 2>&1 && "$TOOLS/bin/pip" install -q rust-just >/dev/null 2>&1; then
    :
  else
    install just
  fi
fi
if [ "$recipe" != test ]; then
  exit 0
fi
if ! command -v cargo-machete >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/cargo-machete" ]; then
  echo "bootstrap: installing cargo-machete (unused-dependency check of just test; about a minute to build)" >&2
  install cargo-machete
fi
if ! command -v cargo-deny >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/cargo-deny" ]; then
  # an unoptimized build: about 1.5 minutes on 2 cores instead of 5 or more, and its check of
  # this workspace still takes seconds
  echo "bootstrap: installing cargo-deny (licence, duplicate and source check of just test; about two minutes to build)" >&2
  install --debug cargo-deny
fi
