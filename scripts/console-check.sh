#!/usr/bin/env bash
# The console's code (crates/api-http/console/, served as written: no build step): type-checks
# its ES modules with TypeScript's checker (`// @ts-check` and the JSDoc types of types.js) and
# checks their formatting with Prettier. Both come from the npm registry at the versions
# package-lock.json pins, into scripts/console/node_modules; `just run` never needs them.
set -euo pipefail
cd "$(dirname "$0")/console"
if ! command -v npm >/dev/null; then
  echo "console-check: npm is missing (Node.js and npm from Debian's packages: apt-get install nodejs npm)" >&2
  exit 1
fi
if [ ! -x node_modules/.bin/tsc ] || [ ! -x node_modules/.bin/prettier ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node_modules/.bin/tsc -p tsconfig.json
node_modules/.bin/prettier --config .prettierrc.json --check --log-level warn \
  ../../crates/api-http/console/*.js ../../crates/api-http/console/*.css
echo "console-check: types and formatting of the console's modules hold"
