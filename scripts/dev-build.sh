#!/usr/bin/env bash
# Fast rebuilds while developing, with Cargo's `quick` profile (release optimisation, no LTO,
# parallel and incremental codegen: see Cargo.toml). Not for benchmarks: those use release.
#   scripts/dev-build.sh py    the Python extension, copied to python/icefloe/_native.abi3.so
#   scripts/dev-build.sh jni   the JNI library and the Spark connector jar (build-connector.sh)
#   scripts/dev-build.sh       both
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
what="${1:-all}"
if [[ "$what" == py || "$what" == all ]]; then
  cargo build --profile quick --quiet -p icefloe-py
  case "$(uname -s)" in
    Darwin) built=target/quick/lib_native.dylib ;;
    *) built=target/quick/lib_native.so ;;
  esac
  # copy, not move or link: a running Python keeps its mapping of the old file
  cp "$built" python/icefloe/_native.abi3.so.tmp
  mv python/icefloe/_native.abi3.so.tmp python/icefloe/_native.abi3.so
  echo "[dev-build] python/icefloe/_native.abi3.so (profile quick)"
fi
if [[ "$what" == jni || "$what" == all ]]; then
  bash scripts/build-connector.sh quick
fi
