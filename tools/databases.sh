#!/usr/bin/env bash
# Starts a PostgreSQL and a MariaDB server for the integration tests, unless they already answer.
# Both come from Debian (tools/system_packages.sh, run by npm test, installs them) and keep their
# data in a private folder, on ports of their own, so a system server is never touched:
#   PostgreSQL  postgres://thaw:thaw-secret@127.0.0.1:54329/thaw
#   MariaDB     mysql://thaw:thaw-secret@127.0.0.1:33069/thaw
# The user thaw may create databases (the tests make one each) and set PostgreSQL's
# deadlock_timeout on them. The user thaw_writer (same password) is a deploy user that may only read
# and write rows: PostgreSQL's tests grant it that per table, MariaDB grants it on every thaw*
# database here.
#   tools/databases.sh start   start both (idempotent) and wait until they take connections
#   tools/databases.sh stop    stop the servers this script started
set -euo pipefail
root="${THAW_DB_HOME:-/tmp/thaw-databases}"
pg_port=54329
my_port=33069

# The servers refuse to run as root: as root they run as their own Debian users.
as() { if [ "$(id -u)" = 0 ]; then runuser -u "$1" -- "${@:2}"; else "${@:2}"; fi; }
owner() { if [ "$(id -u)" = 0 ]; then echo "$1"; else id -un; fi; }
need() { command -v "$1" >/dev/null || { echo "databases: $1 not found; install $2 (apt-get install $2)" >&2; exit 1; }; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
pg_up() { "$(pg_bin)/pg_isready" -q -h 127.0.0.1 -p "$pg_port"; }
my_up() { mariadb-admin --no-defaults -h 127.0.0.1 -P "$my_port" -u thaw -pthaw-secret ping >/dev/null 2>&1; }

# Idempotent, so that a server an earlier version of this script started gets the users too. A
# server started some other way is left as it is: without thaw_writer, its tests fail saying so.
no_users() { echo "databases: could not add thaw_writer to the $1 server on $2 (not started by this script?)" >&2; }

pg_users() {
  as postgres "$(pg_bin)/psql" -q -h "$root/postgres" -p "$pg_port" -U postgres -d postgres -c "
    DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'thaw_writer') THEN
        CREATE ROLE thaw_writer LOGIN PASSWORD 'thaw-secret';
      END IF;
    END \$\$;" >/dev/null || no_users PostgreSQL "$pg_port"
  # A test that makes hundreds of deadlocks on purpose breaks them after milliseconds, not the
  # server's second (ALTER DATABASE on its own database); the setting is a superuser's otherwise.
  as postgres "$(pg_bin)/psql" -q -h "$root/postgres" -p "$pg_port" -U postgres -d postgres \
    -c "GRANT SET ON PARAMETER deadlock_timeout TO thaw" >/dev/null ||
    echo "databases: could not let thaw set deadlock_timeout on the PostgreSQL server on $pg_port" >&2
}

my_users() {
  mariadb --no-defaults -S "$root/mariadb/mysqld.sock" -u "$(id -un)" -e "
    CREATE USER IF NOT EXISTS 'thaw_writer'@'%' IDENTIFIED BY 'thaw-secret';
    GRANT SELECT, INSERT, UPDATE, DELETE ON \`thaw%\`.* TO 'thaw_writer'@'%';" || no_users MariaDB "$my_port"
}

start_postgres() {
  [ -n "$(pg_bin)" ] || { echo "databases: PostgreSQL not found; install postgresql (apt-get install postgresql)" >&2; exit 1; }
  if pg_up; then pg_users; echo "postgres: already up on $pg_port"; return; fi
  local dir="$root/postgres" bin
  bin="$(pg_bin)"
  rm -rf "$dir" && mkdir -p "$dir" && chown "$(owner postgres)" "$dir"
  as postgres "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  as postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 300 \
    -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null \
    || { tail -n 30 "$dir/server.log" >&2; exit 1; }
  as postgres "$bin/psql" -q -h "$dir" -p "$pg_port" -U postgres -d postgres \
    -c "CREATE ROLE thaw LOGIN CREATEDB PASSWORD 'thaw-secret'" -c "CREATE DATABASE thaw OWNER thaw" >/dev/null
  pg_users
  echo "postgres: up on $pg_port"
}

start_mariadb() {
  need mariadbd mariadb-server
  if my_up; then my_users; echo "mariadb: already up on $my_port"; return; fi
  local dir="$root/mariadb"
  rm -rf "$dir" && mkdir -p "$dir" && chown "$(owner mysql)" "$dir"
  mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(owner mysql)" \
    --auth-root-authentication-method=socket >"$dir/install.log" 2>&1 \
    || { tail -n 30 "$dir/install.log" >&2; exit 1; }
  nohup mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/mysqld.sock" \
    --port="$my_port" --bind-address=127.0.0.1 --user="$(owner mysql)" --pid-file="$dir/mysqld.pid" \
    --innodb-flush-log-at-trx-commit=0 --skip-log-bin --skip-name-resolve --max-connections=200 \
    >"$dir/server.log" 2>&1 &
  for _ in $(seq 1 300); do
    if mariadb --no-defaults -S "$dir/mysqld.sock" -u "$(id -un)" -e "SELECT 1" >/dev/null 2>&1; then
      mariadb --no-defaults -S "$dir/mysqld.sock" -u "$(id -un)" -e "
        DELETE FROM mysql.global_priv WHERE User = '';
        FLUSH PRIVILEGES;
        CREATE USER 'thaw'@'%' IDENTIFIED BY 'thaw-secret';
        CREATE DATABASE thaw;
        GRANT ALL ON \`thaw%\`.* TO 'thaw'@'%';"
      my_users
      echo "mariadb: up on $my_port"
      return
    fi
    sleep 1
  done
  echo "mariadb: did not start; the last lines of its log:" >&2
  tail -n 30 "$dir/server.log" >&2
  exit 1
}

case "${1:-start}" in
  start) start_postgres; start_mariadb ;;
  stop)
    [ -n "$(pg_bin)" ] && [ -d "$root/postgres/data" ] &&
      as postgres "$(pg_bin)/pg_ctl" -D "$root/postgres/data" -m fast stop >/dev/null 2>&1 || true
    [ -f "$root/mariadb/mysqld.pid" ] && kill "$(cat "$root/mariadb/mysqld.pid")" 2>/dev/null || true
    ;;
  *) echo "usage: tools/databases.sh [start|stop]" >&2; exit 2 ;;
esac
