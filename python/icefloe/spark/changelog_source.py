"""The changelog through the Spark source: ``spark.read.format("icefloe").option("changes-from",
start).option("changes-to", end).load("db.t")`` gives what Java's ``create_changelog_view``
gives for those snapshots (``icefloe.scan.changelog.changelog``): the table's columns, then
``_change_type``, ``_change_ordinal``, ``_commit_snapshot_id``. Options:

- ``changes-from``: the start snapshot id, exclusive (absent: from the first snapshot);
  ``changes-to``: the end snapshot id, inclusive (absent: the current snapshot);
  ``changes`` = ``true`` asks for the whole history without either;
- ``identifier-columns`` (comma-separated): ``UPDATE_BEFORE`` / ``UPDATE_AFTER`` pairs;
  ``compute-updates`` (``true``/``false``) as the procedure's parameter;
- ``changes-raw`` = ``true``: the rows of Spark's ``<table>.changes`` instead (carry-overs kept).

The rows are planned in Rust and read in one Spark partition.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from .._native import RESERVED_FIELD_IDS, RESERVED_FIELD_TYPES, FileIO
from ..table import Table
from . import types as T
from .options import ReadOptions, _bool, _int, _lower, _names

# the changelog's metadata columns, with the spec's reserved ids and types (from Rust)
_META_FIELDS = [
    {"id": RESERVED_FIELD_IDS[name], "name": name, "required": True, "type": RESERVED_FIELD_TYPES[name]}
    for name in ("_change_type", "_change_ordinal", "_commit_snapshot_id")
]


@dataclass(frozen=True)
class ChangesOptions:
    from_snapshot: int | None
    to_snapshot: int | None
    identifier_columns: tuple[str, ...] | None
    compute_updates: bool | None
    raw: bool

    @staticmethod
    def of(options: Mapping[str, str]) -> ChangesOptions | None:
        o = _lower(options)
        if not any(k in o for k in ("changes", "changes-from", "changes-to")):
            return None
        ids = _names(o, "identifier-columns")
        return ChangesOptions(
            from_snapshot=_int(o, "changes-from"),
            to_snapshot=_int(o, "changes-to"),
            identifier_columns=None if ids is None else tuple(ids),
            compute_updates=_bool(o, "compute-updates", False) if "compute-updates" in o else None,
            raw=_bool(o, "changes-raw", False),
        )


def changelog_fields(table: Any) -> list[dict]:
    """The Iceberg fields of the changelog rows: the current schema's, then the three
    change columns."""
    return list(json.loads(table.schema().to_json())["fields"]) + _META_FIELDS


def spark_schema(table: Any) -> Any:
    return T.spark_type({"type": "struct", "fields": changelog_fields(table)})


class IcefloeChangelogReader(DataSourceReader):
    def __init__(self, options: dict[str, str], metadata_location: str | None, changes: ChangesOptions):
        self.options = ReadOptions.of(options)
        table = self.options.catalog.load_table()
        self.metadata_location = metadata_location or table.metadata_location
        # the table's FileIO properties (credentials: never logged; the reader is only pickled)
        self.io_properties = table.io.properties_for(table.metadata.location)
        self.changes = changes
        self.fields = changelog_fields(table)
        self.spark_schema_json = spark_schema(table).json()

    def partitions(self) -> list:
        return [InputPartition(0)]

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        io = FileIO(self.metadata_location, self.io_properties or {})
        table = Table.from_metadata(self.metadata_location, io=io)
        c = self.changes
        if c.raw:
            rows = table.changes(c.from_snapshot, c.to_snapshot)
        else:
            rows = table.changelog(
                c.from_snapshot,
                c.to_snapshot,
                identifier_columns=list(c.identifier_columns) if c.identifier_columns else None,
                compute_updates=c.compute_updates,
            )
        target = to_arrow_schema(StructType.fromJson(json.loads(self.spark_schema_json)))
        for batch in rows.to_batches():
            if batch.num_rows:
                yield T.to_spark_batch(batch, self.fields, target)
