# ai-memory: build · run · test · bench · proto · lint
BIN     ?= bin
PLUGINS := core graph admin archive
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/ai-memory/ai-memory/internal/cli.Version=$(VERSION)

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
TOOLS := $(CURDIR)/.tools/bin

.PHONY: build run test bench proto lint clean

build: ## Host at $(BIN)/ai-memory, plugins beside it, and their SHA-256 manifest.
	@mkdir -p $(BIN)
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ai-memory ./cmd/host
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

test: build $(TSCLIENT) ## Vet, then every unit and end-to-end test.
	go vet ./...
	AI_MEMORY_TEST_BIN=$(CURDIR)/$(BIN) go test -count=1 -timeout 20m ./...

bench: build ## Benchmarks: engine, plugin and host latency, RSS.
	AI_MEMORY_TEST_BIN=$(CURDIR)/$(BIN) go test -run '^$$' -bench . -benchmem -timeout 30m ./...

proto: ## Regenerate proto/ Go code with pinned generators (needs protoc).
	GOBIN=$(TOOLS) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(TOOLS):$$PATH protoc -I proto \
		--go_out=proto --go_opt=paths=source_relative \
		--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
		proto/aimemory/v1/*.proto

lint: ## gofmt and vet.
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$'))" || (gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$'); exit 1)
	go vet ./...

clean:
	rm -rf $(BIN)
