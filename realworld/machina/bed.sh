#!/usr/bin/env bash
# luntan's real-software test bed: django-machina 1.3.1 (see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

SERVE_PATH=/forum/

install_more() {
  # machina ships its Simplified Chinese catalogue as zh_CN; Django 4 (zh-hans) looks for zh_Hans.
  local mo
  mo="$("$PY" -c 'import machina, os; print(os.path.join(os.path.dirname(machina.__file__), "locale/zh_CN/LC_MESSAGES/django.mo"))')"
  mkdir -p "$WORK/locale/zh_Hans/LC_MESSAGES" "$WORK/media" "$WORK/cache"
  cmp -s "$mo" "$WORK/locale/zh_Hans/LC_MESSAGES/django.mo" || cp "$mo" "$WORK/locale/zh_Hans/LC_MESSAGES/django.mo"
  manage collectstatic --noinput -v 0
}

bed_django_main "$@"
