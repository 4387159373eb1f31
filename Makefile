# luntan: `make demo` runs the whole pipeline on the bundled fixture forum;
# `make test` runs every test. See README.md.

CARGO   ?= cargo
DATA    ?= data
INDEX   ?= index
SITE    ?=
BIN     := $(or $(CARGO_TARGET_DIR),target)/release
SITEARG := $(if $(SITE),--site $(SITE),)

WATCH_SECS ?= 60

.PHONY: all build demo test lint discover download extract index reextract reindex search status watch bench-search clean-demo

all: build

build:
	$(CARGO) build --release --workspace --bins

demo: build
	bash scripts/demo.sh

# The formatting and lint checks come first: CI fails on either.
test: lint
	$(CARGO) test --workspace --no-fail-fast

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

discover: build
	$(BIN)/luntan-discover --data $(DATA) $(SITEARG)

download: build
	$(BIN)/luntan-download --data $(DATA) $(SITEARG)

extract: build
	$(BIN)/luntan-extract --data $(DATA) $(SITEARG)

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

clean-demo:
	rm -rf target/demo

# Benchmarks against Scrapy, Whoosh + jieba and the machine's limits; writes
# BENCHMARKS.md. BENCH_SCALE=small for a quick run (bench/README.md).
BENCH_SCALE ?= full
.PHONY: bench
bench:
	BENCH_SCALE=$(BENCH_SCALE) bash bench/bench.sh
