#!/usr/bin/env bash
# NodeBB 1.4.0 (npm) on Redis, theme Persona: one package of luntan's real-software test bed.
#   bed.sh install WORK | fill WORK | serve WORK PORT | stop WORK
# Redis: 127.0.0.1:6379, database $NODEBB_REDIS_DB (default 5); `fill` empties that database.
set -euo pipefail

VERSION=1.4.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REDIS_DB=${NODEBB_REDIS_DB:-5}
REDIS_HOST=127.0.0.1
REDIS_PORT=6379

# shellcheck source=../bed-lib.sh
. "$HERE/../bed-lib.sh"
bed_args "$@"
NB=$WORK/src

# config.json for a given port (url only shapes absolute links in <meta>, not routing)
write_config() {
	local port=$1
	cat > "$NB/config.json" <<EOF
{
    "url": "http://127.0.0.1:$port",
    "secret": "luntan-bed-nodebb-secret",
    "database": "redis",
    "port": "$port",
    "bind_address": "127.0.0.1",
    "redis": {
        "host": "$REDIS_HOST",
        "port": "$REDIS_PORT",
        "database": "$REDIS_DB"
    }
}
EOF
}

install() {
	if [ -f "$NB/.bed-installed" ] && [ "$(cat "$NB/.bed-installed")" = "$VERSION" ]; then
		echo "nodebb $VERSION already installed in $NB"
		return 0
	fi
	command -v node >/dev/null || { echo "node is needed" >&2; exit 1; }
	rm -rf "$NB"
	mkdir -p "$NB"
	(cd "$WORK" && npm pack --silent "nodebb@$VERSION" >/dev/null)
	tar xzf "$WORK/nodebb-$VERSION.tgz" -C "$NB" --strip-components=1
	rm -f "$WORK/nodebb-$VERSION.tgz"
	# the lock file pins every dependency as it was when this bed was made
	cp "$HERE/package-lock.json" "$NB/package-lock.json"
	(cd "$NB" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
	# the npm tarball lacks the (empty) upload folders NodeBB scans at start
	mkdir -p "$NB"/public/uploads/{sounds,files,profile,category,system}
	echo "$VERSION" > "$NB/.bed-installed"
	echo "nodebb $VERSION installed in $NB"
}

fill() {
	[ -f "$NB/.bed-installed" ] || { echo "run install first" >&2; exit 1; }
	bed_stop
	redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" flushdb >/dev/null
	rm -f "$NB/config.json"
	local setup
	setup=$(cat <<EOF
{"url":"http://127.0.0.1:4567","secret":"luntan-bed-nodebb-secret","database":"redis",
 "redis:host":"$REDIS_HOST","redis:port":"$REDIS_PORT","redis:password":"","redis:database":"$REDIS_DB",
 "admin:username":"admin","admin:password":"bedAdmin123!","admin:password:confirm":"bedAdmin123!",
 "admin:email":"admin@example.com","port":"4567"}
EOF
)
	# NodeBB's own installer: schema, admin user, default categories, asset build
	(cd "$NB" && node app --setup "$setup") > "$WORK/setup.log" 2>&1 || { tail -30 "$WORK/setup.log" >&2; exit 1; }
	# emoji-one downloads its images from emojione.com at first start (no network
	# here); emoji-extended would turn text into images; sounds are not needed.
	redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DB" zrem plugins:active \
		nodebb-plugin-emoji-one nodebb-plugin-emoji-extended nodebb-plugin-soundpack-default >/dev/null
	write_config 4567
	node "$HERE/fill.js" "$NB" "$CORPUS" "$WORK/truth.json"
	# each post's rendered HTML into paragraphs and quotes, as a reader sees them
	python3 "$REPO/realworld/truthlib.py" nodebb "$WORK/truth.json"
}

serve() {
	local port=$1
	[ -f "$WORK/truth.json" ] || { echo "run fill first" >&2; exit 1; }
	bed_stop
	write_config "$port"
	# app.js itself (not the ./nodebb loader, which forks and restarts) in its own process group
	# (setsid may fork, so the pid is written by the shell that then becomes node: pid = pgid)
	rm -f "$WORK/server.pid"
	(cd "$NB" && NODE_ENV=production setsid bash -c 'echo $$ > "$0"; exec node app.js' "$WORK/server.pid" \
		> "$WORK/server.log" 2>&1 < /dev/null &)
	for _ in $(seq 1 50); do [ -s "$WORK/server.pid" ] && break; sleep 0.1; done
	bed_wait "http://127.0.0.1:$port/" 120
}

bed_main "$@"
