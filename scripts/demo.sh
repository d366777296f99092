#!/usr/bin/env bash
# The main job: set everything up, then run a real PySpark pipeline on icefloe's embedded
# default catalog (scripts/pipeline.py: write through Spark, delete with DVs, evolve, read
# back with pushdown, time-travel, cross-check with Java Iceberg). Arguments go to it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate
exec python scripts/pipeline.py "$@"
