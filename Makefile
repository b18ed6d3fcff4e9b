# ai-memory: build · run · test · bench · proto · lint
BIN     ?= bin
PLUGINS := core graph admin power archive
# Go modules of the workspace (go.work): go vet/test ./... stop at a module's edge.
MODULES := . sdk examples/notes
# The release number lives in internal/version (Number); a build says which
# commit it is unless HEAD is the clean tag v<Number> (docs/releasing.md).
NUMBER  := $(shell sed -n 's/^const Number = "\(.*\)"$$/\1/p' internal/version/version.go)
COMMIT  := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
DIRTY   := $(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo .dirty)
TAGGED  := $(shell git tag --points-at HEAD 2>/dev/null | grep -qx 'v$(NUMBER)' && echo yes)
BUILD   ?= $(if $(and $(TAGGED),$(if $(DIRTY),,yes)),release,$(if $(COMMIT),dev+$(COMMIT)$(DIRTY)))
VERSION := $(NUMBER)$(if $(filter-out release,$(BUILD)),$(if $(BUILD),-$(BUILD)))
LDFLAGS := -s -w -X github.com/ai-memory/ai-memory/internal/version.build=$(BUILD)

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
TOOLS := $(CURDIR)/.tools/bin

PREFIX  ?= /usr/local
DIST    := dist
# GOOS/GOARCH pairs make release builds (windows is not supported: the engine serves a unix socket).
RELEASE_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: build run test bench harness-bench proto proto-check lint clean install uninstall release release-docs

build: ## Host at $(BIN)/ai-memory, plugins beside it, and their SHA-256 manifest.
	@mkdir -p $(BIN)
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ai-memory ./cmd/ai-memory
	@for p in $(PLUGINS); do \
		echo "go build $(BIN)/ai-memory-$$p"; \
		go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ai-memory-$$p ./plugins/$$p || exit 1; \
	done
	cd $(BIN) && sha256sum $(addprefix ai-memory-,$(PLUGINS)) > plugins.sha256

run: ## Serve MCP on stdio with the default data dir and profile.
	@# stdout belongs to MCP alone: the build reports on stderr.
	@$(MAKE) --no-print-directory -s build >&2
	@exec $(BIN)/ai-memory mcp

TSCLIENT := e2e/tsclient/node_modules/.package-lock.json

$(TSCLIENT): e2e/tsclient/package-lock.json ## The official MCP TypeScript client for one e2e test.
	@if command -v npm >/dev/null; then npm ci --prefix e2e/tsclient --no-audit --no-fund --silent; \
	else echo "npm not found: the TypeScript SDK client test will be skipped" >&2; fi

CONFORMANCE := e2e/conformance/node_modules/.package-lock.json

$(CONFORMANCE): e2e/conformance/package-lock.json ## The MCP conformance suite for the HTTP e2e test.
	@if command -v npm >/dev/null; then npm ci --prefix e2e/conformance --no-audit --no-fund --silent; \
	else echo "npm not found: the conformance suite test will be skipped" >&2; fi

TSSDK := sdk/typescript/node_modules/.package-lock.json

$(TSSDK): sdk/typescript/package-lock.json ## The TypeScript SDK's dependencies (its test runs from e2e).
	@if command -v npm >/dev/null; then npm ci --prefix sdk/typescript --no-audit --no-fund --silent; \
	else echo "npm not found: the TypeScript SDK test will be skipped" >&2; fi

CONSOLE := e2e/console/node_modules/.package-lock.json

# playwright-core drives the system's Chromium (no browser download: no
# install scripts); axe-core checks accessibility.
$(CONSOLE): e2e/console/package-lock.json ## The web console's browser test (playwright-core, axe-core).
	@if command -v npm >/dev/null; then npm ci --prefix e2e/console --ignore-scripts --no-audit --no-fund --silent; \
	else echo "npm not found: the console's browser test will be skipped" >&2; fi

HARNESSES := e2e/harness/node_modules/.installed

# --ignore-scripts skips the harnesses' native builds (keytar, node-pty), which
# the suite needs not; Claude Code's own postinstall (it copies the platform's
# binary in place) is run by name.
$(HARNESSES): e2e/harness/package-lock.json ## The real harnesses of the real-harness suite (Claude Code, Codex, Gemini CLI).
	@if command -v npm >/dev/null; then \
		npm ci --prefix e2e/harness --ignore-scripts --no-audit --no-fund --silent && \
		node e2e/harness/node_modules/@anthropic-ai/claude-code/install.cjs && touch $@; \
	else echo "npm not found: the real-harness suite will be skipped" >&2; fi

test: build proto-check $(TSCLIENT) $(CONFORMANCE) $(TSSDK) $(CONSOLE) $(HARNESSES) ## Vet, then every unit and end-to-end test, in every module.
	@for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && go vet ./...) || exit 1; done
	@for m in $(MODULES); do echo "go test ($$m)"; (cd $$m && AI_MEMORY_TEST_BIN=$(CURDIR)/$(BIN) go test -count=1 -timeout 30m ./...) || exit 1; done
	@echo "go test (the families' e2e tests again, every data dir on PostgreSQL)"
	AI_MEMORY_TEST_BACKEND=postgres AI_MEMORY_TEST_BIN=$(CURDIR)/$(BIN) go test -count=1 -timeout 20m -run '$(PG_FAMILY_TESTS)' ./e2e

# The e2e tests of every family's behaviour (lifecycle, archive, governance,
# graph, webhooks, messages, meta, power, transfer, core and ranking),
# rerun on PostgreSQL: the same answers over MCP on both backends. Tests
# that open the bbolt file itself have PostgreSQL twins in
# e2e/postgres_test.go and pgstore.
PG_FAMILY_TESTS := ^(TestIsolation|TestNarrowedAndRevoked|TestArchive|TestArchivedNodes|TestLifecycle|TestGovernance|TestGraph|TestWebhook|TestSubscri|TestExportImport|TestPowerInbox|TestNotify|TestMeta|TestPower|TestStoreGetList|TestStoreConflict|TestValidationErrors|TestRanking|TestRetrieval|TestScenario)

harness-bench: build $(HARNESSES) ## First-try expansions out of 20 in the real harnesses, at 0 and 2 s of model latency.
	go run ./e2e/harness/cmd/harness-bench --bin $(BIN) --runs 20 --latency 0s,2s

bench: build ## Benchmarks: engine, plugin and host latency, RSS.
	AI_MEMORY_TEST_BIN=$(CURDIR)/$(BIN) go test -run '^$$' -bench . -benchmem -timeout 30m ./...

# Where make proto writes the Go of proto/ (package aimemoryv1, inside the
# SDK module so that one replace builds a plugin); proto-check points it at
# a scratch directory.
PROTO_OUT ?= sdk/wire
PROTO_GO := github.com/ai-memory/ai-memory/sdk/wire

proto: ## Regenerate the Go of proto/ into sdk/wire/aimemoryv1 with pinned generators (needs protoc).
	GOBIN=$(TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(TOOLS):$$PATH protoc -I proto \
		--go_out=$(PROTO_OUT) --go_opt=module=$(PROTO_GO) \
		--go-grpc_out=$(PROTO_OUT) --go-grpc_opt=module=$(PROTO_GO) \
		proto/aimemory/v1/*.proto

proto-check: ## Fail when the committed generated code is not what `make proto` makes of the .proto files.
	@if ! command -v protoc >/dev/null; then \
		if [ -n "$$CI" ]; then echo "proto-check: protoc is missing (apt-get install protobuf-compiler)"; exit 1; fi; \
		echo "proto-check: skipped, protoc is not installed"; exit 0; fi; \
	out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	$(MAKE) --no-print-directory -s proto PROTO_OUT=$$out && \
	same=$$([ "$$(cd $$out/aimemoryv1 && ls *.pb.go)" = "$$(cd sdk/wire/aimemoryv1 && ls *.pb.go)" ] && echo yes); \
	for f in $$out/aimemoryv1/*.pb.go; do cmp -s "$$f" "sdk/wire/aimemoryv1/$${f##*/}" || same=; done; \
	[ -n "$$same" ] || { echo "proto-check: the generated code in sdk/wire/aimemoryv1 differs from what its .proto files make; run make proto"; exit 1; }; \
	echo "proto-check: generated code matches the .proto files"

lint: ## gofmt and vet.
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$'))" || (gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$'); exit 1)
	@for m in $(MODULES); do (cd $$m && go vet ./...) || exit 1; done

install: build ## Install into $(PREFIX): lib/ai-memory/ (binary, plugins, manifest) and bin/ai-memory, a symlink to it.
	install -d $(DESTDIR)$(PREFIX)/lib/ai-memory $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/ai-memory $(addprefix $(BIN)/ai-memory-,$(PLUGINS)) $(DESTDIR)$(PREFIX)/lib/ai-memory/
	install -m 0644 $(BIN)/plugins.sha256 $(DESTDIR)$(PREFIX)/lib/ai-memory/
	ln -sfn ../lib/ai-memory/ai-memory $(DESTDIR)$(PREFIX)/bin/ai-memory
	@echo "installed $(PREFIX)/bin/ai-memory (plugins in $(PREFIX)/lib/ai-memory); check with: $(PREFIX)/bin/ai-memory doctor"

uninstall: ## Remove what install put into $(PREFIX).
	rm -f $(DESTDIR)$(PREFIX)/bin/ai-memory
	rm -rf $(DESTDIR)$(PREFIX)/lib/ai-memory

release: ## One .tar.gz per RELEASE_TARGETS entry in dist/, and dist/SHA256SUMS.
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; name=ai-memory-$(VERSION)-$$os-$$arch; dir=$(DIST)/$$name; \
		echo "release $$name"; mkdir -p $$dir; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags '$(LDFLAGS)' -o $$dir/ai-memory ./cmd/ai-memory || exit 1; \
		for p in $(PLUGINS); do \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags '$(LDFLAGS)' -o $$dir/ai-memory-$$p ./plugins/$$p || exit 1; \
		done; \
		(cd $$dir && sha256sum $(addprefix ai-memory-,$(PLUGINS)) > plugins.sha256) || exit 1; \
		$(MAKE) --no-print-directory -s release-docs DEST=$$dir || exit 1; \
		tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name || exit 1; rm -rf $$dir; \
	done
	cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS && cat SHA256SUMS

# Beside the binaries, an archive carries the README, every file it links
# to, the changelog and the licence (TestReleaseDocs checks the links).
RELEASE_DOCS := README.md CHANGELOG.md LICENSE $(wildcard docs/*.md docs/console/*.png) sdk/typescript/README.md sdk/python/README.md

release-docs: ## Copy RELEASE_DOCS into DEST, keeping their paths.
	@test -n "$(DEST)" || { echo "release-docs: DEST=dir is required" >&2; exit 2; }
	@for f in $(RELEASE_DOCS); do mkdir -p "$(DEST)/$$(dirname $$f)" && cp $$f "$(DEST)/$$f" || exit 1; done

clean:
	rm -rf $(BIN) $(DIST)
