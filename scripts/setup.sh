#!/usr/bin/env bash
# Prepare a development/test environment from a fresh clone. Safe to re-run: every step
# skips work that is already done.
#   .venv/                     Python virtualenv with pinned dev deps + icefloe (maturin develop)
#   .cache/azurite-*/          Azurite (npm), for the object-store tests (scripts/servers.sh)
#   .cache/jars/               Iceberg Spark runtime jar, Iceberg AWS bundle and the SQLite JDBC
#                              driver (from Maven Central) + icefloe-oracle.jar, and the Iceberg REST server jar
#                              (iceberg-open-api, fetched by scripts/servers.sh install)
#   python/icefloe/spark/jars/ the Spark connector (jvm/icefloe-spark, Maven) with icefloe's JNI
#                              library (crates/icefloe-jni) inside it, and arrow-c-data, which
#                              Spark does not ship; the wheel carries both (pyproject.toml)
#   .cache/wheels/             wheels of icefloe's runtime dependencies, so that the
#                              standalone-cluster test builds its executors' environment
#                              from icefloe's wheel offline (tests/test_spark_standalone.py)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

ICEBERG_VERSION="1.11.0"
SPARK_SCALA="4.1_2.13"
RUNTIME_ARTIFACT="org.apache.iceberg:iceberg-spark-runtime-${SPARK_SCALA}:${ICEBERG_VERSION}"
RUNTIME_JAR=".cache/jars/iceberg-spark-runtime-${SPARK_SCALA}-${ICEBERG_VERSION}.jar"
ORACLE_JAR=".cache/jars/icefloe-oracle.jar"
# SQLite JDBC driver: Java's JdbcCatalog opens the catalog files icefloe writes (tests/test_catalog_oracle.py)
SQLITE_JDBC_VERSION="3.50.3.0"
SQLITE_JDBC_ARTIFACT="org.xerial:sqlite-jdbc:${SQLITE_JDBC_VERSION}"
SQLITE_JDBC_JAR=".cache/jars/sqlite-jdbc-${SQLITE_JDBC_VERSION}.jar"
# AWS SDK bundle: the runtime jar has Java's S3FileIO but not the SDK it calls; the Java side of
# tests/test_rest_s3_interop.py reads and writes tables on S3 (moto) through it
AWS_BUNDLE_ARTIFACT="org.apache.iceberg:iceberg-aws-bundle:${ICEBERG_VERSION}"
AWS_BUNDLE_JAR=".cache/jars/iceberg-aws-bundle-${ICEBERG_VERSION}.jar"
PYTHON="${PYTHON:-python3}"
# Cargo profile of the Python extension and the JNI library: release (thin LTO, one codegen
# unit: what the wheel ships and the benchmarks measure) unless ICEFLOE_BUILD_PROFILE names
# another; scripts/test.sh uses quick (the same optimisation without LTO, built in a fraction
# of the time; see Cargo.toml)
BUILD_PROFILE="${ICEFLOE_BUILD_PROFILE:-release}"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH ($2)"; }

need "$PYTHON" "Python >= 3.10"
need cargo "Rust toolchain"
need java "Java 17 (Spark 4.1 / Iceberg oracle)"
need javac "a JDK 17, not just a JRE"
need jar "a JDK 17, not just a JRE"
need mvn "Maven (fetches the Iceberg runtime jar)"

# --- Python virtualenv --------------------------------------------------------------------
if [[ ! -x .venv/bin/python ]]; then
  log "creating .venv with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate

req_hash="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
stamp=".venv/.requirements-dev.sha256"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$req_hash" ]]; then
  log "installing Python dev dependencies (requirements-dev.txt)"
  python -m pip install --quiet --disable-pip-version-check --upgrade pip
  python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
  echo "$req_hash" > "$stamp"
else
  log "Python dev dependencies up to date"
fi

# --- Servers for the Rust integration tests (moto, Azurite, fake-gcs-server, Iceberg REST) --
bash scripts/servers.sh install

# --- Java side: Iceberg runtime jar + oracle helper ----------------------------------------
mkdir -p .cache/jars
if [[ ! -s "$RUNTIME_JAR" ]]; then
  log "fetching $RUNTIME_ARTIFACT (Maven Central, cached in ~/.m2)"
  mvn -q -B "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy" \
    -Dartifact="$RUNTIME_ARTIFACT" -DoutputDirectory=.cache/jars \
    -Dmdep.overWriteReleases=false
  [[ -s "$RUNTIME_JAR" ]] || die "Maven did not produce $RUNTIME_JAR"
else
  log "Iceberg runtime jar present"
fi

if [[ ! -s "$SQLITE_JDBC_JAR" ]]; then
  log "fetching $SQLITE_JDBC_ARTIFACT (Maven Central, cached in ~/.m2)"
  mvn -q -B "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy" \
    -Dartifact="$SQLITE_JDBC_ARTIFACT" -DoutputDirectory=.cache/jars \
    -Dmdep.overWriteReleases=false
  [[ -s "$SQLITE_JDBC_JAR" ]] || die "Maven did not produce $SQLITE_JDBC_JAR"
else
  log "SQLite JDBC driver present"
fi

if [[ ! -s "$AWS_BUNDLE_JAR" ]]; then
  log "fetching $AWS_BUNDLE_ARTIFACT (Maven Central, cached in ~/.m2)"
  mvn -q -B "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy" \
    -Dartifact="$AWS_BUNDLE_ARTIFACT" -DoutputDirectory=.cache/jars \
    -Dmdep.overWriteReleases=false
  [[ -s "$AWS_BUNDLE_JAR" ]] || die "Maven did not produce $AWS_BUNDLE_JAR"
else
  log "Iceberg AWS bundle present"
fi

oracle_src=(tests/java/*.java)
rebuild_oracle=0
if [[ ! -s "$ORACLE_JAR" || "$RUNTIME_JAR" -nt "$ORACLE_JAR" ]]; then
  rebuild_oracle=1
else
  for f in "${oracle_src[@]}"; do [[ "$f" -nt "$ORACLE_JAR" ]] && rebuild_oracle=1; done
fi
if [[ $rebuild_oracle == 1 ]]; then
  log "compiling Java oracle helper -> $ORACLE_JAR"
  classes="$(mktemp -d)"
  trap 'rm -rf "$classes"' EXIT
  javac --release 17 -nowarn -Xlint:none -cp "$RUNTIME_JAR" -d "$classes" "${oracle_src[@]}"
  jar --create --file "$ORACLE_JAR" -C "$classes" .
else
  log "Java oracle helper up to date"
fi

# --- Spark connector: the JNI library inside the connector's jar ---------------------------
bash scripts/build-connector.sh "$BUILD_PROFILE"

# --- Rust extension into the venv ----------------------------------------------------------
log "building icefloe into .venv (maturin develop, Cargo profile $BUILD_PROFILE)"
start=$SECONDS
if [[ "$BUILD_PROFILE" == release ]]; then
  maturin develop --release --quiet
else
  maturin develop --profile "$BUILD_PROFILE" --quiet
fi
log "icefloe built in $((SECONDS - start)) s"
python -c 'import icefloe, icefloe._native' || die "icefloe does not import after maturin develop"

# --- Runtime dependency wheels, for an environment made from icefloe's wheel alone ------------
wheels_stamp=".cache/wheels/.requirements-dev.sha256"
if [[ ! -f "$wheels_stamp" || "$(cat "$wheels_stamp")" != "$req_hash" ]]; then
  log "downloading the runtime dependency wheels into .cache/wheels"
  mkdir -p .cache/wheels
  # the versions pinned for development; pandas for PySpark's mapInArrow (icefloe.spark.update)
  pins=$(grep -E '^(pyarrow|numpy|pandas)==' requirements-dev.txt)
  # shellcheck disable=SC2086
  python -m pip download --quiet --disable-pip-version-check --only-binary=:all: -d .cache/wheels $pins
  echo "$req_hash" > "$wheels_stamp"
fi

log "done"
