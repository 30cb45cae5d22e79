# The few verbs people type. See README.md.
MIRROR ?= /work/.mirror

.PHONY: run test lint bench bench-instructions bench-scale fmt crds schemas bootstrap-image go-shapes conformance race fuzz

run: ## Run both controllers against the embedded (in-process) fake API server
	cargo run -p controllers --bin controllers -- demo

test: ## Run every test in the workspace (cargo-nextest if installed, else cargo test)
	@if command -v cargo-nextest >/dev/null 2>&1; then \
		cargo nextest run --workspace --no-fail-fast; \
	else \
		echo "cargo-nextest not found; using cargo test (install: cargo install --locked cargo-nextest)"; \
		cargo test --workspace --no-fail-fast; \
	fi

lint: ## Formatting and clippy, as CI runs them
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

bench: ## Print the fake API server's speed and memory figures
	cargo build --release -p fake-apiserver --bin fake-apiserver --example bench
	cargo run --release -p fake-apiserver --example bench
	cargo run --release -p harness --bin harness -- bench

bench-instructions: ## The server's instructions per request of each server-only bench operation, by callgrind (deterministic, unlike the speed figures; needs valgrind)
	cargo build --release -p fake-apiserver --example bench
	python3 fake-apiserver/tools/instructions.py --bench target/release/examples/bench

bench-scale: ## Both controllers at scale against the fake API server (SCALE_SIZES=1000,3000 for a quick run)
	cargo run --release -p controllers --example scale

fmt:
	cargo fmt --all

crds: ## Print every CRD as YAML
	cargo run -p controllers --bin controllers -- crds

schemas: ## Regenerate the built-in kinds' stored apply schemas (after a k8s-openapi upgrade)
	FAKE_APISERVER_UPDATE_SCHEMAS=1 cargo test -p fake-apiserver --lib the_stored_schemas_are_the_generated_ones

bootstrap-image: ## Record again the start-up writes a new server replays (after a change to the bootstrap policy or to how those kinds are written)
	FAKE_APISERVER_UPDATE_BOOTSTRAP=1 cargo test -p fake-apiserver --lib the_recorded_image_is_up_to_date

go-shapes: ## Regenerate the built-in kinds' Go encoding tables from k8s.io/api (needs git checkouts: MIRROR=/work/.mirror)
	python3 fake-apiserver/tools/go_shapes.py --api $(MIRROR)/kubernetes+api/repo \
	  --apimachinery $(MIRROR)/kubernetes+apimachinery/repo \
	  --apiextensions $(MIRROR)/kubernetes+apiextensions-apiserver/repo \
	  --aggregator $(MIRROR)/kubernetes+kube-aggregator/repo \
	  > fake-apiserver/src/rules/go_encoding/shapes.rs

conformance: ## Compare the fake API server with a real v1.36 kube-apiserver (recorded without controller-manager, so run bare; needs ../shared/conformance)
	cargo build -p fake-apiserver --bin fake-apiserver
	./target/debug/fake-apiserver --no-controllers --listen 127.0.0.1:18443 & pid=$$!; sleep 1; \
	(cd ../shared/conformance && python3 run.py --server http://127.0.0.1:18443 --out /tmp/fake-apiserver-conformance.json \
	  && { python3 compare.py golden-k8s-1.36.json /tmp/fake-apiserver-conformance.json --quiet || true; }); \
	status=$$?; kill $$pid; exit $$status

RACE_SEEDS ?= 2000
RACE_COMBINED_SEEDS ?= 10000
race: ## Every guard of both controllers: held over RACE_SEEDS seeds (determinism checked), its removal found; then the exhaustive searches
	cargo build --release -p harness --bin harness
	@status=0; \
	./target/release/harness race --seeds $(RACE_SEEDS) --combined-seeds $(RACE_COMBINED_SEEDS) --check-determinism || status=1; \
	cargo test --release -p harness --test integration exhaustive:: -- --include-ignored || status=1; \
	exit $$status

FUZZ_CASES ?= 200000
FUZZ_SEED ?= 1
MODEL_SEEDS ?= 200
fuzz: ## The server's integrity at length: FUZZ_CASES random HTTP requests (seed FUZZ_SEED), then the model test over MODEL_SEEDS seeds
	FUZZ_CASES=$(FUZZ_CASES) FUZZ_SEED=$(FUZZ_SEED) cargo test --release -p fake-apiserver --test integration -- --nocapture fuzz::random_requests
	MODEL_SEEDS=$(MODEL_SEEDS) cargo test --release -p fake-apiserver --test integration -- --nocapture model::concurrent_clients
