# shellcheck shell=bash
# A throwaway PostgreSQL cluster for the tests; SOURCE it (`source .ci/postgres.sh`).
#
# - installs Debian's postgresql with apt-get only when initdb / pg_ctl cannot be found;
# - initdb (as the `postgres` OS user, trust auth) into a fresh temp dir owned by that user;
# - starts it with pg_ctl on 127.0.0.1 only, on a free port, its unix socket in the temp dir;
# - waits until it accepts connections (pg_isready);
# - exports HANDOVER_POSTGRES_URL=postgresql://postgres@127.0.0.1:<port>/postgres and CI=1;
# - an EXIT trap stops the cluster (pg_ctl stop -m fast) and removes the temp dir.
#
# Try it: bash -c 'source .ci/postgres.sh && psql "$HANDOVER_POSTGRES_URL" -c "select 1"'

_hs_pg_log() { echo "postgres.sh: $*" >&2; }

_hs_pg_find_bin() {
    # initdb and pg_ctl on PATH, else Debian's versioned folder (newest first)
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        return 0
    fi
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
            PATH="$dir:$PATH"
            export PATH
            return 0
        fi
    done
    return 1
}

if ! _hs_pg_find_bin; then
    _hs_pg_log "initdb/pg_ctl not found: installing Debian's postgresql"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends postgresql >/dev/null
    if ! _hs_pg_find_bin; then
        _hs_pg_log "postgresql was installed but initdb/pg_ctl are still missing"
        return 1 2>/dev/null || exit 1
    fi
fi

_hs_pg_as_postgres() {
    # run a command as the postgres OS user (PostgreSQL refuses to run as root)
    if [ "$(id -u)" = "0" ]; then
        (cd / && runuser -u postgres -- env PATH="$PATH" "$@")
    else
        "$@"
    fi
}

HS_PG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/handover-pg.XXXXXX")"
if [ "$(id -u)" = "0" ]; then
    chown postgres:postgres "$HS_PG_DIR"
fi
chmod 700 "$HS_PG_DIR"

_hs_pg_stop() {
    if [ -n "${HS_PG_DIR:-}" ] && [ -d "$HS_PG_DIR" ]; then
        if [ -f "$HS_PG_DIR/data/postmaster.pid" ]; then
            _hs_pg_as_postgres pg_ctl -D "$HS_PG_DIR/data" stop -m fast -w >/dev/null 2>&1 || true
        fi
        rm -rf "$HS_PG_DIR"
    fi
}

# stop the cluster however the shell ends; keep any EXIT trap that was already set
_hs_pg_previous_exit_trap="$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")"
# shellcheck disable=SC2064
trap "_hs_pg_stop${_hs_pg_previous_exit_trap:+; $_hs_pg_previous_exit_trap}" EXIT
case $- in
*i*) ;;  # an interactive shell keeps its own signal handling
*)
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ;;
esac

_hs_pg_as_postgres initdb -D "$HS_PG_DIR/data" --auth=trust -U postgres -E UTF8 --no-locale \
    >"$HS_PG_DIR/initdb.log" 2>&1 || {
    cat "$HS_PG_DIR/initdb.log" >&2
    _hs_pg_log "initdb failed"
    return 1 2>/dev/null || exit 1
}

_hs_pg_started=""
for _hs_pg_try in 1 2 3 4 5; do
    HS_PG_PORT="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()')"
    # a throwaway cluster: durability off for speed (clients still see committed data)
    if _hs_pg_as_postgres pg_ctl -D "$HS_PG_DIR/data" -l "$HS_PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $HS_PG_PORT -k $HS_PG_DIR -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null 2>&1; then
        _hs_pg_started=1
        break
    fi
    _hs_pg_log "start on port $HS_PG_PORT failed (try $_hs_pg_try), retrying"
    _hs_pg_as_postgres pg_ctl -D "$HS_PG_DIR/data" stop -m immediate >/dev/null 2>&1 || true
done
if [ -z "$_hs_pg_started" ]; then
    cat "$HS_PG_DIR/server.log" >&2 2>/dev/null || true
    _hs_pg_log "could not start PostgreSQL"
    return 1 2>/dev/null || exit 1
fi

_hs_pg_ready=""
for _hs_pg_try in $(seq 1 120); do
    if pg_isready -q -h 127.0.0.1 -p "$HS_PG_PORT" -U postgres -d postgres; then
        _hs_pg_ready=1
        break
    fi
    sleep 0.5
done
if [ -z "$_hs_pg_ready" ]; then
    cat "$HS_PG_DIR/server.log" >&2 2>/dev/null || true
    _hs_pg_log "PostgreSQL on 127.0.0.1:$HS_PG_PORT does not accept connections"
    return 1 2>/dev/null || exit 1
fi

export HANDOVER_POSTGRES_URL="postgresql://postgres@127.0.0.1:$HS_PG_PORT/postgres"
export CI=1
_hs_pg_log "PostgreSQL $(postgres --version 2>/dev/null | awk '{print $3}') ready at $HANDOVER_POSTGRES_URL (data in $HS_PG_DIR)"
unset _hs_pg_try _hs_pg_started _hs_pg_ready _hs_pg_previous_exit_trap
