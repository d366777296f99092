#!/usr/bin/env bash
# Build the Spark connector: icefloe's JNI library (crates/icefloe-jni) with the given Cargo
# profile (default release; `quick` while developing, see Cargo.toml), packed by Maven inside
# jvm/icefloe-spark's jar, and copied with arrow-c-data (which Spark does not ship) into
# python/icefloe/spark/jars, where icefloe.spark.configure and the wheel take them from.
# Maven runs offline first (everything cached in ~/.m2), online when something is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PROFILE="${1:-release}"
ARROW_VERSION="18.3.0"   # the arrow-vector that PySpark 4.1 ships
CONNECTOR_DIR="jvm/icefloe-spark"
CONNECTOR_JARS="python/icefloe/spark/jars"

log() { printf '[connector] %s\n' "$*"; }
die() { printf '[connector] ERROR: %s\n' "$*" >&2; exit 1; }
mvn_connector() { mvn -q -B -o "$@" || mvn -q -B "$@"; }

log "building the JNI library (cargo build --profile $PROFILE -p icefloe-jni)"
cargo build --profile "$PROFILE" --quiet -p icefloe-jni
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x86_64; lib=libicefloe_jni.so ;;
  Linux-aarch64) platform=linux-aarch64; lib=libicefloe_jni.so ;;
  Darwin-arm64) platform=darwin-aarch64; lib=libicefloe_jni.dylib ;;
  Darwin-x86_64) platform=darwin-x86_64; lib=libicefloe_jni.dylib ;;
  *) die "no JNI library name for $(uname -s)-$(uname -m)" ;;
esac
# cargo's directory for the dev profile is target/debug; for any other profile its name
out="target/$PROFILE"
[[ "$PROFILE" == dev ]] && out="target/debug"
rm -rf "$CONNECTOR_DIR/target/native"
mkdir -p "$CONNECTOR_DIR/target/native/$platform" "$CONNECTOR_JARS"
cp "$out/$lib" "$CONNECTOR_DIR/target/native/$platform/$lib"
log "building the Spark connector (Maven, $CONNECTOR_DIR)"
(cd "$CONNECTOR_DIR" && mvn_connector package)
cp "$CONNECTOR_DIR/target/icefloe-spark.jar" "$CONNECTOR_JARS/icefloe-spark.jar"
if [[ ! -s "$CONNECTOR_JARS/arrow-c-data-${ARROW_VERSION}.jar" ]]; then
  (cd "$CONNECTOR_DIR" && mvn_connector "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy" \
    -Dartifact="org.apache.arrow:arrow-c-data:${ARROW_VERSION}" -DoutputDirectory="$ROOT/$CONNECTOR_JARS")
  [[ -s "$CONNECTOR_JARS/arrow-c-data-${ARROW_VERSION}.jar" ]] || die "Maven did not produce arrow-c-data"
fi
