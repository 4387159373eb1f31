#!/usr/bin/env bash
# luntan's real-software test bed: Spirit 0.14.3 (django-spirit; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

install_more() { mkdir -p "$WORK/media"; }

fill() { bed_django_fill "$WORK/st_search"; }

bed_django_main "$@"
