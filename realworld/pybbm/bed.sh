#!/usr/bin/env bash
# luntan's real-software test bed: pybbm 0.19.0 (PyBB Modified; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

# Django 2.2's `manage.py shell` cannot run fill.py (bed_django_fill).
FILL_AS_SCRIPT=1

bed_django_main "$@"
