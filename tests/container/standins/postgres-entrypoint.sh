#!/bin/sh
# The stand-in postgres image's entrypoint (postgres.Dockerfile): first start initialises.
set -eu
: "${POSTGRES_PASSWORD:?the postgres image needs POSTGRES_PASSWORD}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ "$(id -u)" = 0 ]; then
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  exec runuser -u postgres -- "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  # the init server: local socket only, as the public image's
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  if [ "$db" != postgres ]; then psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -qc "CREATE DATABASE \"$db\""; fi
  pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
fi
exec "$@" -c listen_addresses='*'
