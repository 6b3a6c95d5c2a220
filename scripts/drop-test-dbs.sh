#!/usr/bin/env bash
# Drops databases left by earlier test runs (each test makes its own `stowage_test_*`).
set -euo pipefail
psql -h "${PGHOST:-127.0.0.1}" -U postgres -d postgres -Atqc \
  "SELECT datname FROM pg_database WHERE datname LIKE 'stowage\_test\_%'" |
  while read -r db; do
    [ -n "$db" ] && psql -h "${PGHOST:-127.0.0.1}" -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"
  done
