# What every package's bed.sh shares (sourced, not run): its arguments,
# the server's pid file and process group, and waiting for its first page.
# A bed.sh sets HERE, sources this (which sets REPO and CORPUS), calls
# `bed_args "$@"` (which sets CMD and WORK), defines install, fill and serve,
# and ends with `bed_main "$@"`.

# The repository and the fixture's corpus every fill takes its text from.
REPO="$(cd "$HERE/../.." && pwd)"
CORPUS="$REPO/crates/luntan-fixture/corpus"

bed_usage() { echo "usage: $0 install|fill|stop WORK | serve WORK PORT" >&2; exit 2; }

bed_args() {
  [ $# -ge 2 ] || bed_usage
  CMD="$1"
  mkdir -p "$2"
  WORK="$(cd "$2" && pwd)"
}

bed_running() { [ -f "$WORK/server.pid" ] && kill -0 "$(cat "$WORK/server.pid")" 2>/dev/null; }

# Stops the server's whole process group (each serve starts it with setsid).
bed_stop() {
  if bed_running; then
    local pid i
    pid="$(cat "$WORK/server.pid")"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$WORK/server.pid"
}

# bed_wait URL SECONDS: until URL answers 200; the server dying or the time
# running out stops it and exits, the log's tail on stderr.
bed_wait() {
  local url="$1" seconds="$2" i
  for i in $(seq 1 $((seconds * 2))); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$url" || true)" = 200 ]; then
      echo "serving $url (pid $(cat "$WORK/server.pid"), log $WORK/server.log)"
      return 0
    fi
    bed_running || { echo "server died; see $WORK/server.log" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "$url did not answer 200 within $seconds s; see $WORK/server.log" >&2
  tail -20 "$WORK/server.log" >&2
  bed_stop
  exit 1
}

# bed_django PROJECT: a Django project (PROJECT/manage.py, its settings
# bedsite.settings on realworld/bedsettings.py) run in place from a venv in
# WORK/venv: PY, the environment its settings read (BED_WORK), and `manage`.
bed_django() {
  PROJECT="$1"
  PY="$WORK/venv/bin/python"
  export BED_WORK="$WORK" PYTHONPATH="$PROJECT:$REPO/realworld" DJANGO_SETTINGS_MODULE=bedsite.settings PYTHONDONTWRITEBYTECODE=1
}

manage() { (cd "$PROJECT" && "$PY" manage.py "$@"); }

# bed_django_main ARGS: a Django bed whole, its project in HERE/project and
# its pins in HERE/requirements.txt: the arguments read, then install (the
# venv, the bed's `install_more` if it defines one, `manage check`), fill
# (bed_django_fill) and serve (gunicorn, waiting for SERVE_PATH, `/` unless
# the bed sets it) unless the bed defines its own before calling this.
bed_django_main() {
  bed_args "$@"
  bed_django "$HERE/project"
  declare -F install >/dev/null || install() {
    bed_pip "$HERE/requirements.txt"
    if declare -F install_more >/dev/null; then install_more; fi
    manage check
  }
  declare -F fill >/dev/null || fill() { bed_django_fill; }
  declare -F serve >/dev/null || serve() { bed_gunicorn "$1" "${SERVE_PATH:-/}"; }
  bed_main "$@"
}

# bed_django_fill [STALE...]: a fresh database (STALE: what else an earlier
# fill left), migrated, then the bed's fill.py in `manage shell`, told where
# the corpus and realworld/ are; with FILL_AS_SCRIPT set, fill.py run as a
# script (Django 2.2's `manage.py shell` runs its input with exec() in a
# function's locals, where the functions fill.py defines would not see its
# other names).
bed_django_fill() {
  [ -x "$PY" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  rm -rf "$WORK/db.sqlite3" "$WORK/truth.json" "$@"
  manage migrate --noinput -v 0
  if [ -n "${FILL_AS_SCRIPT:-}" ]; then
    (cd "$PROJECT" && BED_CORPUS="$CORPUS" BED_REALWORLD="$REPO/realworld" "$PY" "$HERE/fill.py")
  else
    BED_CORPUS="$CORPUS" BED_REALWORLD="$REPO/realworld" manage shell < "$HERE/fill.py"
  fi
}

# Whether the bed's database is filled: its SQLite file; a bed whose
# database is elsewhere (Misago's PostgreSQL) defines its own after sourcing.
bed_db_ready() { [ -f "$WORK/db.sqlite3" ]; }

# bed_gunicorn PORT PATH: the Django project under gunicorn (two workers) on
# 127.0.0.1:PORT, waiting until PATH answers.
bed_gunicorn() {
  local port="$1"
  bed_db_ready || { echo "no database: run $0 fill $WORK" >&2; exit 1; }
  bed_stop
  # setsid: gunicorn's master leads its own process group, which bed_stop kills whole.
  (cd "$PROJECT" && exec setsid "$WORK/venv/bin/gunicorn" bedsite.wsgi:application \
      --bind "127.0.0.1:$port" --workers 2 --timeout 60 \
      --access-logfile - --error-logfile - \
      </dev/null >>"$WORK/server.log" 2>&1) &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port$2" 120
}

# bed_pip REQUIREMENTS: the venv in WORK/venv with REQUIREMENTS installed,
# again only when that file changed since the last install.
bed_pip() {
  [ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
  local want have
  want="$(sha256sum "$1" | cut -d' ' -f1)"
  have="$(cat "$WORK/.requirements.sha256" 2>/dev/null || true)"
  if [ "$want" != "$have" ]; then
    "$WORK/venv/bin/pip" install -q --disable-pip-version-check -r "$1"
    echo "$want" > "$WORK/.requirements.sha256"
  fi
}

bed_main() {
  case "$CMD" in
    install) install ;;
    fill) fill ;;
    serve) [ $# -eq 3 ] || bed_usage; serve "$3" ;;
    stop) bed_stop ;;
    *) bed_usage ;;
  esac
}
