"""Partition values that need escaping in paths (``=``, ``/``, ``%``, spaces, non-ASCII):
icefloe writes the files where the manifests say they are (no percent-decoding of its own
``file:`` locations, as Java's Hadoop file system), so Java reads every row; icefloe reads
them back; a row delete on such a partition works too."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from test_catalog_oracle import paths, spark_catalog  # noqa: F401

pytestmark = pytest.mark.java

VALUES = ["c=d", "e/f", "50%", "x y", "ü", "plain"]


def test_escaped_partition_values_round_trip_with_java(spark, paths):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("k", pa.string())])
    t = cat.create_table("db.p", schema, partition_spec=[("k", "identity")])
    data = pa.table(
        {"id": pa.array(range(60), pa.int64()), "k": [VALUES[i % len(VALUES)] for i in range(60)]},
        schema=schema,
    )
    t.append(data)
    for task in t.scan().plan_files():
        assert Path(task.file_path.removeprefix("file://").removeprefix("file:")).is_file(), task.file_path
    expected = sorted((r["id"], r["k"]) for r in data.to_pylist())
    assert sorted((r.id, r.k) for r in spark.table(f"{sc}.db.p").collect()) == expected
    assert sorted((r["id"], r["k"]) for r in t.scan().to_arrow().to_pylist()) == expected

    t.delete("k = 'c=d' and id < 30")
    expected = [(i, k) for i, k in expected if not (k == "c=d" and i < 30)]
    assert sorted((r.id, r.k) for r in spark.table(f"{sc}.db.p").collect()) == expected
