#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on 127.0.0.1:5432 (trust auth), starting the machine's
# cluster when none does, and installing PostgreSQL from Debian's packages when none exists.
set -euo pipefail

HOST=${PGHOST:-127.0.0.1}
PORT=${PGPORT:-5432}

ready() { pg_isready -q -h "$HOST" -p "$PORT" 2>/dev/null; }

if command -v pg_isready >/dev/null && ready; then
  exit 0
fi

if ! command -v pg_ctlcluster >/dev/null || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
  echo "ensure-postgres: installing PostgreSQL (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql postgresql-contrib >/dev/null
fi

version=$(ls /etc/postgresql | sort -V | tail -n 1)
hba=/etc/postgresql/$version/main/pg_hba.conf
# local development and CI use trust auth on loopback, as the machine image does
if [ -f "$hba" ] && ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$hba"
fi
echo "ensure-postgres: starting cluster $version/main" >&2
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true

for _ in $(seq 1 60); do
  if ready; then
    exit 0
  fi
  sleep 0.5
done
echo "ensure-postgres: PostgreSQL did not come up on $HOST:$PORT" >&2
exit 1
