# leasegen: run `make help` for the targets.
SHELL := /bin/bash
GO ?= go
SQLC := $(GO) tool -modfile=tools.mod sqlc
STATICCHECK := $(GO) tool -modfile=tools.mod staticcheck
# Sets LEASEGEN_MYSQL_DSN and LEASEGEN_POSTGRES_DSN, starting MariaDB and
# PostgreSQL when they are installed but down (CI=true).
MYSQL_ENV := eval "$$(scripts/mysql-env.sh)" && eval "$$(scripts/postgres-env.sh)"

.PHONY: help generate check lint test test-short test-mysql97 test-galera test-replicated mysql97 bench bench-smoke bench-gen demo fuzz ui-screenshots ui-million

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report its own deadline as a failure (golang/go#75804, fixed in Go 1.27).
# 50,000 inputs take about 10 s a target on a 2-core machine.
FUZZTIME ?= 50000x

# Packages outside ./... : the example service and the golden cases.
TESTDATA := ./testdata/example/... ./testdata/golden/...
# Modules of their own, so that their libraries stay out of a service's
# module graph: adapters, and River for the benchmark's comparison.
CONTRIB := contrib/leaseotel bench/river
# Packages with tests on a MySQL server.
MYSQL_PKGS := ./runtime/driver/leasemysql/ ./metrics/ ./internal/leasectl/ ./internal/engines/ ./cmd/leasegen-bench/ ./testdata/example/billing/ ./ui/
# Sets LEASEGEN_MYSQL_DSN to Oracle MySQL 9.7, building and starting it when
# needed; with CI=true a failure fails, elsewhere the caller skips.
MYSQL97_ENV := env=$$(scripts/mysql97.sh env) || { if [ "$${CI:-}" = true ]; then exit 1; fi; \
	echo "MySQL 9.7 tests skipped: run as root so that scripts/mysql97.sh can build it (a Debian sid chroot, once)"; exit 0; }; eval "$$env"
# Sets LEASEGEN_GALERA_DSNS to a three-node MariaDB Galera cluster on
# loopback, starting it when needed; with CI=true a failure fails,
# elsewhere the Galera tests skip.
GALERA_ENV := if env=$$(scripts/galera.sh env); then eval "$$env"; elif [ "$${CI:-}" = true ]; then exit 1; else \
	echo "Galera tests will skip: run as root so that scripts/galera.sh can start a cluster"; fi
# Sets LEASEGEN_GR_DSNS to a three-member MySQL 9.7 Group Replication group
# on loopback (in the chroot of scripts/mysql97.sh), likewise.
GR_ENV := if env=$$(scripts/group-replication.sh env); then eval "$$env"; elif [ "$${CI:-}" = true ]; then exit 1; else \
	echo "Group Replication tests will skip: run as root so that scripts/group-replication.sh can start a group"; fi
# Sets LEASEGEN_PATRONI_URL to PostgreSQL under Patroni (a leader and a
# synchronous standby, etcd), likewise.
PATRONI_ENV := if env=$$(scripts/patroni.sh env); then eval "$$env"; elif [ "$${CI:-}" = true ]; then exit 1; else \
	echo "Patroni tests will skip: run as root so that scripts/patroni.sh can start a cluster"; fi
# The cases that take down a replicated setup's nodes run once, in make test.
REPLICATED := '^Test(Galera|GroupReplication)'
# make test runs those and Patroni's after the rest, one package at a time:
# a node frozen or killed on a machine busy with other packages can take
# minutes to come back.
CLUSTER_TESTS := '^Test(Galera|GroupReplication|Patroni)'

generate: ## regenerate sqlc's code and the example service's leasegen code
	$(SQLC) generate
	$(GO) generate ./runtime/driver/ ./testdata/example/...

check: ## fail when generated code (sqlc, leasegen) is stale or go.mod is not tidy
	$(GO) mod tidy -diff
	@for m in $(CONTRIB); do (cd $$m && $(GO) mod tidy -diff) || exit 1; done
	$(SQLC) diff
	scripts/sqlc-outputs.sh
	$(GO) run ./runtime/driver/internal/tablesgen -check -dir runtime/driver
	cd testdata/example/billing && $(GO) run ../../../cmd/leasegen -check -schema schema.sql -alerts alerts.yml -dashboard dashboard.json -testhelpers

lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./... $(TESTDATA)
	$(STATICCHECK) ./... ./testdata/example/...
	@bin=$$(mktemp -d) && $(GO) build -modfile=tools.mod -o $$bin/staticcheck honnef.co/go/tools/cmd/staticcheck && \
	for m in $(CONTRIB); do (cd $$m && $(GO) vet ./... && $$bin/staticcheck ./...) || exit 1; done; rm -rf $$bin

test: ## all tests; MySQL and PostgreSQL ones on the local servers when they run (CI=true starts them), Galera's, Group Replication's and Patroni's on their nodes
	@$(MYSQL_ENV) && $(GALERA_ENV) && $(GR_ENV) && $(PATRONI_ENV); $(GO) test -count=1 -timeout 15m -skip $(CLUSTER_TESTS) ./... $(TESTDATA) && \
	  $(GO) test -count=1 -timeout 15m -p 1 -run $(CLUSTER_TESTS) ./runtime/driver/leasemysql/ ./runtime/driver/leasepostgres/
	@for m in $(CONTRIB); do (cd $$m && $(GO) test -count=1 ./...) || exit 1; done

test-mysql97: ## the MySQL-engine tests again, on Oracle MySQL 9.7 (127.0.0.1:3307, built by scripts/mysql97.sh)
	@$(MYSQL97_ENV); eval "$$(scripts/postgres-env.sh)"; $(GO) test -count=1 -timeout 15m -skip $(REPLICATED) $(MYSQL_PKGS)

test-galera: ## the MySQL driver's conformance and system suites again, on node 1 of a Galera cluster (scripts/galera.sh)
	@$(GALERA_ENV); [ -n "$${LEASEGEN_GALERA_DSNS:-}" ] || exit 0; export LEASEGEN_MYSQL_DSN="$${LEASEGEN_GALERA_DSNS%%,*}"; \
	$(GO) test -count=1 -timeout 15m -skip $(REPLICATED) ./runtime/driver/leasemysql/

test-replicated: ## the drivers' conformance and system suites again, on the Group Replication primary and the Patroni leader
	@$(GR_ENV); [ -z "$${LEASEGEN_GR_DSNS:-}" ] || { eval "$$(scripts/postgres-env.sh)"; \
	  n=$$(scripts/group-replication.sh primary) && export LEASEGEN_MYSQL_DSN="$$(echo "$$LEASEGEN_GR_DSNS" | cut -d, -f$$n)" && \
	  $(GO) test -count=1 -timeout 15m -run '^Test(Conformance|System)$$' ./runtime/driver/leasemysql/; } || exit 1
	@$(PATRONI_ENV); [ -z "$${LEASEGEN_PATRONI_URL:-}" ] || { \
	  url=$$(scripts/patroni.sh leader-url) && export LEASEGEN_POSTGRES_DSN="$$url" && \
	  $(GO) test -count=1 -timeout 15m -run '^Test(Conformance|System)$$' ./runtime/driver/leasepostgres/; }

mysql97: ## build (once) and start Oracle MySQL 9.7 on 127.0.0.1:3307 for tests, the demo and benchmarks
	scripts/mysql97.sh start

test-short: ## tests without the long concurrency and kill -9 runs
	@$(MYSQL_ENV); $(GO) test -count=1 -short ./... $(TESTDATA)
	@for m in $(CONTRIB); do (cd $$m && $(GO) test -count=1 -short ./...) || exit 1; done

ui-million: ## the UI in headless Chromium on a million tasks on each engine (counts, a retry of 10,000 by filter), screenshots into docs/ui
	@$(MYSQL_ENV); LEASEGEN_UI_MILLION=1000000 LEASEGEN_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(GO) test -count=1 -timeout 60m -run TestInBrowserAtAMillion -v ./ui/

ui-screenshots: ## a screenshot of each UI page, taken by headless Chromium, into docs/ui
	LEASEGEN_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(GO) test -count=1 -run TestInBrowser ./ui/
	@echo "UI screenshots in $(CURDIR)/docs/ui"

demo: ## the demo: three worker processes, a kill -9, on an embedded SQLite file
	$(GO) run ./cmd/leasegen-demo

fuzz: ## short fuzz runs (FUZZTIME each, default 50000x inputs) of the annotation parser and payload decoding
	$(GO) test ./gen -run '^$$' -fuzz FuzzParseDirective -fuzztime $(FUZZTIME)
	$(GO) test ./testdata/example/billing -run '^$$' -fuzz FuzzNotifyPayloadDecoding -fuzztime $(FUZZTIME)

bench-smoke: ## run each Go benchmark of the hot paths once, so that they keep working
	@$(MYSQL_ENV); $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./runtime/driver/leasemysql/ ./runtime/driver/leasesqlite/ ./runtime/driver/leasepostgres/

bench-gen: ## time leasegen (example, 100 payloads) next to stringer, cold and warm
	scripts/gen-bench.sh

bench: ## Go benchmarks of the hot paths, then leasegen-bench (the full table, ~15 min an engine and, on the servers, the held snapshot's 11 more) on SQLite and, when up, MariaDB, MySQL 9.7 (make mysql97) and PostgreSQL beside River
	@$(MYSQL_ENV); $(GO) test -run '^$$' -bench . -benchtime 2s ./runtime/driver/leasemysql/ ./runtime/driver/leasesqlite/ ./runtime/driver/leasepostgres/
	$(GO) run ./cmd/leasegen-bench -sqlite
	@if mariadb-admin -uroot --protocol=tcp -h127.0.0.1 ping >/dev/null 2>&1; then \
		$(GO) run ./cmd/leasegen-bench -mysql 'root@tcp(127.0.0.1:3306)/'; \
	else echo "MariaDB is not up: its figures skipped"; fi
	@if mariadb-admin -uroot --protocol=tcp -h127.0.0.1 -P3307 ping >/dev/null 2>&1; then \
		$(GO) run ./cmd/leasegen-bench -mysql 'root@tcp(127.0.0.1:3307)/'; \
	else echo "MySQL 9.7 is not up (make mysql97 starts it): its figures skipped"; fi
	@eval "$$(scripts/postgres-env.sh)"; if [ -n "$${LEASEGEN_POSTGRES_DSN:-}" ]; then \
		bin=$$(mktemp -d) && $(GO) build -C bench/river -o $$bin/riverbench . && \
		$(GO) run ./cmd/leasegen-bench -postgres "$$LEASEGEN_POSTGRES_DSN" -river $$bin/riverbench; rm -rf $$bin; \
	else echo "PostgreSQL is not up: its figures, and River's, skipped"; fi
