#!/usr/bin/env bash
# A private PostgreSQL server for the tests: its own directory, port and socket, run as an
# unprivileged user (PostgreSQL refuses root), trust authentication on 127.0.0.1 only.
#
#   .ci/postgres.sh start DIR PORT   # initdb on first use, then start; superuser "postgres"
#   .ci/postgres.sh stop DIR
#
# The server binaries are PostgreSQL's newest under /usr/lib/postgresql (or $PG_BIN); where
# there are none, Debian's `postgresql` package is installed. Exit code 3: no binaries and no
# way to install them.
set -euo pipefail

find_bin() {
    if [[ -n "${PG_BIN:-}" && -x "$PG_BIN/initdb" ]]; then echo "$PG_BIN"; return; fi
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

install_server() {
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo -n"
    command -v apt-get >/dev/null || return 1
    $sudo apt-get install -y -q postgresql >/dev/null 2>&1 ||
        { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q postgresql >/dev/null 2>&1; }
}

# Who runs the server: this user, or (as root) an unprivileged system user.
as_server_user() {
    if [[ $(id -u) -ne 0 ]]; then "$@"; return; fi
    local user=postgres
    id "$user" >/dev/null 2>&1 || { user=scale_pg; id "$user" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$user"; }
    runuser -u "$user" -- "$@"
}

command=${1:?usage: postgres.sh start DIR PORT | stop DIR}
dir=${2:?the server directory}

bin=$(find_bin)
if [[ -z "$bin" ]]; then
    install_server || { echo "no PostgreSQL server binaries, and none could be installed" >&2; exit 3; }
    bin=$(find_bin)
    [[ -n "$bin" ]] || { echo "the postgresql package installed no server binaries" >&2; exit 3; }
fi

case "$command" in
start)
    port=${3:?the port}
    mkdir -p "$dir"
    [[ $(id -u) -ne 0 ]] || chown "$(as_server_user id -un)" "$dir"
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        as_server_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
            --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # Durability off: a test server's data is rebuilt from the project's files every run.
    as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
        "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    ;;
stop)
    [[ -f "$dir/data/postmaster.pid" ]] || exit 0
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
*)
    echo "usage: postgres.sh start DIR PORT | stop DIR" >&2
    exit 2
    ;;
esac
