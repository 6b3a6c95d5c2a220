# Stowage: `just run` starts everything locally, `just test` runs what CI checks.

set shell := ["bash", "-euo", "pipefail", "-c"]

export PATH := justfile_directory() + "/.tools/bin:" + env_var("PATH")
export DATABASE_URL := env_var_or_default("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/stowage")
export OBJECT_STORE_URL := env_var_or_default("OBJECT_STORE_URL", "file://" + justfile_directory() + "/data/objects")

default:
    @just --list

# Ensure Postgres, migrate, provision a dev workspace (prints its keys), start both services.
run:
    scripts/ensure-postgres.sh
    scripts/create-db.sh "$DATABASE_URL"
    @echo "run: building cdn-api, logs-api and stowctl (the first build takes about 6 minutes on 2 cores, later ones seconds)"
    cargo build -p cdn-api -p logs-api -p stowctl
    @echo "run: provisioning the dev workspace (keys are kept in target/dev-keys.json and printed again while they work)"
    target/debug/stowctl dev-setup --keys-file target/dev-keys.json
    @echo "API host:        http://${CDN_API_ADDR:-127.0.0.1:8080}/v1   (OpenAPI: /v1/openapi.json)"
    @echo "Ingestion host:  http://${LOGS_API_ADDR:-127.0.0.1:8081}/v1   (FiveMesh SDK: FIVEMESH_LOGS_API_URL=http://${LOGS_API_ADDR:-127.0.0.1:8081})"
    @echo "Public delivery: http://${CDN_API_ADDR:-127.0.0.1:8080}/cdn/dev/<key>"
    @echo "Web console:     http://${CONSOLE_ADDR:-127.0.0.1:8082}/   (sign in with the developer key above)"
    @echo "Stop with Ctrl-C."
    scripts/run-services.sh target/debug target/dev-keys.json

# Everything CI checks: formatting, lints, crate boundaries, file sizes, the console's types and formatting, unused dependencies, dependency licences and sources (cargo-deny) and every test against real Postgres.
test:
    scripts/ensure-postgres.sh
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    scripts/check-boundaries.sh
    scripts/check-sizes.sh
    scripts/console-check.sh
    cargo machete
    cargo fetch --locked  # every crate of the lock file, other platforms' too: cargo-deny reads them all
    cargo deny --offline check licenses bans sources
    scripts/drop-test-dbs.sh
    if command -v cargo-nextest >/dev/null; then cargo nextest run --workspace --no-fail-fast; else cargo test --workspace --no-fail-fast; fi
    scripts/e2e.sh
    scripts/s3-tests.sh
    scripts/contract.sh
    scripts/docs-check.sh
    scripts/nginx-e2e.sh

# Only the proxy test: both services behind deploy/nginx/stowage.conf (also part of `just test`).
nginx-e2e:
    scripts/nginx-e2e.sh

# Release binaries (cdn-api, logs-api, stowctl) installed into {{prefix}}/bin (docs/operations.md, "Production walkthrough").
release prefix="/opt/stowage":
    cargo build --release -p cdn-api -p logs-api -p stowctl
    install -D -m 0755 -t "{{prefix}}/bin" target/release/cdn-api target/release/logs-api target/release/stowctl

# Only the docs check: every curl recipe of README.md and docs/api.md against a fresh stack (also part of `just test`).
docs-check:
    scripts/docs-check.sh

# Known vulnerabilities in dependencies (RustSec); needs network access to fetch the advisory database.
audit:
    cargo deny check advisories

# Only the headless-Chromium tests: an upload through an upload URL, and the console with its screenshots (also part of `just test`).

e2e:
    scripts/ensure-postgres.sh
    scripts/e2e.sh

# Every benchmark; writes docs/benchmarks.md and target/bench/results.json.
bench:
    scripts/bench.sh full

# Every benchmark on a small data set (a few minutes; the ingestion soak one minute of each kind).
bench-quick:
    scripts/bench.sh quick

# Only the schemathesis contract test of both OpenAPI documents (also part of `just test`).
contract:
    scripts/contract.sh

# Only the CDN tests against a real S3-compatible server (SeaweedFS from PyPI; also part of `just test`).
s3:
    scripts/s3-tests.sh

# Only the ingestion benchmark (HTTP batches vs raw COPY, the cost of each index, and the ingest ceiling of the shipped index set against the 2026-11-25 set).
bench-ingest mode="quick":
    BENCH_ONLY=ingest scripts/bench.sh {{mode}}

# Only the ingestion soak: ten minutes of HTTP ingestion, then ten of two-session COPY, per minute (quick: one minute each, per 15 s).
bench-soak mode="quick":
    BENCH_ONLY=soak scripts/bench.sh {{mode}}

# Only the log-query benchmark (first page and 5-page walks per filter).
bench-query mode="quick":
    BENCH_ONLY=query scripts/bench.sh {{mode}}

# Apply migrations to DATABASE_URL.
migrate:
    scripts/ensure-postgres.sh
    scripts/create-db.sh "$DATABASE_URL"
    cargo run -q -p stowctl -- migrate
