# luntan: `make demo` runs the whole pipeline on the bundled fixture forum;
# `make test` runs every test. See README.md.

CARGO   ?= cargo
DATA    ?= data
INDEX   ?= index
SITE    ?=
BIN     := $(or $(CARGO_TARGET_DIR),target)/release
SITEARG := $(if $(SITE),--site $(SITE),)

WATCH_SECS ?= 60

.PHONY: all build demo test check-warc lint learn discover download extract media index reextract reindex search status watch bench-search bench-serve serve chromium clean-demo

all: build

build:
	$(CARGO) build --release --workspace --bins

# scripts/demo.sh builds (and first says how long the first build takes).
demo: chromium
	CARGO="$(CARGO)" bash scripts/demo.sh

# The formatting and lint checks come first: CI fails on either. The
# luntan-serve page test drives Debian's chromium. check-warc gives
# luntan-export's WARC to warcio and pywb (a virtualenv from PyPI).
test: lint chromium
	$(CARGO) test --workspace --no-fail-fast
	bash scripts/check-warc.sh

check-warc: chromium
	bash scripts/check-warc.sh

chromium:
	@{ command -v chromium >/dev/null && fc-list :lang=zh | grep -q .; } || { apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-zenhei; }

# The search page and JSON API over the demo's indexes (after make demo):
# http://127.0.0.1:7700/
SERVE_ADDR ?= 127.0.0.1:7700
serve: build
	$(BIN)/luntan-serve --index-dir $(or $(SERVE_INDEX),target/demo/index) --data $(or $(SERVE_DATA),target/demo/data) --addr $(SERVE_ADDR)

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The real-software test bed (realworld/README.md): forum and comment
# packages from PyPI, npm and Debian installed, filled with Chinese text and
# served on loopback, then crawled with the file luntan-learn writes and with
# a hand-written one, each thread compared with the package's own database. Needs the registries and
# minutes, so it is not part of make test. PACKAGES=machina,… for some.
# Chromium: the learner draws the Isso blog's articles to find its comments.
.PHONY: realworld
realworld: build chromium
	python3 realworld/run.py $(if $(PACKAGES),--packages $(PACKAGES),)

# A site file learned from a forum's home page: make learn URL=http://… SITE=id
learn: build
	@test -n "$(URL)" || { echo "make learn: give the forum's home page as URL=http://…" >&2; exit 2; }
	$(BIN)/luntan-learn --data $(DATA) $(if $(SITE),--id $(SITE),) $(URL)

discover: build
	$(BIN)/luntan-discover --data $(DATA) $(SITEARG)

download: build
	$(BIN)/luntan-download --data $(DATA) $(SITEARG)

extract: build
	$(BIN)/luntan-extract --data $(DATA) $(SITEARG)

# Pictures and attachments, for the forums whose site file has <media>.
media: build
	$(BIN)/luntan-media --data $(DATA) $(SITEARG)

index: build
	$(BIN)/luntan-index --data $(DATA) --index-dir $(INDEX) $(SITEARG)

# After a site-file change: extract one forum again from its saved HTML and
# update its index; no request is sent.
reextract: build
	@test -n "$(SITE)" || { echo "make reextract needs SITE=<id>"; exit 2; }
	$(BIN)/luntan-extract --data $(DATA) --site $(SITE) --again
	$(BIN)/luntan-index --data $(DATA) --index-dir $(INDEX) --site $(SITE)

reindex: build
	@test -n "$(SITE)" || { echo "make reindex needs SITE=<id>"; exit 2; }
	$(BIN)/luntan-index --data $(DATA) --index-dir $(INDEX) --rebuild --site $(SITE)

search: build
	$(BIN)/luntan-search --index-dir $(INDEX) $(Q)

status: build
	$(BIN)/luntan-status --data $(DATA)

# Rounds forever: each stage picks up what the last one left; discover skips
# boards that are not due on their adaptive schedule.
watch: build
	while true; do \
	  $(BIN)/luntan-discover --data $(DATA) $(SITEARG) && \
	  $(BIN)/luntan-download --data $(DATA) $(SITEARG) && \
	  $(BIN)/luntan-extract --data $(DATA) $(SITEARG) && \
	  $(BIN)/luntan-index --data $(DATA) --index-dir $(INDEX) $(SITEARG) || exit $$?; \
	  sleep $(WATCH_SECS); \
	done

bench-search:
	$(CARGO) bench -p luntan-search --bench search

# Load on luntan-serve's /api/search from wrk over bench-search's indexes
# (LUNTAN_BENCH_THREADS, default 200000; SERVE_LOAD_SECS per run). Not in make test.
bench-serve:
	bash bench/serve/run.sh

clean-demo:
	rm -rf target/demo

# Benchmarks against Scrapy, Whoosh + jieba and the machine's limits; writes
# BENCHMARKS.md. BENCH_SCALE=small for a quick run (bench/README.md).
BENCH_SCALE ?= full
.PHONY: bench
bench:
	BENCH_SCALE=$(BENCH_SCALE) bash bench/bench.sh
