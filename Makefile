# jsinformer — see README.md. Everything builds from the Go module proxy; nothing prebuilt is
# downloaded. bin/ is git-ignored and caches the control plane and tools between runs.

GOLANGCI_LINT_VERSION := v2.15.0
BIN := $(CURDIR)/bin
GO_TEST_FLAGS ?= -race -count=1 -timeout 25m
BENCH ?= .
# The runner's version (`runner --version`): the nearest v* tag, else "devel". The go command
# stamps the commit (-buildvcs), except in a git worktree: COMMIT stands in there.
VERSION ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
GO_LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
IMAGE ?= jsinformer:latest
IMAGE_ARCH ?= $(shell go env GOARCH)
# Modules besides the main one whose tests `make test` runs (see their doc.go for why separate).
EXTRA_MODULES := hack/monitoring

.PHONY: all build image controlplane test unit lint vet demo bench screenshots clean help

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

build: ## build bin/runner
	go build -buildvcs=auto -ldflags '$(GO_LDFLAGS)' -o $(BIN)/runner ./cmd/runner

image: ## container image without a daemon: bin/image (OCI layout), bin/image.tar (docker load); docs/deploy.md
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -buildvcs=auto -trimpath -ldflags '-s -w $(GO_LDFLAGS)' -o $(BIN)/image-runner ./cmd/runner
	go run ./internal/cmd/image -binary $(BIN)/image-runner -out $(BIN)/image -tar $(BIN)/image.tar -tag $(IMAGE) -version $(VERSION)

controlplane: ## build bin/kube-apiserver and bin/etcd from source (cached)
	@hack/controlplane/build.sh

vet:
	go vet ./...
	for m in $(EXTRA_MODULES); do (cd $$m && go vet ./...) || exit 1; done

$(BIN)/golangci-lint:
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(BIN)/golangci-lint ## golangci-lint (pinned) over every module
	$(BIN)/golangci-lint run ./...
	for m in $(EXTRA_MODULES); do (cd $$m && $(BIN)/golangci-lint run ./...) || exit 1; done

unit: ## fast tests only, no control plane (go test -short)
	go test -short ./...
	for m in $(EXTRA_MODULES); do (cd $$m && go test -short ./...) || exit 1; done

test: controlplane vet lint ## everything CI runs: vet, lint, and all tests with -race against a real control plane
	go test $(GO_TEST_FLAGS) ./...
	for m in $(EXTRA_MODULES); do (cd $$m && go test $(GO_TEST_FLAGS) ./...) || exit 1; done

bench: controlplane ## benchmarks against a real control plane; see docs/benchmarks.md
	go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime 1x -timeout 60m ./bench/...

demo: build controlplane ## start a local control plane with sample objects and run the runner on examples/scripts
	@# examples/scripts/11-outdated-images.js imports semver, pinned in examples/scripts/package.json.
	@if command -v npm >/dev/null 2>&1; then npm install --prefix examples/scripts --no-save --ignore-scripts --no-audit --no-fund --silent; \
	else echo "demo: npm not found; examples/scripts/11-outdated-images.js will not load (it imports the npm package semver)"; fi
	go build -o $(BIN)/demo ./internal/cmd/demo
	$(BIN)/demo -runner $(BIN)/runner -scripts examples/scripts

screenshots: controlplane ## refresh docs/screenshots/*.png from the web page's browser tests (needs chromium)
	mkdir -p docs/screenshots
	SCREENSHOTS=$(CURDIR)/docs/screenshots go test -count=1 -timeout 15m -run '^(TestWebPage|TestPageUnderLoad)$$' ./cmd/runner/ ./debugapi/web/

clean:
	rm -rf $(BIN)
