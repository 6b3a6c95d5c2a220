#!/usr/bin/env bash
# The domain crates are pure: no web framework, database driver, object store or async runtime
# may appear among their normal (non-dev) dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for crate in auth-core cdn-core logs-core; do
  tree=$(cargo tree -q -p "$crate" -e normal --prefix none)
  for forbidden in actix-web actix-http actix-rt diesel diesel-async tokio tokio-postgres object_store reqwest hyper; do
    if echo "$tree" | grep -qE "^${forbidden} v"; then
      echo "check-boundaries: $crate depends on $forbidden" >&2
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "check-boundaries: domain crates are free of I/O dependencies"
exit $status
