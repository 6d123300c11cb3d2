#!/bin/sh
# The official image's first start, in short: an empty data folder gets a cluster with the named user
# (password authentication from other hosts) and database.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >"$pwfile"
  initdb --username="${POSTGRES_USER:-postgres}" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # As the official image: the database is POSTGRES_DB, or else named after the user.
  db="${POSTGRES_DB:-${POSTGRES_USER:-postgres}}"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\" OWNER \"${POSTGRES_USER:-postgres}\";" |
      postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec "$@" -c listen_addresses='*'
