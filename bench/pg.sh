#!/usr/bin/env bash
# bench/pg.sh start|stop DIR PORT - a throwaway PostgreSQL for the sb-task-pg benchmark row:
# Debian's server binaries (crates/switchboard-store-postgres/install-postgres.sh installs
# them), initdb in DIR as the `postgres` user, listening on 127.0.0.1:PORT only, fsync on.
# `start` prints the database URL on stdout.
set -euo pipefail
cmd=$1 dir=$2 port=$3
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "no PostgreSQL server binaries; run crates/switchboard-store-postgres/install-postgres.sh" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $cmd in
  start)
    mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 ${PGOPTS:-}" start >/dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres bench
    echo "postgres://postgres@127.0.0.1:$port/bench" ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop DIR PORT" >&2; exit 2 ;;
esac
