#!/usr/bin/env bash
# luntan-export's WARC checked by the reference tools, not by luntan's own
# reader: a small fixture crawl (HTML forums, a JSON site in protocol mode,
# the same site in Chromium) exported, then
#   - warcio check: every record's block and payload digest,
#   - warcio index: one response (or resource) record per saved page, each
#     with the URL its article<T>.http names and status 200,
#   - pywb: a collection of the WARC served by `wayback` on a loopback port,
#     and one page of each kind fetched back (id_, unrewritten) byte for byte.
# warcio and pywb go into a virtualenv under target/ (PyPI), kept between runs.
# `make test` runs this after the Rust tests; it needs the debug binaries
# (built here if missing, as the tests build them) and Chromium (make chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p "${CARGO_TARGET_DIR:-target}"
target=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
bin=$target/debug
venv=$target/warc-venv
work=$(mktemp -d "${TMPDIR:-/tmp}/luntan-check-warc.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-warc: $*" >&2; exit 1; }

# The binaries as `cargo test` builds them (a no-op after `make test`'s
# tests): `cargo build --bins` unifies features without the dev-dependencies
# and would rebuild tantivy and chromiumoxide a second time.
cargo test -q --workspace --no-run

if [ ! -x "$venv/bin/wayback" ] || [ ! -x "$venv/bin/warcio" ]; then
  rm -rf "$venv"
  # Debian's own python3 needs python3-venv for `-m venv`.
  python3 -m venv "$venv" 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv "$venv"; }
  "$venv/bin/pip" install -q 'warcio>=1.7,<2' 'pywb>=2.8,<3'
fi
py=$venv/bin/python

# A small crawl of every kind of page: four HTML forums (GBK, Big5, UTF-8,
# GB18030), the XHR forum through its JSON and in Chromium (the microblog's
# user-by-user rounds are left out), and the pictures Discuz! X's posts
# show, archived by luntan-media.
mkdir -p "$work/data/sites"
"$bin/luntan-fixture" serve --addr 127.0.0.1:0 --threads 6 --boards 1 --forums dz,phpbb,bbs,dzx --sites-out "$work/data/sites" --microblog >"$work/fixture.out" 2>"$work/fixture.err" &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' "$work/fixture.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^listening on' "$work/fixture.out" || fail "the fixture forum did not start: $(cat "$work/fixture.err")"
rm -f "$work/data/sites/mb.xml" "$work/data/sites/mb-browser.xml"
"$bin/luntan-discover" -q --data "$work/data" --all-boards >/dev/null
"$bin/luntan-download" -q --data "$work/data" >/dev/null
"$bin/luntan-extract" -q --data "$work/data" >/dev/null
sed -i 's|^  <links>|  <media/>\n  <links>|' "$work/data/sites/dzx.xml"
"$bin/luntan-media" -q --data "$work/data" >/dev/null
# One thread as saved before luntan kept heads: exported with a minimal one.
legacy=$(find "$work/data/pages/dz" -name 'article*.http' | sort | sed -n 2p)
[ -n "$legacy" ] || fail "no second dz thread"
mv "$legacy" "$work/legacy.http"
echo "${legacy%.http}.html" >"$work/legacy.page"
"$bin/luntan-export" -q --data "$work/data" --warc "$work/crawl.warc.gz" --ndjson "$work/threads.ndjson"

"$venv/bin/warcio" index -f warc-type,warc-target-uri,warc-date,http:status,offset "$work/crawl.warc.gz" >"$work/index.jsonl"
"$venv/bin/warcio" check -v "$work/crawl.warc.gz" >"$work/check.out" || { cat "$work/check.out"; fail "warcio check failed"; }
# -v prints "digest pass" for each record whose digests it checked and found right.
records=$(wc -l <"$work/index.jsonl")
passed=$(grep -c 'digest pass' "$work/check.out" || true)
[ "$passed" = "$records" ] || { cat "$work/check.out"; fail "warcio check: $passed of $records records passed their digests"; }
echo "check-warc: warcio check: $records records, every digest right"

# Every saved page, by the lines download kept: one record each, found by warcio.
"$py" - "$work" <<'EOF'
import json, pathlib, sqlite3, sys
work = pathlib.Path(sys.argv[1])
legacy = [json.loads(l) for l in (work / "legacy.http").read_text().splitlines()]
index = [json.loads(l) for l in (work / "index.jsonl").read_text().splitlines()]
assert index[0]["warc-type"] == "warcinfo", index[0]
records = {}
for r in index[1:]:
    records.setdefault(r["warc-target-uri"], []).append(r)
pages = []
for http in sorted((work / "data/pages").rglob("article*.http")):
    for line in http.read_text().splitlines():
        c = json.loads(line)
        pages.append(c)
        kind = "response" if c["kind"] == "response" else "resource"
        got = [r for r in records.get(c["url"], []) if r["warc-type"] == kind]
        assert got, f"{http}: page {c['page']} ({c['url']}) is not in the WARC as a {kind}"
        if kind == "response":
            assert all(r["http:status"] == "200" for r in got), got
kinds = {c["kind"] for c in pages}
assert kinds == {"response", "snapshot"}, kinds
for c in legacy:
    got = [r for r in records.get(c["url"], []) if r["warc-type"] == "response" and r["http:status"] == "200"]
    assert len(got) == 1, f"the page saved without a head ({c['url']}): {got}"
db = sqlite3.connect(work / "data/luntan.db")
media = db.execute("SELECT url FROM media WHERE status = 'archived'").fetchall()
assert media, "luntan-media archived no picture"
for (url,) in media:
    got = [r for r in records.get(url, []) if r["warc-type"] == "response" and r["http:status"] == "200"]
    assert len(got) == 1, f"the archived picture {url}: {got}"
assert len(index) == 1 + len(pages) + len(legacy) + len(media), f"{len(index) - 1} records for {len(pages) + len(legacy)} pages and {len(media)} pictures"
print(f"check-warc: warcio index: {len(pages)} pages, {sum(c['kind'] == 'snapshot' for c in pages)} browser states, {len(media)} pictures, each once")
EOF

# pywb: a collection holding the WARC, served on a free loopback port.
mkdir -p "$work/pywb"
(cd "$work/pywb" && "$venv/bin/wb-manager" init luntan && "$venv/bin/wb-manager" add luntan "$work/crawl.warc.gz") >"$work/wb-manager.log" 2>&1 ||
  fail "wb-manager could not add the WARC: $(cat "$work/wb-manager.log")"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/pywb" && exec "$venv/bin/wayback" -b 127.0.0.1 -p "$port" >"$work/wayback.log" 2>&1) &
pids+=($!)

# One page of each kind (GBK HTML, JSON, a browser state) fetched back as it was archived.
"$py" - "$work" "$port" <<'EOF'
import json, pathlib, sqlite3, sys, time, urllib.request
work, port = pathlib.Path(sys.argv[1]), sys.argv[2]
for _ in range(300):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
        break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit("check-warc: wayback did not start:\n" + (work / "wayback.log").read_text())
index = [json.loads(l) for l in (work / "index.jsonl").read_text().splitlines()[1:]]

def page(site, ext):
    """The first saved thread of `site`: its page 1's line, and the files of
    every page with the same URL (a browser's states share their thread's)."""
    for http in sorted((work / "data/pages" / site).rglob("article*.http")):
        lines = [json.loads(l) for l in http.read_text().splitlines()]
        stem = http.name[: -len(".http")]
        files = [http.with_name(stem + ("" if c["page"] == 1 else f"_p{c['page']}") + ext) for c in lines if c["url"] == lines[0]["url"]]
        return lines[0], files
    sys.exit(f"check-warc: no saved page of {site}")

old = json.loads((work / "legacy.http").read_text().splitlines()[0])
old_files = [pathlib.Path((work / "legacy.page").read_text().strip())]
for site, ext in (("dz", ".html"), ("xhr", ".json"), ("xhr-browser", ".html"), ("dz (saved without a head)", None)):
    if ext:
        c, files = page(site, ext)
    else:
        c, files = old, old_files
    stamp = next(r["warc-date"] for r in index if r["warc-target-uri"] == c["url"])
    ts = "".join(ch for ch in stamp if ch.isdigit())[:14]
    url = f"http://127.0.0.1:{port}/luntan/{ts}id_/{c['url']}"
    with urllib.request.urlopen(url, timeout=30) as resp:
        body = resp.read()
        status = resp.status
    assert status == 200, (url, status)
    wanted = [f.read_bytes() for f in files]
    assert body in wanted, f"{url}: pywb replayed {len(body)} bytes, the saved page ({files[0]}) holds {len(wanted[0])}"
    print(f"check-warc: pywb replayed {site} {c['url']} ({len(body)} bytes) byte for byte")

# A picture luntan-media archived, replayed as its file under media/.
db = sqlite3.connect(work / "data/luntan.db")
url, sha = db.execute("SELECT url, sha256 FROM media WHERE status = 'archived' ORDER BY url LIMIT 1").fetchone()
stamp = next(r["warc-date"] for r in index if r["warc-target-uri"] == url)
ts = "".join(ch for ch in stamp if ch.isdigit())[:14]
with urllib.request.urlopen(f"http://127.0.0.1:{port}/luntan/{ts}id_/{url}", timeout=30) as resp:
    body, status, ctype = resp.read(), resp.status, resp.headers.get("Content-Type", "")
kept = (work / "data/media" / sha[:2] / sha).read_bytes()
assert status == 200 and body == kept and ctype.startswith("image/"), (url, status, ctype, len(body), len(kept))
print(f"check-warc: pywb replayed the picture {url} ({len(body)} bytes, {ctype}) byte for byte")
EOF
echo "check-warc: ok"
