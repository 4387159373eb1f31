#!/usr/bin/env bash
# luntan's real-software test bed: Askbot 0.13.0 (a Q&A forum; see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

# The home page (/) answers 302 to the question list, /问题/ (Askbot translates its URLs).
SERVE_PATH=/%E9%97%AE%E9%A2%98/

install_more() { mkdir -p "$WORK/upfiles" "$WORK/tmp"; }

fill() { bed_django_fill "$WORK/upfiles"; }

bed_django_main "$@"
