#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for trying mnemon on PostgreSQL, from the
# machine's own binaries (initdb, pg_ctl), on a free loopback port.
#
#   scripts/postgres.sh start [DIR]   # prints the URL to give mnemon
#   scripts/postgres.sh url [DIR]
#   scripts/postgres.sh stop [DIR]    # stops it and deletes DIR
#
# DIR defaults to ${TMPDIR:-/tmp}/mnemon-postgres. Authentication is `trust`
# on 127.0.0.1 only: for trying and testing, not for keeping data.
# initdb refuses to run as root; as root the cluster belongs to the
# `postgres` system user.
set -euo pipefail

cmd=${1:-start}
dir=${2:-${TMPDIR:-/tmp}/mnemon-postgres}

bin=${MNEMON_PG_BIN:-}
if [[ -z "$bin" ]]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
fi
if [[ -z "$bin" ]] && command -v pg_config >/dev/null; then bin=$(pg_config --bindir); fi
if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
  echo "postgres.sh: no PostgreSQL binaries found; install PostgreSQL (apt install postgresql) or set MNEMON_PG_BIN" >&2
  exit 1
fi

as_pg() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() { echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres"; }

case "$cmd" in
  start)
    if [[ -f "$dir/port" ]] && as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      url; exit 0
    fi
    rm -rf "$dir"; mkdir -p "$dir"
    [[ $(id -u) == 0 ]] && chown -R postgres: "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "$port" > "$dir/port"
    printf "\nport = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 400\n" \
      "$port" "$dir" >> "$dir/data/postgresql.conf"
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    url
    ;;
  url) url ;;
  stop)
    if [[ -d "$dir/data" ]]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *) echo "usage: scripts/postgres.sh start|url|stop [DIR]" >&2; exit 2 ;;
esac
