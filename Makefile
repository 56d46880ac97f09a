# leasegen: run `make help` for the targets.
SHELL := /bin/bash
GO ?= go
SQLC := $(GO) tool -modfile=tools.mod sqlc
STATICCHECK := $(GO) tool -modfile=tools.mod staticcheck
# Sets LEASEGEN_MYSQL_DSN, starting MariaDB when it is installed but down.
MYSQL_ENV := eval "$$(scripts/mysql-env.sh)"

.PHONY: help generate check lint test test-short bench

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

generate: ## regenerate sqlc's Go code from queries/ and the migrations
	$(SQLC) generate

check: ## fail when generated code is stale
	$(SQLC) diff

lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

test: ## all tests, MySQL ones on a local MariaDB (set up on demand)
	@$(MYSQL_ENV); $(GO) test -count=1 -timeout 15m ./...

test-short: ## tests without the long concurrency and kill -9 runs
	@$(MYSQL_ENV); $(GO) test -count=1 -short ./...

bench: ## Go benchmarks of the hot paths (claim, renew, complete)
	@$(MYSQL_ENV); $(GO) test -run '^$$' -bench . -benchtime 2s ./runtime/
