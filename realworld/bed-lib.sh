# What every package's bed.sh shares (sourced, not run): its arguments,
# the server's pid file and process group, and waiting for its first page.
# A bed.sh sets HERE, sources this (which sets REPO and CORPUS), calls
# `bed_args "$@"` (which sets CMD and WORK), defines install, fill and serve,
# and ends with `bed_main "$@"`.

# The repository and the fixture's corpus every fill takes its text from.
REPO="$(cd "$HERE/../.." && pwd)"
CORPUS="$REPO/crates/luntan-fixture/corpus"

bed_usage() { echo "usage: $0 install|fill|stop WORK | serve WORK PORT" >&2; exit 2; }

bed_args() {
  [ $# -ge 2 ] || bed_usage
  CMD="$1"
  mkdir -p "$2"
  WORK="$(cd "$2" && pwd)"
}

bed_running() { [ -f "$WORK/server.pid" ] && kill -0 "$(cat "$WORK/server.pid")" 2>/dev/null; }

# Stops the server's whole process group (each serve starts it with setsid).
bed_stop() {
  if bed_running; then
    local pid i
    pid="$(cat "$WORK/server.pid")"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$WORK/server.pid"
}

# bed_wait URL SECONDS: until URL answers 200; the server dying or the time
# running out stops it and exits, the log's tail on stderr.
bed_wait() {
  local url="$1" seconds="$2" i
  for i in $(seq 1 $((seconds * 2))); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$url" || true)" = 200 ]; then
      echo "serving $url (pid $(cat "$WORK/server.pid"), log $WORK/server.log)"
      return 0
    fi
    bed_running || { echo "server died; see $WORK/server.log" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "$url did not answer 200 within $seconds s; see $WORK/server.log" >&2
  tail -20 "$WORK/server.log" >&2
  bed_stop
  exit 1
}

bed_main() {
  case "$CMD" in
    install) install ;;
    fill) fill ;;
    serve) [ $# -eq 3 ] || bed_usage; serve "$3" ;;
    stop) bed_stop ;;
    *) bed_usage ;;
  esac
}
