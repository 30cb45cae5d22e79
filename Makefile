# The few verbs people type. See README.md.
.PHONY: run test lint bench fmt crds

run: ## Run both controllers against the embedded (in-process) fake API server
	cargo run -p controllers --bin controllers -- demo

test: ## Run every test in the workspace
	cargo nextest run --workspace --no-fail-fast

lint: ## Formatting and clippy, as CI runs them
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

bench: ## Print the fake API server's speed and memory figures
	cargo run --release -p fake-apiserver --example bench

fmt:
	cargo fmt --all

crds: ## Print every CRD as YAML
	cargo run -p controllers --bin controllers -- crds
