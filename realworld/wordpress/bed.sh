#!/usr/bin/env bash
# luntan's real-software test bed: WordPress from Debian's package (see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
# MariaDB: 127.0.0.1:3306, root without password, database $WP_BED_DB (default wp_bed);
# `fill` drops and recreates that database.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGES=(wordpress php-cli php-mysql wordpress-l10n wordpress-theme-twentytwentythree)
export WP_BED_DB="${WP_BED_DB:-wp_bed}"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
WP="$WORK/wordpress"

# The installed package's version, e.g. 6.1.9+dfsg1-0+deb12u1.
pkg_version() { dpkg-query -W -f='${Version}' wordpress 2>/dev/null || true; }

install() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    # another apt-get may hold the lock: wait for it
    local i
    for i in $(seq 1 600); do
      fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock >/dev/null 2>&1 || break
      sleep 1
    done
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
  # Debian's tree, copied whole (symlinks into /usr/share/javascript, php-getid3 … followed),
  # with our own wp-config.php instead of Debian's /etc/wordpress/config-<host>.php scheme.
  local want
  want="$(pkg_version)"
  if [ "$(cat "$WORK/.installed" 2>/dev/null || true)" != "$want" ]; then
    rm -rf "$WP"
    cp -aL /usr/share/wordpress "$WP"
    rm -f "$WP/.htaccess"
    echo "$want" > "$WORK/.installed"
  fi
  cmp -s "$HERE/wp-config.php" "$WP/wp-config.php" || cp "$HERE/wp-config.php" "$WP/wp-config.php"
  php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' || { echo "php has no mysqli" >&2; exit 1; }
  echo "wordpress $want in $WP"
}

fill() {
  [ -f "$WORK/.installed" ] || { echo "not installed: run $0 install $WORK" >&2; exit 1; }
  bed_stop
  rm -f "$WORK/truth.json"
  php "$HERE/fill.php" "$WP" "$CORPUS" "$WORK/truth.json"
  # each post's rendered HTML into paragraphs, as a reader sees them (same input shape as NodeBB's)
  python3 "$REPO/realworld/truthlib.py" nodebb "$WORK/truth.json"
}

serve() {
  local port="$1"
  [ -f "$WORK/truth.json" ] || { echo "no database: run $0 fill $WORK" >&2; exit 1; }
  bed_stop
  # setsid: php -S and its workers lead their own process group, which bed_stop kills whole.
  (cd "$WP" && PHP_CLI_SERVER_WORKERS=2 exec setsid php -S "127.0.0.1:$port" -t "$WP" "$HERE/router.php" \
      </dev/null >>"$WORK/server.log" 2>&1) &
  echo $! > "$WORK/server.pid"
  bed_wait "http://127.0.0.1:$port/" 30
}

bed_main "$@"
