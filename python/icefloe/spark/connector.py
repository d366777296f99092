"""Turning on icefloe's Spark DataSource V2 connector from Python.

The connector (``jvm/icefloe-spark``: a Spark catalog, scan planning and reading in icefloe's
Rust core through JNI) ships inside icefloe's wheel as two jars in ``icefloe/spark/jars``:
``icefloe-spark.jar``, which carries the native library for its platform, and Arrow's
``arrow-c-data`` jar, which Spark does not ship. :func:`configure` adds them to a
``SparkSession.Builder``, as ``delta-spark``'s ``configure_spark_with_delta_pip`` does::

    from pyspark.sql import SparkSession
    import icefloe.spark

    builder = (SparkSession.builder
               .config("spark.sql.catalog.ice", "io.icefloe.spark.SparkCatalog")
               .config("spark.sql.catalog.ice.uri", "sqlite:////data/catalog.db")
               .config("spark.sql.catalog.ice.warehouse", "file:///data/warehouse"))
    spark = icefloe.spark.configure(builder).getOrCreate()
    spark.sql("SELECT * FROM ice.db.events WHERE id > 5").show()
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError

__all__ = ["configure", "connector_jars", "CATALOG_CLASS", "NATIVE_LIBRARY_ENV"]

JAR_DIR = Path(__file__).resolve().parent / "jars"
CONNECTOR_JAR = "icefloe-spark.jar"
CATALOG_CLASS = "io.icefloe.spark.SparkCatalog"
# read by the connector's NativeLoader before it falls back to the library inside the jar
NATIVE_LIBRARY_ENV = "ICEFLOE_NATIVE_LIBRARY"


def connector_jars() -> list[Path]:
    """The connector's jars in this installation: ``icefloe-spark.jar`` first, then the jars
    it needs that Spark does not ship. Raises ``UnsupportedError`` when this installation
    has none (an icefloe built without the JVM connector)."""
    connector = JAR_DIR / CONNECTOR_JAR
    if not connector.is_file():
        raise UnsupportedError(
            f"this icefloe installation has no Spark connector ({connector} is missing): "
            "build it with scripts/setup.sh, or install a wheel that carries it"
        )
    others = sorted(p for p in JAR_DIR.glob("*.jar") if p.name != CONNECTOR_JAR)
    return [connector, *others]


def _merged(existing: str | None, added: list[str], sep: str) -> str:
    parts = [p for p in (existing or "").split(sep) if p]
    return sep.join(parts + [a for a in added if a not in parts])


def configure(builder: Any, *, native_library: str | os.PathLike[str] | None = None) -> Any:
    """Adds the connector's jars to a ``SparkSession.Builder`` (``spark.jars``, so that
    executors get them, and the driver's and executors' class paths) and returns the builder.

    The native library comes from inside ``icefloe-spark.jar``; ``native_library`` names one
    to load instead (a development build), for the driver and for executors on this machine.
    Options already on the builder are kept: the jars are appended to them.
    """
    jars = [str(p) for p in connector_jars()]
    options = getattr(builder, "_options", {})
    builder = builder.config("spark.jars", _merged(options.get("spark.jars"), jars, ","))
    for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
        builder = builder.config(key, _merged(options.get(key), jars, os.pathsep))
    if native_library is not None:
        path = str(Path(native_library).resolve())
        # the driver JVM that PySpark starts inherits this process's environment
        os.environ[NATIVE_LIBRARY_ENV] = path
        builder = builder.config(f"spark.executorEnv.{NATIVE_LIBRARY_ENV}", path)
    return builder
