#!/usr/bin/env bash
# FlaskBB 2.0.2 test bed for luntan (issue 34). See README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
PY="$WORK/venv/bin/python"

install() {
  local stamp="$WORK/.installed" want
  want="$(cat "$HERE/requirements.txt" "$HERE/compat.py" "$HERE/bed.sh" | sha256sum | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$PY" ]; then
    echo "flaskbb: already installed in $WORK"; return 0
  fi
  [ -x "$PY" ] || python3 -m venv "$WORK/venv"
  # FlaskBB 2.0.2 pins 2018 versions (Flask 1.0.2, celery 4.0.2, enum34,
  # Pillow 5.1...) that do not build or import on Python 3.11; install it
  # without its pins and bring the closest versions that work, pinned in
  # requirements.txt. The two bundled plugins (portal, conversations) are
  # left out: pkg_resources refuses to load them against unpinned deps.
  "$WORK/venv/bin/pip" install -q --disable-pip-version-check --no-deps \
    -r "$HERE/requirements.txt"
  local sp
  sp="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  cp "$HERE/compat.py" "$sp/flaskbb_py311_compat.py"
  echo "import flaskbb_py311_compat" > "$sp/flaskbb_py311_compat.pth"
  # compiled translations (zh_CN is the forum's language)
  "$WORK/venv/bin/pybabel" compile -d "$sp/flaskbb/translations" >/dev/null 2>&1 || true
  # Babel parses "zh_CN" as zh_Hans_CN and looks for that folder name.
  rm -rf "$sp/flaskbb/translations/zh_Hans_CN"
  cp -r "$sp/flaskbb/translations/zh_CN" "$sp/flaskbb/translations/zh_Hans_CN"
  mkdir -p "$WORK/instance" "$WORK/logs"
  cat > "$WORK/flaskbb.cfg" <<CFG
W = "$WORK"
DEBUG = False
TESTING = False
SECRET_KEY = "luntan-bed-flaskbb"
WTF_CSRF_SECRET_KEY = "luntan-bed-flaskbb-csrf"
SQLALCHEMY_DATABASE_URI = "sqlite:///" + W + "/flaskbb.sqlite"
WHOOSHEE_DIR = W + "/whoosh_index"
LOG_PATH = W + "/logs"
USE_DEFAULT_LOGGING = False
REDIS_ENABLED = False
CFG
  echo "$want" > "$stamp"
  echo "flaskbb: installed in $WORK"
}

fill() {
  [ -x "$PY" ] || { echo "run install first" >&2; exit 1; }
  rm -rf "$WORK/flaskbb.sqlite" "$WORK/whoosh_index" "$WORK/truth.json"
  (cd "$WORK" && "$PY" "$HERE/fill.py" "$WORK" "$CORPUS")
}

serve() {
  local port="${1:?PORT}"
  bed_stop
  : > "$WORK/server.log"
  setsid "$PY" "$HERE/serve.py" "$WORK" "$port" >>"$WORK/server.log" 2>&1 < /dev/null &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port/" 120
}

bed_main "$@"
