#!/usr/bin/env bash
# luntan's real-software test bed: pybbm 0.19.0 (PyBB Modified; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
bed_django "$HERE/project"

install() {
  bed_pip "$HERE/requirements.txt"
  manage check
}

# bed_django_fill's steps, but fill.py run as a script: Django 2.2's `manage.py shell` runs
# its input with exec() in a function's locals, where the functions fill.py defines would not
# see its other names.
fill() {
  [ -x "$PY" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  rm -rf "$WORK/db.sqlite3" "$WORK/truth.json"
  manage migrate --noinput -v 0
  (cd "$PROJECT" && BED_CORPUS="$CORPUS" BED_REALWORLD="$REPO/realworld" "$PY" "$HERE/fill.py")
}

serve() { bed_gunicorn "$1" /; }

bed_main "$@"
