"""Spark catalogs for the connector's tests: Java Iceberg's ``SparkCatalog`` (JdbcCatalog) and
icefloe's connector (``io.icefloe.spark.SparkCatalog``) over one SQLite catalog file, the
connector opening the rows of the Java catalog's name, so that the same tables are read and
written both ways in one Spark session."""

from __future__ import annotations

from pathlib import Path

import icefloe
from icefloe.spark import connector


def configure_twin_catalogs(spark, root: Path, java: str, ice: str) -> tuple[str, str]:
    """Configures Spark catalogs ``java`` and ``ice`` over ``root/catalog.db`` (warehouse
    ``root/wh``); returns the catalog file and the warehouse."""
    db = str(root / "catalog.db")
    warehouse = (root / "wh").as_uri()
    for k, v in {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "jdbc",
        ".uri": f"jdbc:sqlite:{db}",
        ".warehouse": warehouse,
        ".jdbc.schema-version": "V1",
        ".cache-enabled": "false",
    }.items():
        spark.conf.set(f"spark.sql.catalog.{java}{k}", v)
    for k, v in {
        "": connector.CATALOG_CLASS,
        ".uri": f"sqlite:///{db}",
        ".warehouse": warehouse,
        ".catalog-name": java,
    }.items():
        spark.conf.set(f"spark.sql.catalog.{ice}{k}", v)
    return db, warehouse


def twin_catalogs(spark, root: Path, java: str, ice: str):
    """Configures Spark catalogs ``java`` and ``ice`` over ``root/catalog.db`` (warehouse
    ``root/wh``) and returns icefloe's catalog of those rows, with namespace ``db`` made."""
    db, warehouse = configure_twin_catalogs(spark, root, java, ice)
    catalog = icefloe.load_catalog(java, uri=f"sqlite:///{db}", warehouse=warehouse)
    catalog.create_namespace("db")
    return catalog
