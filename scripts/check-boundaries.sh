#!/usr/bin/env bash
# The layering of the workspace (docs/architecture.md), proven on the dependency graph:
# - the domain crates (auth-core, cdn-core, logs-core) are pure: no web framework, database
#   driver, object store or async runtime among their normal dependencies, and no crate of the
#   layers above them (adapters, HTTP glue, hosts, tools);
# - the operations (stow-ops) are as pure: they depend on the cores only, never on an adapter,
#   the HTTP glue, a host or a tool;
# - the adapters (stow-db, stow-objects, stow-images) use no web framework and no host;
# - the two hosts (api-http for cdn-api, logs-http for logs-api) do not depend on each other.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
refuse() {
  local crate=$1
  shift
  local tree
  tree=$(cargo tree -q -p "$crate" -e normal --prefix none)
  for forbidden in "$@"; do
    if echo "$tree" | grep -qE "^${forbidden} v"; then
      echo "check-boundaries: $crate depends on $forbidden" >&2
      status=1
    fi
  done
}

io="actix-web actix-http actix-rt diesel diesel-async tokio tokio-postgres object_store reqwest hyper"
upper="stow-db stow-objects stow-http api-http logs-http stow-admin"
for crate in auth-core cdn-core logs-core; do
  # shellcheck disable=SC2086
  refuse "$crate" $io $upper stow-ops
done
# the operations are protocol-free like the cores: no I/O, and nothing of the front ends
# shellcheck disable=SC2086
refuse stow-ops $io $upper
for crate in stow-db stow-objects stow-images stow-alerts; do
  refuse "$crate" actix-web actix-http stow-http api-http logs-http stow-admin
done
refuse api-http logs-http
refuse logs-http api-http
[ $status -eq 0 ] && echo "check-boundaries: domain crates and operations are pure, adapters have no web framework, the hosts are apart"
exit $status
