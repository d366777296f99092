#!/usr/bin/env bash
# The main job: set everything up, let Java Iceberg (through PySpark) write a real table,
# then inspect it with the icefloe CLI and check icefloe's transforms against Java's partitions.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate
exec python scripts/demo.py "$@"
