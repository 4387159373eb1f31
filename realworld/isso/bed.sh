#!/usr/bin/env bash
# luntan's real-software test bed: a Hexo blog whose comments Isso serves as JSON (see README.md).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
# WORK/venv: Isso (PyPI); WORK/blog: the Hexo site (npm), its posts, public/ (generated);
# WORK/comments.db: Isso's SQLite database; one server (serve.py) for both on 127.0.0.1:PORT.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
PY="$WORK/venv/bin/python"
BLOG="$WORK/blog"

install() {
  command -v node >/dev/null || { echo "node (and npm) are needed" >&2; exit 1; }
  # Isso: a venv, every package pinned (requirements.txt); again only when the pins change.
  local want
  want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
  if [ ! -x "$PY" ] || [ "$(cat "$WORK/.installed-isso" 2>/dev/null || true)" != "$want" ]; then
    [ -x "$PY" ] || python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$HERE/requirements.txt"
    "$PY" -c 'import isso, misaka, mistune' # misaka is a C extension built on install
    echo "$want" > "$WORK/.installed-isso"
  fi
  # Hexo: npm ci from the lock file (package.json, package-lock.json); again only when they change.
  mkdir -p "$BLOG"
  want="$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
  if [ ! -d "$BLOG/node_modules/hexo" ] || [ "$(cat "$WORK/.installed-hexo" 2>/dev/null || true)" != "$want" ]; then
    cp "$HERE/package.json" "$HERE/package-lock.json" "$BLOG/"
    (cd "$BLOG" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$WORK/.installed-hexo"
  fi
  # The site: this folder's _config.yml; the theme copied out of node_modules into
  # themes/landscape (Hexo prefers that folder) with the one layout that embeds Isso.
  cmp -s "$HERE/_config.yml" "$BLOG/_config.yml" || cp "$HERE/_config.yml" "$BLOG/_config.yml"
  if [ ! -f "$BLOG/themes/landscape/package.json" ] || ! cmp -s "$BLOG/node_modules/hexo-theme-landscape/package.json" "$BLOG/themes/landscape/package.json"; then
    rm -rf "$BLOG/themes/landscape"
    mkdir -p "$BLOG/themes"
    cp -a "$BLOG/node_modules/hexo-theme-landscape" "$BLOG/themes/landscape"
  fi
  local f
  for f in $(cd "$HERE/theme" && find . -type f); do
    cmp -s "$HERE/theme/$f" "$BLOG/themes/landscape/$f" || cp "$HERE/theme/$f" "$BLOG/themes/landscape/$f"
  done
  mkdir -p "$BLOG/source/_posts"
  echo "isso $("$PY" -c 'import importlib.metadata as m; print(m.version("isso"))') in $WORK/venv;" \
    "hexo $(node -p "require('$BLOG/node_modules/hexo/package.json').version") in $BLOG"
}

fill() {
  [ -x "$PY" ] && [ -d "$BLOG/node_modules/hexo" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  bed_stop
  rm -f "$WORK/truth.json"
  "$PY" "$HERE/fill.py" "$WORK" "$CORPUS"
}

serve() {
  local port="$1"
  [ -f "$WORK/truth.json" ] || { echo "not filled: run $0 fill $WORK" >&2; exit 1; }
  bed_stop
  : > "$WORK/server.log"
  # setsid: the server leads its own process group, which bed_stop kills whole.
  setsid "$PY" "$HERE/serve.py" "$WORK" "$port" >>"$WORK/server.log" 2>&1 </dev/null &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port/" 60
}

bed_main "$@"
