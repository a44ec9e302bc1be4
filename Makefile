# folio's build and test entry points. `make test` is what CI runs.
GO ?= go
GOFLAGS_TEST ?= -race -count=1 -timeout 50m

.PHONY: test test-go test-large test-pg fmt-check vet build bench tidy-check
.PHONY: web-deps web-build web-test web-lint web-check web-e2e web-bench screenshots

# Go checks first, then the web app: unit and component tests, the linter, the type check
# and the committed-build staleness check, then the browser suite.
test: fmt-check vet test-go test-large web-test web-lint web-check web-e2e

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test-go:
	$(GO) test $(GOFLAGS_TEST) ./...

# The race detector slows the 300,000-message paging walk ~40x, so under
# -race it runs at 20,000; this runs it at full size without the detector.
test-large:
	$(GO) test -count=1 -run 'A300k' ./server

# The PostgreSQL suites alone, on a throwaway cluster (.ci/pg-start needs
# Debian's postgresql). make test runs them too whenever
# FOLIO_TEST_DATABASE_URL is set.
test-pg:
	@eval "$$(.ci/pg-start --export)"; trap '.ci/pg-stop "$$FOLIO_PG_DIR"' EXIT; \
	$(GO) test $(GOFLAGS_TEST) ./store/... ./history/... && \
	$(GO) test $(GOFLAGS_TEST) -run 'Replica|LogImport|StoreUnreachable' ./server ./internal/cli

# A release binary: stripped of the symbol table and DWARF (-s -w), with
# its version stamped in (folio --version prints it). VERSION
# defaults to git describe; BIN is where it goes. go run ./cmd/folio builds
# without any of this and reports the development version.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
BIN ?= bin/folio
LDFLAGS := -s -w -X github.com/foliodev/folio/internal/cli.Version=$(VERSION)

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/folio

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The web app (web/). Node dependencies come only from web/package-lock.json.
WEB := web
NPM ?= npm

WEB_STAMP := $(WEB)/node_modules/.folio-deps

# npm ci runs only when node_modules is missing or the lock (or package.json)
# is newer than the last install.
web-deps: $(WEB_STAMP)
$(WEB_STAMP): $(WEB)/package-lock.json $(WEB)/package.json
	cd $(WEB) && $(NPM) ci --no-audit --no-fund
	@touch $@

# Rebuild web/dist (commit the result; Go embeds it): the app, then the
# HTML export's self-contained bundle into web/dist/export.
web-build: web-deps
	cd $(WEB) && ./node_modules/.bin/tsc --noEmit && ./node_modules/.bin/vite build && ./node_modules/.bin/vite build -c vite.export.config.ts

web-test: web-deps
	cd $(WEB) && ./node_modules/.bin/vitest run

# ESLint: the TypeScript rules and React's hooks rules (web/eslint.config.js).
web-lint: web-deps
	cd $(WEB) && ./node_modules/.bin/eslint --max-warnings 0 .

# Type check, and fail when the committed web/dist differs from a fresh build.
web-check: web-deps
	cd $(WEB) && ./node_modules/.bin/tsc --noEmit && node scripts/check-dist.mjs

# Browser suite in Debian's Chromium; skipped without it unless CI=true or
# FOLIO_REQUIRE_SUITES=1.
web-e2e: web-deps
	cd $(WEB) && node e2e/run.mjs && node e2e/accounts.mjs

# Browser figures (first paint, frame intervals, retained heap at 300,000 and
# 3,000 messages). Printed, not asserted; not part of `make test`.
web-bench: web-deps
	cd $(WEB) && node e2e/bench.mjs

# PNGs of the app's main states into docs/screenshots/.
screenshots: web-deps
	cd $(WEB) && node e2e/screenshots.mjs
