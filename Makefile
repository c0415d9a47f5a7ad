# jsinformer — see README.md. Everything builds from the Go module proxy; nothing prebuilt is
# downloaded. bin/ is git-ignored and caches the control plane and tools between runs.

GOLANGCI_LINT_VERSION := v2.15.0
BIN := $(CURDIR)/bin
GO_TEST_FLAGS ?= -race -count=1 -timeout 25m
BENCH ?= .

.PHONY: all build controlplane test unit lint vet demo bench clean help

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

build: ## build bin/runner
	go build -o $(BIN)/runner ./cmd/runner

controlplane: ## build bin/kube-apiserver and bin/etcd from source (cached)
	@hack/controlplane/build.sh

vet:
	go vet ./...

$(BIN)/golangci-lint:
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(BIN)/golangci-lint ## golangci-lint (pinned) over the main module
	$(BIN)/golangci-lint run ./...

unit: ## fast tests only, no control plane (go test -short)
	go test -short ./...

test: controlplane vet lint ## everything CI runs: vet, lint, and all tests with -race against a real control plane
	go test $(GO_TEST_FLAGS) ./...

bench: controlplane ## benchmarks against a real control plane; see docs/benchmarks.md
	go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime 1x -timeout 60m ./bench/...

demo: build controlplane ## start a local control plane with sample objects and run the runner on examples/scripts
	go build -o $(BIN)/demo ./internal/cmd/demo
	$(BIN)/demo -runner $(BIN)/runner -scripts examples/scripts

clean:
	rm -rf $(BIN)
