#!/usr/bin/env bash
# Full check: environment setup, Rust tests, clippy, Python tests (including the Java oracle).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\n[test] === %s\n' "$*"; }
t0=$SECONDS

step "setup"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate

step "cargo test"
# The PyO3 extension crate (cdylib, extension-module) does not link as a test binary.
cargo test --workspace --exclude icefloe-py

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "pytest"
python -m pytest tests/ -q

printf '\n[test] all checks passed in %d s\n' "$((SECONDS - t0))"
