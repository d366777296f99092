"""Shared fixtures. Tests marked ``java`` use Java Iceberg (PySpark + py4j) as the oracle.

The Java side needs the jars that ``scripts/setup.sh`` puts in ``.cache/jars``; without them the
``java`` tests fail with a pointer to the setup script. Deselect them with ``-m "not java"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oracle as _oracle  # noqa: E402


def pytest_configure(config):
    # Also declared in pyproject.toml; registering here keeps --strict-markers happy when pytest
    # runs with another rootdir/config.
    config.addinivalue_line("markers", "java: conformance test against Java Iceberg via PySpark + py4j")


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    missing = _oracle.missing_jars()
    if missing:
        pytest.fail(f"Java oracle jars missing ({', '.join(map(str, missing))}); run scripts/setup.sh first")
    pytest.importorskip("pyspark", reason="pyspark is not installed (see requirements-dev.txt)")
    warehouse = tmp_path_factory.mktemp("java-warehouse")
    view_warehouse = tmp_path_factory.mktemp("java-view-warehouse")
    session = _oracle.start_spark(warehouse, view_warehouse)
    session._icefloe_warehouse = warehouse  # type: ignore[attr-defined]
    session._icefloe_view_warehouse = view_warehouse  # type: ignore[attr-defined]
    yield session
    session.stop()


@pytest.fixture(scope="session")
def jvm(spark):
    return spark._jvm


@pytest.fixture(scope="session")
def oracle(jvm):
    return _oracle.Oracle(jvm)


@pytest.fixture(scope="session")
def java_tables_info(spark):
    return _oracle.create_java_tables(spark, spark._icefloe_warehouse)


@pytest.fixture(scope="session")
def java_tables(java_tables_info):
    """``[(name, latest_metadata_json_path)]`` of the Java-written tables."""
    return [(name, _oracle.metadata_files(d)[-1]) for name, d in sorted(java_tables_info["tables"].items())]


@pytest.fixture(scope="session")
def manifest_tables(spark):
    """name -> latest metadata file of the tables built for the manifest and scan tests."""
    return _oracle.create_manifest_tables(spark)


@pytest.fixture(scope="session")
def java_table_dirs(java_tables_info):
    return sorted(java_tables_info["tables"].items())


@pytest.fixture(scope="session")
def java_metadata_versions(java_tables_info):
    """``[(name, path)]`` for every metadata version of every Java-written table."""
    out = []
    for name, d in sorted(java_tables_info["tables"].items()):
        out.extend((f"{name}/{p.name}", p) for p in _oracle.metadata_files(d))
    return out


@pytest.fixture(scope="session")
def java_views(spark):
    """``[(name, view_metadata_path)]`` of views Java wrote (in-memory catalog, Hadoop file IO)."""
    try:
        views = _oracle.create_java_views(spark, spark._icefloe_view_warehouse)
    except Exception as e:  # noqa: BLE001
        pytest.skip(
            f"Spark/Iceberg could not create views in the in-memory catalog: {str(e).splitlines()[0]}"
        )
    return sorted(views.items())
