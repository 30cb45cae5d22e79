# The few verbs people type. See README.md.
.PHONY: run test lint bench fmt crds conformance race

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

fmt:
	cargo fmt --all

crds: ## Print every CRD as YAML
	cargo run -p controllers --bin controllers -- crds

conformance: ## Compare the fake API server with a real v1.36 server (needs ../shared/conformance)
	cargo build -p fake-apiserver --bin fake-apiserver
	./target/debug/fake-apiserver --listen 127.0.0.1:18443 & pid=$$!; sleep 1; \
	(cd ../shared/conformance && python3 run.py --server http://127.0.0.1:18443 --out /tmp/fake-apiserver-conformance.json \
	  && { python3 compare.py golden-k8s-1.36.json /tmp/fake-apiserver-conformance.json --quiet || true; }); \
	status=$$?; kill $$pid; exit $$status

RACE_SEEDS ?= 2000
RACE_COMBINED_SEEDS ?= 10000
race: ## Every guard of both controllers: held over RACE_SEEDS seeds (determinism checked), its removal found; then the exhaustive searches
	cargo build --release -p harness --bin harness
	@status=0; \
	./target/release/harness race --seeds $(RACE_SEEDS) --combined-seeds $(RACE_COMBINED_SEEDS) --check-determinism || status=1; \
	cargo test --release -p harness --test exhaustive -- --include-ignored || status=1; \
	exit $$status
