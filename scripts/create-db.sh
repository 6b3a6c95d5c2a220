#!/usr/bin/env bash
# Creates the database named in the URL (first argument) when it does not exist yet.
set -euo pipefail
url=${1:?database url}
name=${url##*/}
name=${name%%\?*}
hostport=${url#*@}
hostport=${hostport%%/*}
host=${hostport%%:*}
port=${hostport##*:}
[ "$port" = "$hostport" ] && port=5432
if ! psql -h "$host" -p "$port" -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
  psql -h "$host" -p "$port" -U postgres -d postgres -qc "CREATE DATABASE \"$name\""
fi
