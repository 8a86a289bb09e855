# svc: build, demo and test targets. `make help` lists them.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin
VECTORS := testdata/vectors
FUZZTIME ?= 20000x
# Explicit test timeouts, at least three times what the slowest package
# takes on a busy 2-core machine (docs/BENCHMARKS.md, "Test suite"): CI
# machines are shared.
TEST_TIMEOUT ?= 45m
# One version for the binaries and the offline verifier page they embed
# (svc --version, the dashboard footer, /verify): git describe, as
# goreleaser's {{.Version}} for releases. Without ldflags (go build, go
# install) svc names its module's VCS revision instead (pkg/app/cli/clicore).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/svc-gov/svc/pkg/app/cli/clicore.version=$(VERSION) -X github.com/svc-gov/svc/pkg/app/cli/clicore.commit=$(COMMIT)

.PHONY: help quick setup ort build web chromium demo test unit interop fuzz lint docs vectors bench bench-hash bench-verify bench-ingest bench-pg-append bench-web release-check clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

setup: ## install missing tools (openssl, jq, xxd) and Go modules
	@scripts/setup.sh

build: web ## build bin/svc and bin/svc-verify (svc embeds the offline verifier page)
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/svc ./cmd/svc   # with cgo: the ONNX Runtime commands work
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/svc-verify ./cmd/svc-verify

web: ## build the offline verifier page (WebAssembly inlined) into pkg/service/dashboard/verifypage/verify.html for svc serve to embed
	$(GO) run ./internal/webbuild/genverify -o pkg/service/dashboard/verifypage/verify.html -version "$(VERSION)"

chromium: ## install Chromium for the browser tests if missing (prints its path)
	@scripts/install-chromium.sh

demo: setup build ort ## svc quickstart end to end, svc-verify on its VPEC, a tampered copy failing
	@scripts/demo.sh

test: setup lint unit fuzz ## everything CI runs

unit: ## go test ./... with throwaway PostgreSQL and MariaDB servers, a loopback witness (omniwitness), SoftHSM2 (PKCS#11 keys), the Hugging Face tokenizers oracle and snarkjs, then the race detector on server, client, stores, transparency log, the VPEC reader, held inference outputs and asynchronous traces
	@set -e; \
	export SVC_ORT_LIB=$$(scripts/install-ort.sh); \
	SVC_HF_TOKENIZERS=$$(scripts/install-tokenizers.sh); export SVC_HF_TOKENIZERS; \
	SVC_SNARKJS=$$(scripts/install-snarkjs.sh); export SVC_SNARKJS; \
	SVC_CHROMIUM=$$(scripts/install-chromium.sh); export SVC_CHROMIUM; \
	SVC_QEMU=$$(scripts/install-qemu.sh); export SVC_QEMU SVC_REQUIRE_QEMU=1; \
	SVC_OMNIWITNESS=$$(scripts/install-witness.sh); export SVC_OMNIWITNESS SVC_REQUIRE_WITNESS=1; \
	SVC_SOFTHSM=$$(scripts/install-softhsm.sh); export SVC_SOFTHSM SVC_REQUIRE_SOFTHSM=1; \
	dsn=$$(scripts/postgres.sh start | sed -n 's/^SVC_TEST_POSTGRES_DSN=//p'); \
	test -n "$$dsn" || { echo "unit: PostgreSQL did not start (scripts/postgres.sh start)"; exit 1; }; \
	trap 'scripts/postgres.sh stop >/dev/null 2>&1; scripts/mariadb.sh stop >/dev/null 2>&1' EXIT; \
	SVC_TEST_MARIADB_DSN=$$(scripts/mariadb.sh start | sed -n 's/^SVC_TEST_MARIADB_DSN=//p'); \
	test -n "$$SVC_TEST_MARIADB_DSN" || { echo "unit: MariaDB did not start (scripts/mariadb.sh start)"; exit 1; }; \
	export SVC_TEST_MARIADB_DSN SVC_REQUIRE_MARIADB=1; \
	log=$$(mktemp); \
	SVC_TEST_POSTGRES_DSN="$$dsn" $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./... 2>&1 | tee "$$log"; \
	status=$${PIPESTATUS[0]}; \
	echo "slowest packages (timeout $(TEST_TIMEOUT) each):"; \
	grep -E '^(ok|FAIL)[[:space:]]' "$$log" | awk '{print $$3, $$2}' | sort -rn | head -5 | sed 's/^/  /'; \
	rm -f "$$log"; \
	test "$$status" -eq 0; \
	echo "sigstore-go on svc export bundles (module internal/sigstoretest):"; \
	(cd internal/sigstoretest && GOFLAGS=-mod=mod $(GO) vet ./... && GOFLAGS=-mod=mod $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...); \
	echo "race detector on the concurrent packages:"; \
	SVC_TEST_POSTGRES_DSN="$$dsn" $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./pkg/service/server ./pkg/client ./pkg/service/store/... ./pkg/core/tlog/... ./pkg/core/vpec ./pkg/core/verify ./pkg/service/logwriter ./pkg/ml/inference ./pkg/ml/trace ./pkg/client/bounded

quick: ## the fast loop: go test -short with ONNX Runtime (cached) and no servers, browser or emulator (their tests skip)
	SVC_ORT_LIB=$$(scripts/install-ort.sh) $(GO) test -short -count=1 -timeout 15m ./...

fuzz: ## run every fuzz target briefly (FUZZTIME=20000x executions each)
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l . ; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...   # svc-verify and cross-compiled svc build without cgo
	GOOS=js GOARCH=wasm $(GO) vet ./cmd/svc-verify-wasm ./pkg/app/webverify   # the offline verifier page's WebAssembly
	CGO_ENABLED=0 $(GO) test ./pkg/ml/inference ./pkg/service/keys   # and say they have no ONNX Runtime or PKCS#11

interop: ## opt-in: cosign v2.6.5 (built once into the cache: ~4 min, 1.8 GB of modules cold) verifies svc export bundles and in-toto attestations
	@set -e; \
	cosign=$$(scripts/install-cosign.sh); \
	PATH="$$(dirname "$$cosign"):$$PATH" bash -o pipefail -c 'cd internal/sigstoretest && GOFLAGS=-mod=mod $(GO) test -count=1 -v ./... | grep -E "^(---|ok|FAIL)"'; \
	out=$$(PATH="$$(dirname "$$cosign"):$$PATH" $(GO) test -count=1 ./pkg/app/cli -run '^TestScripts$$/^export$$' -v) || { echo "$$out"; exit 1; }; \
	echo "$$out" | grep -q '> exec cosign verify-blob' || { echo "$$out"; echo "interop: cosign did not run"; exit 1; }; \
	echo "$$out" | grep -E -- '--- PASS: TestScripts/export'

ort: ## install the pinned ONNX Runtime library into the cache (prints its path)
	@scripts/install-ort.sh

docs: ## regenerate the CLI reference, man pages and completions
	$(GO) run ./internal/gendocs

vectors: ## regenerate the test vectors (keys are kept)
	$(GO) run ./internal/testvectors/genvectors $(VECTORS)

bench: ## Go benchmarks of the verifier, hashing, Merkle and timestamps
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

bench-web: ## the offline verifier page in Chromium vs svc verify on a 10,000-record VPEC, and the WebAssembly size
	SVC_WEB_BENCH=1 SVC_CHROMIUM=$$(scripts/install-chromium.sh) $(GO) test ./pkg/service/dashboard -run '^TestWebFigures$$' -count=1 -v -timeout 10m

bench-hash: build ## svc-verify hash vs openssl dgst -sha256 on a 1 GiB file
	SVC_VERIFY=$(BIN)/svc-verify scripts/bench-hash.sh

bench-verify: ## the release-built svc-verify (CGO_ENABLED=0, -trimpath, goreleaser ldflags), whole process, vs jq empty on a 10,000-record VPEC; start-up
	scripts/bench-verify.sh

bench-ingest: ## record ingest, batch API, whole runs/s (tlog on and off) and close against svc serve on loopback (BACKEND=sqlite|postgres, WHOLE_RUNS=16, SERVERS=1|2)
	scripts/bench-ingest.sh

bench-pg-append: ## PostgreSQL alone (pgbench, no svc): SELECT 1, a committed INSERT, svc's one-statement append, eight appends a transaction, a whole run's statements; CPU per transaction
	scripts/bench-pg-append.sh

bench-zk: ## Groth16 proofs of MLP heads: constraints, prove/verify time, sizes, peak RSS per phase
	scripts/bench-zk.sh

release-check: ## validate .goreleaser.yaml with the pinned goreleaser (scripts/install-goreleaser.sh builds it once into the cache: minutes cold)
	@goreleaser=$$(scripts/install-goreleaser.sh) && "$$goreleaser" check

clean:
	rm -rf $(BIN) dist
