#!/usr/bin/env bash
# luntan's real-software test bed: Misago 0.39.6 (PyPI misago; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

# Misago runs on PostgreSQL only: the machine's server (127.0.0.1:5432, user postgres, trust),
# a database of the bed's own.
DB=misago_bed
export BED_PGDATABASE="$DB"
psql_() { psql -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 -q "$@"; }

install_more() { mkdir -p "$WORK/media" "$WORK/userdata"; }

# A fresh database (dropped and created; bed_django_fill's SQLite file is not Misago's), then
# bed_django_fill's steps: migrate (Misago's migrations make its default category tree, roles,
# ranks and settings) and fill.py.
fill() {
  [ -x "$PY" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  bed_stop
  psql_ -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB ENCODING 'UTF8' TEMPLATE template0"
  bed_django_fill "$WORK/media/avatars"
}

bed_db_ready() { [ "$(psql_ -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" = 1 ]; }

bed_django_main "$@"
