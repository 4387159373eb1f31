#!/usr/bin/env bash
# luntan's real-software test bed: django-machina 1.3.1 (see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT="$HERE/project"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
PY="$WORK/venv/bin/python"

export BED_WORK="$WORK"
export PYTHONPATH="$PROJECT"
export DJANGO_SETTINGS_MODULE=bedsite.settings
export PYTHONDONTWRITEBYTECODE=1

manage() { (cd "$PROJECT" && "$PY" manage.py "$@"); }

install() {
  if [ ! -x "$PY" ]; then
    python3 -m venv "$WORK/venv"
  fi
  # Reinstall only when the pinned list changed since the last install.
  local want have
  want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
  have="$(cat "$WORK/.requirements.sha256" 2>/dev/null || true)"
  if [ "$want" != "$have" ]; then
    "$WORK/venv/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt"
    echo "$want" > "$WORK/.requirements.sha256"
  fi
  # machina ships its Simplified Chinese catalogue as zh_CN; Django 4 (zh-hans) looks for zh_Hans.
  local mo
  mo="$("$PY" -c 'import machina, os; print(os.path.join(os.path.dirname(machina.__file__), "locale/zh_CN/LC_MESSAGES/django.mo"))')"
  mkdir -p "$WORK/locale/zh_Hans/LC_MESSAGES" "$WORK/media" "$WORK/cache"
  cmp -s "$mo" "$WORK/locale/zh_Hans/LC_MESSAGES/django.mo" || cp "$mo" "$WORK/locale/zh_Hans/LC_MESSAGES/django.mo"
  manage collectstatic --noinput -v 0
  manage check
}

fill() {
  [ -x "$PY" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  rm -f "$WORK/db.sqlite3" "$WORK/truth.json"
  manage migrate --noinput -v 0
  BED_CORPUS="$CORPUS" BED_REALWORLD="$REPO/realworld" manage shell < "$HERE/fill.py"
}

serve() {
  local port="$1"
  [ -f "$WORK/db.sqlite3" ] || { echo "no database: run $0 fill $WORK" >&2; exit 1; }
  bed_stop
  # setsid: gunicorn's master leads its own process group, which bed_stop kills whole.
  (cd "$PROJECT" && exec setsid "$WORK/venv/bin/gunicorn" bedsite.wsgi:application \
      --bind "127.0.0.1:$port" --workers 2 --timeout 60 \
      --access-logfile - --error-logfile - \
      </dev/null >>"$WORK/server.log" 2>&1) &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port/forum/" 120
}

bed_main "$@"
