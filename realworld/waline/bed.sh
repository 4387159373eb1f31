#!/usr/bin/env bash
# luntan's real-software test bed: a Hexo blog whose comments Waline serves as JSON (see README.md).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
# WORK/blog: the Hexo site (npm, the Isso bed's pins), its posts, public/ (generated);
# WORK/server: Waline's server and client (npm); MariaDB database waline_bed (127.0.0.1:3306);
# one server (serve.py) for the blog and Waline's API on 127.0.0.1:PORT, Waline behind it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ISSO="$HERE/../isso"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
BLOG="$WORK/blog"
SERVER="$WORK/server"

# npm_ci DIR STAMP FILES...: npm ci in DIR from FILES (package.json, package-lock.json), again
# only when they change; where a native module fails to build (sqlite3, which Waline's MySQL
# storage does not use), again with --ignore-scripts.
npm_ci() {
  local dir="$1" stamp="$2" want
  shift 2
  want="$(cat "$@" | sha256sum | cut -d' ' -f1)"
  if [ ! -d "$dir/node_modules" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    mkdir -p "$dir"
    cp "$@" "$dir/"
    (cd "$dir" && { npm ci --no-audit --no-fund --loglevel=error || npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; })
    echo "$want" > "$stamp"
  fi
}

install() {
  command -v node >/dev/null || { echo "node (and npm) are needed" >&2; exit 1; }
  command -v mysql >/dev/null || { echo "the mysql client (MariaDB's) is needed" >&2; exit 1; }
  # Hexo: the Isso bed's pins. Waline: this folder's (@waline/vercel, @waline/client).
  npm_ci "$BLOG" "$WORK/.installed-hexo" "$ISSO/package.json" "$ISSO/package-lock.json"
  npm_ci "$SERVER" "$WORK/.installed-waline" "$HERE/package.json" "$HERE/package-lock.json"
  # The site: the Isso bed's _config.yml and this folder's difference; the theme copied out of
  # node_modules into themes/landscape, its article layout the stock one plus the Waline embed.
  cmp -s "$ISSO/_config.yml" "$BLOG/_config.yml" || cp "$ISSO/_config.yml" "$BLOG/_config.yml"
  cmp -s "$HERE/_config.waline.yml" "$BLOG/_config.waline.yml" || cp "$HERE/_config.waline.yml" "$BLOG/_config.waline.yml"
  if [ ! -f "$BLOG/themes/landscape/package.json" ] || ! cmp -s "$BLOG/node_modules/hexo-theme-landscape/package.json" "$BLOG/themes/landscape/package.json"; then
    rm -rf "$BLOG/themes/landscape"
    mkdir -p "$BLOG/themes"
    cp -a "$BLOG/node_modules/hexo-theme-landscape" "$BLOG/themes/landscape"
  fi
  local layout="layout/_partial/article.ejs"
  if ! cat "$BLOG/node_modules/hexo-theme-landscape/$layout" "$HERE/theme/article-waline.ejs" | cmp -s - "$BLOG/themes/landscape/$layout"; then
    cat "$BLOG/node_modules/hexo-theme-landscape/$layout" "$HERE/theme/article-waline.ejs" > "$BLOG/themes/landscape/$layout"
  fi
  mkdir -p "$BLOG/source/_posts"
  echo "waline $(node -p "require('$SERVER/node_modules/@waline/vercel/package.json').version")," \
    "client $(node -p "require('$SERVER/node_modules/@waline/client/package.json').version") in $SERVER;" \
    "hexo $(node -p "require('$BLOG/node_modules/hexo/package.json').version") in $BLOG"
}

fill() {
  [ -d "$BLOG/node_modules/hexo" ] && [ -d "$SERVER/node_modules/@waline/vercel" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  bed_stop
  rm -f "$WORK/truth.json"
  python3 "$HERE/fill.py" "$WORK" "$CORPUS"
}

serve() {
  local port="$1"
  [ -f "$WORK/truth.json" ] || { echo "not filled: run $0 fill $WORK" >&2; exit 1; }
  bed_stop
  : > "$WORK/server.log"
  # setsid: serve.py leads its own process group (Waline's node and its worker in it), which
  # bed_stop kills whole.
  setsid python3 "$HERE/serve.py" "$WORK" "$port" >>"$WORK/server.log" 2>&1 </dev/null &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port/" 60
}

bed_main "$@"
