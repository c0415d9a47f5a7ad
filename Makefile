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
# vet and lint compile with the tests' -race, so the tree is compiled once for all three
# (golangci-lint reads export data from `go list -export`, which honours GOFLAGS).
CHECK_FLAGS := -race
# Tests that build the runner (the image test, the leader-election processes) build it as
# `make image` does; `prebuild` compiles that once before the tests, which then only link.
STATIC_BUILD := CGO_ENABLED=0 go build -trimpath

.PHONY: all build image controlplane test unit lint vet demo bench screenshots clean help modules prebuild test-go test-extra test-compat compat-controlplanes

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

# Static and trimmed like the image, prebuild and the control plane, so that after `make test`
# (or the control plane's build) this only links.
build: ## build bin/runner
	$(STATIC_BUILD) -buildvcs=auto -ldflags '$(GO_LDFLAGS)' -o $(BIN)/runner ./cmd/runner

image: ## container image without a daemon: bin/image (OCI layout), bin/image.tar (docker load); docs/deploy.md
	GOOS=linux GOARCH=$(IMAGE_ARCH) $(STATIC_BUILD) -buildvcs=auto -ldflags '-s -w $(GO_LDFLAGS)' -o $(BIN)/image-runner ./cmd/runner
	go run ./internal/cmd/image -binary $(BIN)/image-runner -out $(BIN)/image -tar $(BIN)/image.tar -tag $(IMAGE) -version $(VERSION)

controlplane: ## build bin/kube-apiserver and bin/etcd from source (cached)
	@hack/controlplane/build.sh

modules: ## download every module's dependencies (make test's first phase)
	go mod download
	for m in $(EXTRA_MODULES); do (cd $$m && go mod download) || exit 1; done

vet:
	go vet $(CHECK_FLAGS) ./...
	for m in $(EXTRA_MODULES); do (cd $$m && go vet $(CHECK_FLAGS) ./...) || exit 1; done

$(BIN)/golangci-lint:
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

# --allow-serial-runners: another golangci-lint on the machine (its lock is machine-wide) makes
# this one wait instead of failing make test.
lint: $(BIN)/golangci-lint ## golangci-lint (pinned) over every module
	GOFLAGS='$(GOFLAGS) $(CHECK_FLAGS)' $(BIN)/golangci-lint run --allow-serial-runners ./...
	for m in $(EXTRA_MODULES); do (cd $$m && GOFLAGS='$(GOFLAGS) $(CHECK_FLAGS)' $(BIN)/golangci-lint run --allow-serial-runners ./...) || exit 1; done

prebuild: ## compile the packages as tests that build the runner do (static, trimmed)
	$(STATIC_BUILD) ./...

unit: ## fast tests only, no control plane (go test -short)
	go test -short ./...
	for m in $(EXTRA_MODULES); do (cd $$m && go test -short ./...) || exit 1; done

# make test runs these phases, each as soon as the phases after ':' have succeeded (the others
# at once, overlapping downloads with builds on a cold machine), and prints each one's wall and
# CPU time at the end, also when one fails; internal/cmd/phases says how. The tests start once
# vet has compiled the tree with -race (they reuse it) and run beside lint: they wait on the
# control plane much of the time, and lint fills those waits. prebuild follows the control
# plane because they share most packages (same flags and versions) and two concurrent go
# commands would each compile them.
TEST_PHASES := \
	'modules=$(MAKE) --no-print-directory modules' \
	'controlplane=$(MAKE) --no-print-directory controlplane' \
	'golangci-lint=$(MAKE) --no-print-directory $(BIN)/golangci-lint' \
	'vet:modules=$(MAKE) --no-print-directory vet' \
	'prebuild:modules,controlplane=$(MAKE) --no-print-directory prebuild' \
	'lint:vet,golangci-lint=$(MAKE) --no-print-directory lint' \
	'test-extra:lint=$(MAKE) --no-print-directory test-extra' \
	'test:controlplane,prebuild,vet=$(MAKE) --no-print-directory test-go'

test: ## everything CI runs: vet, lint, and all tests with -race against a real control plane; times each phase
	@$(STATIC_BUILD) -o $(BIN)/phases ./internal/cmd/phases
	@$(BIN)/phases -title 'make test' $(TEST_PHASES)

# The failures are repeated at the end, where a log cut to its last lines still shows them.
test-go: ## the main module's tests (make test's last phase; needs `make controlplane`)
	@mkdir -p $(BIN)
	@bash -o pipefail -c 'go test $(GO_TEST_FLAGS) ./... 2>&1 | tee $(BIN)/test-go.log' || \
	{ hack/failures.sh $(BIN)/test-go.log; exit 1; }

test-extra: ## the tests of $(EXTRA_MODULES)
	for m in $(EXTRA_MODULES); do (cd $$m && go test $(GO_TEST_FLAGS) ./...) || exit 1; done

# The older minors of the support window (README, "Supported Kubernetes versions"); make test
# covers the newest, v1.37. Each is pinned by hack/compat/<minor>/go.mod.
COMPAT_VERSIONS ?= v1.34 v1.35 v1.36

compat-controlplanes: controlplane ## build kube-apiserver v1.34, v1.35, v1.36 into bin/<version>/ (cached; under nice -n 19)
	@hack/compat/build.sh $(COMPAT_VERSIONS)

# Not part of make test: a cold build of the three API servers takes ~50 CPU-minutes.
test-compat: compat-controlplanes ## the tests that touch the API's behaviour (hack/compat/tests) against kube-apiserver v1.34, v1.35, v1.36
	@GO_TEST_FLAGS='$(GO_TEST_FLAGS)' hack/compat/test.sh $(COMPAT_VERSIONS)

bench: controlplane ## benchmarks against a real control plane; see docs/benchmarks.md
	go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime 1x -timeout 60m ./bench/...

demo: controlplane build ## start a local control plane with sample objects and run the runner on examples/scripts
	@# examples/scripts/11-outdated-images.js imports semver, pinned in examples/scripts/package.json.
	@if command -v npm >/dev/null 2>&1; then npm install --prefix examples/scripts --no-save --ignore-scripts --no-audit --no-fund --silent; \
	else echo "demo: npm not found; examples/scripts/11-outdated-images.js will not load (it imports the npm package semver)"; fi
	$(STATIC_BUILD) -o $(BIN)/demo ./internal/cmd/demo
	$(BIN)/demo -runner $(BIN)/runner -scripts examples/scripts

screenshots: controlplane ## refresh docs/screenshots/*.png from the web page's browser tests (needs chromium)
	mkdir -p docs/screenshots
	SCREENSHOTS=$(CURDIR)/docs/screenshots go test -count=1 -timeout 15m -run '^(TestWebPage|TestPageUnderLoad)$$' ./cmd/runner/ ./debugapi/web/

clean:
	rm -rf $(BIN)
