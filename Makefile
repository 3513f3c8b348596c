# cairn — workspaces and artifacts for containerised agent tools.
# `make help` lists the targets.

GO       ?= go
BIN      := $(CURDIR)/bin
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
export PATH := $(BIN):/usr/local/go/bin:$(PATH)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## install what is missing (docker.io, busybox-static, postgresql, versitygw, SeaweedFS, the MCP test clients from npm) and start dockerd
	@scripts/deps.sh

.PHONY: build
build: ## build bin/cairn, bin/cairn-tui and the static bin/cairn-sidecar
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/cairn ./cmd/cairn
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/cairn-tui ./cmd/cairn-tui
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/cairn-sidecar ./cmd/cairn-sidecar

.PHONY: images
images: build ## build the cairn-sidecar, cairn-shell and cairn server images locally (no registry)
	cp /etc/ssl/certs/ca-certificates.crt $(BIN)/
	DOCKER_BUILDKIT=0 docker build -q -f Dockerfile.sidecar -t cairn-sidecar:latest .
	mkdir -p $(BIN)/shell && cp /usr/bin/busybox $(BIN)/shell/busybox
	DOCKER_BUILDKIT=0 docker build -q -f Dockerfile.shell -t cairn-shell:latest $(BIN)/shell
	DOCKER_BUILDKIT=0 docker build -q -f Dockerfile -t cairn:latest .

.PHONY: up
up: deps build ## start the local stack in the background (state in .cairn/)
	@scripts/up.sh

.PHONY: down
down: ## stop the local stack and remove its state, containers and volumes
	@scripts/down.sh

.PHONY: run
run: up ## install, start the local stack if it is not up, and open cairn-tui on it (quitting leaves it running)
	@$(BIN)/cairn-tui

.PHONY: lint
lint: ## go vet, gofmt, golangci-lint (.golangci.yml) and the go.mod tidiness check
	$(GO) vet ./...
	$(GO) vet -tags kube,chaos ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy'"; exit 1; }
	$(BIN)/golangci-lint run ./...
	$(BIN)/golangci-lint run --build-tags kube,chaos ./...

.PHONY: docs
docs: ## regenerate the generated docs (docs/configuration.md, tui/keys/keys.md): go generate ./...
	$(GO) generate ./...

.PHONY: test
# The TUI's budget tests time key presses and weigh the heap: they run on
# their own after the rest, so that no other package's tests share the
# two cores while they measure.
BUDGET := ^(TestKeypressBudget10k|TestMemory10k|TestPaletteBudget10k)$$

test: deps build lint ## every test, against real Postgres, versitygw (and SeaweedFS), Docker and a local Kubernetes cluster
	CI=$${CI:-true} $(GO) test -count=1 -timeout 30m -skip '$(BUDGET)' ./...
	CI=$${CI:-true} $(GO) test -count=1 -p 1 -run '$(BUDGET)' -v ./tui/ ./tui/screens/artifacts/ ./tui/widgets/palette/
	@$(MAKE) --no-print-directory store-conformance
	@scripts/smoke.sh
	@$(MAKE) --no-print-directory chaos
	@scripts/k8s-test.sh

# The store-conformance suite: every test whose outcome rests on the store's
# behaviour — its adapter, the REST artifact, staging, multipart, transfer and
# archive routes, the first cairn's demo client, the client's uploads and
# downloads — once more against SeaweedFS (`make test` ran them on versitygw).
STORE_REST := ^(TestArtifact|TestListArtifacts|TestDeleteArtifact|TestGetArtifactQuery|TestStaging|TestObjectSizeCap|TestRegisterKeys|TestReplace|TestConcurrentReplace|TestTransfer|TestArchives|TestDemoClientCalls)
STORE_CLIENT := ^(TestInfo|TestContract|TestMultipart|TestRangedDownloadResume|TestTransfers|TestDownload|TestStoreUnreachable)

.PHONY: store-conformance
store-conformance: deps build ## the store-dependent tests against SeaweedFS (STORE=versitygw for the default store)
	CI=$${CI:-true} CAIRN_TEST_STORE=$${STORE:-seaweedfs} $(GO) test -count=1 -timeout 20m ./server/s3/
	CI=$${CI:-true} CAIRN_TEST_STORE=$${STORE:-seaweedfs} $(GO) test -count=1 -timeout 20m -run '$(STORE_REST)' ./server/rest/
	CI=$${CI:-true} CAIRN_TEST_STORE=$${STORE:-seaweedfs} $(GO) test -count=1 -timeout 20m -run '$(STORE_CLIENT)' ./client/

.PHONY: chaos
chaos: deps build ## the fault suite: kill, restart and cut the real stack's parts under load, check nothing acknowledged is lost or leaked
	CI=$${CI:-true} $(GO) test -count=1 -p 1 -tags chaos -timeout 20m -v ./internal/chaos/

# The benchmarks of the byte paths, whose ratios rest on the store: `make
# bench` runs them once per store, each line naming its store.
STORE_BENCH := ^(BenchmarkCLITransfer|BenchmarkMultipartUpload|BenchmarkVolumeTransfer|BenchmarkArchives|BenchmarkRegisterSideBySide)$$

.PHONY: bench
bench: deps build ## benchmarks against the real stack, printed as ratios (the byte paths once per store)
	CI=true $(GO) test -run '^$$' -bench . -skip '$(STORE_BENCH)' -benchtime 3s ./...
	@for store in versitygw seaweedfs; do \
		echo "== the byte paths on $$store"; \
		CI=true CAIRN_TEST_STORE=$$store $(GO) test -run '^$$' -bench '$(STORE_BENCH)' -benchtime 1x -timeout 60m \
			./cmd/cairn/ ./server/ ./server/rest/ || exit 1; \
	done
	@scripts/k8s-test.sh bench

.PHONY: k8s-up
k8s-up: ## start a local Kubernetes cluster, NODES=2 for two nodes (state in .cairn/k8s; binaries built once into ~/.cache/cairn/k8s; run 'make images' first)
	@$(if $(NODES),CAIRN_K8S_NODES=$(NODES)) scripts/k8s-up.sh

.PHONY: k8s-down
k8s-down: ## stop the local Kubernetes cluster and put the host back as it was
	@scripts/k8s-down.sh
