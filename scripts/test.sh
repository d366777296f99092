#!/usr/bin/env bash
# Full check: environment setup, Rust tests, clippy, Python tests (including the Java oracle).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\n[test] === %s\n' "$*"; }
t0=$SECONDS

step "setup"
# the extension and the JNI library with Cargo's quick profile (release optimisation without
# LTO): the same code as a release build in a fraction of its build time; the wheel and the
# benchmarks use release builds (plain scripts/setup.sh)
export ICEFLOE_BUILD_PROFILE="${ICEFLOE_BUILD_PROFILE:-quick}"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate

step "object-store and catalog servers"
# moto, Azurite and fake-gcs-server on 127.0.0.1 for crates/icefloe/tests/object_store.rs,
# and two Iceberg REST servers for crates/icefloe/tests/rest_catalog.rs, stopped whatever
# happens next
trap 'bash scripts/servers.sh stop' EXIT
bash scripts/servers.sh start
# shellcheck disable=SC1091
source target/servers/servers.env

step "format and lint"
cargo fmt --all --check
ruff format --check .
ruff check .

step "type check and stub check"
mypy
# the stub of the Rust extension against the built module (its __all__ is allowlisted: PyO3
# makes it at runtime)
(cd python && python -m mypy.stubtest icefloe._native --mypy-config-file ../pyproject.toml \
  --allowlist stubtest-allowlist.txt)

step "cargo test"
# The PyO3 extension crate (cdylib, extension-module) does not link as a test binary.
cargo test --workspace --exclude icefloe-py

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "pytest"
# the slowest tests listed, to keep the run time in view
python -m pytest tests/ -q --durations=25

printf '\n[test] all checks passed in %d s\n' "$((SECONDS - t0))"
