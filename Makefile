# folio's build and test entry points. `make test` is what CI runs.
GO ?= go
GOFLAGS_TEST ?= -race -count=1

.PHONY: test test-go fmt-check vet build bench tidy-check

test: fmt-check vet test-go

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test-go:
	$(GO) test $(GOFLAGS_TEST) ./...

build:
	$(GO) build -o bin/folio ./cmd/folio

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
