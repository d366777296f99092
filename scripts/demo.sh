#!/usr/bin/env bash
# The main job: set everything up, then run a real PySpark pipeline on icefloe's embedded
# default catalog (scripts/pipeline.py: write through Spark, delete with DVs, evolve, read
# back with pushdown, time-travel, cross-check with Java Iceberg). Arguments go to it.
#   --storage s3-rest: on Apache Iceberg's REST catalog server with its warehouse on the local
#   S3 server (moto), both started here (scripts/servers.sh) and stopped at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate
storage=local
prev=""
for arg in "$@"; do
  case "$arg" in
    --storage=*) storage="${arg#--storage=}" ;;
  esac
  if [[ "$prev" == "--storage" ]]; then storage="$arg"; fi
  prev="$arg"
done
if [[ "$storage" == "s3-rest" ]]; then
  trap 'bash scripts/servers.sh stop' EXIT
  bash scripts/servers.sh start
  # shellcheck disable=SC1091
  source target/servers/servers.env
  python scripts/pipeline.py "$@"
else
  exec python scripts/pipeline.py "$@"
fi
