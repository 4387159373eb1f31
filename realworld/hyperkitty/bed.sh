#!/usr/bin/env bash
# luntan's real-software test bed: HyperKitty 1.3.12 (PyPI hyperkitty, GNU Mailman 3's archiver;
# see README.md beside this file).
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"

install_more() { mkdir -p "$WORK/media"; }

# A fresh database (and what an earlier fill left: the mboxes, HyperKitty's attachment and
# search folders), then fill.py: the lists, the mboxes, hyperkitty_import, the votes.
fill() { bed_django_fill "$WORK/mbox" "$WORK/fulltext_index"; }

bed_django_main "$@"
