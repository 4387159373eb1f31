#!/usr/bin/env bash
# luntan's real-software test bed: Spirit 0.14.3 (django-spirit; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
bed_django "$HERE/project"

install() {
  bed_pip "$HERE/requirements.txt"
  mkdir -p "$WORK/media"
  manage check
}

fill() { bed_django_fill "$WORK/st_search"; }

serve() { bed_gunicorn "$1" /; }

bed_main "$@"
