#!/usr/bin/env bash
# Prints a Postgres URL the tests may use (they create their own databases).
#
# 1. $RELAY_TEST_POSTGRES_URL if it answers;
# 2. a server on 127.0.0.1:5432 (trust auth, user postgres) if one answers;
# 3. otherwise a throwaway cluster: installs PostgreSQL with apt when missing,
#    initdb into $HOME/.cache/relay-pg (as user postgres when run as root),
#    starts it on 127.0.0.1:55432 and prints its URL.
set -euo pipefail
log() { echo "postgres.sh: $*" >&2; }
answers() { psql "$1" -tAc 'select 1' >/dev/null 2>&1; }

if [[ -n ${RELAY_TEST_POSTGRES_URL:-} ]] && answers "$RELAY_TEST_POSTGRES_URL"; then
    echo "$RELAY_TEST_POSTGRES_URL"; exit 0
fi
if command -v psql >/dev/null && answers "postgres://postgres@127.0.0.1:5432/postgres"; then
    echo "postgres://postgres@127.0.0.1:5432/postgres"; exit 0
fi

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
if [[ -z $bindir ]]; then
    log "installing postgresql"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
    bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
fi
data=${RELAY_PG_DIR:-$HOME/.cache/relay-pg}
port=55432
url="postgres://postgres@127.0.0.1:$port/postgres"
answers "$url" && { echo "$url"; exit 0; }
run=()
if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || useradd --system postgres
    run=(runuser -u postgres --)
fi
if [[ ! -f $data/PG_VERSION ]]; then
    mkdir -p "$data"; [[ ${#run[@]} -gt 0 ]] && chown postgres "$data"
    "${run[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust >&2
fi
[[ ${#run[@]} -gt 0 ]] && chown -R postgres "$data"
"${run[@]}" "$bindir/pg_ctl" -D "$data" -o "-p $port -k /tmp -c listen_addresses=127.0.0.1" -l "$data/log" -w start >&2
echo "$url"
