#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the service tests and bench (Debian's postgresql package),
# and prints the line to eval: `eval "$(test/service/start-postgres.sh)"`.
# Port and folder: RUNLENS_PG_PORT (default 54329), RUNLENS_PG_DIR (default /tmp/runlens-pg-<port>).
set -euo pipefail
PORT=${RUNLENS_PG_PORT:-54329}
DIR=${RUNLENS_PG_DIR:-/tmp/runlens-pg-$PORT}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$BIN" ]; then
  echo "start-postgres.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2
  exit 2
fi
# The server refuses to run as root: as root, run it as the postgres user the package creates.
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if ! as_owner "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$DIR"
  as_owner "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 >/dev/null
  as_owner "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w start \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300" >/dev/null
fi
echo "export RUNLENS_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PORT/postgres"
