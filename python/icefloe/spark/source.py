"""The ``icefloe`` Spark data source (``pyspark.sql.datasource``, Spark 4.1).

Where each piece runs: Spark calls ``schema()``, ``reader()``, ``pushFilters()``,
``partitions()``, ``writer()``, ``commit()`` and ``abort()`` in Python worker processes
that the driver's JVM starts, and ``read()`` and ``write()`` in workers on the executors.
Every object crossing between them is pickled, so they hold only strings, bytes and
Spark's filter objects; tables and catalogs are opened where they are used.

Reading: ``schema()`` pins the table's metadata file (later commits do not change what
the query reads) and gives the Spark schema of the scan's projected schema;
``pushFilters()`` keeps the filters it can take over exactly (see ``filters``);
``partitions()`` plans the scan on the pinned metadata with those filters and returns one
partition per bin-packed task group (``plan_task_payloads``: LZ4-compressed Arrow IPC);
``read()`` reads a group with ``icefloe.executor.read.read_tasks`` (deletes and the residual
applied), converts it to Spark's Arrow types and applies the pushed filters with Spark's
semantics.

Writing: ``writer()`` checks the DataFrame's schema against the table's and captures the
table's metadata and a write id; each task writes Parquet data files with
``icefloe.executor.write.write_data_files`` (file names ``<partition>-<task attempt>-<write
id>-<n>.parquet``, as Java names them) and returns their data-file rows as Arrow IPC in
its commit message; ``commit()`` on the driver commits them once (a fast append, or for
``overwrite`` the table's live files replaced by the new ones, as Java's overwriteByRowFilter(true)), recording the write
id in the snapshot summary (``icefloe.write-id``). A commit that fails deletes the files
of the messages (``Transaction.own_files``); ``abort()``, which Spark calls after any
failure, deletes every file of the write id (those of failed task attempts too), unless
the table has a snapshot with that write id (a commit Spark saw fail did land) or the
commit's outcome was unknown (``CommitStateUnknownError``: the table may reference the
files, so they are kept, as Java's ``SparkWrite`` keeps them).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from .. import _native
from .. import expressions as E
from .._native import FileIO, Schema, TableMetadata, iceberg_type_of
from ..errors import CommitStateUnknownError, InvalidArgumentError
from ..executor.files import filesystem_for
from ..executor.read import DEFAULT_BATCH_SIZE, output_schema, read_tasks
from ..executor.write import SPEC_ID_KEY, data_files_from_ipc, data_files_to_ipc, write_data_files
from ..scan import METADATA_TABLES
from ..table import Table
from . import filters as F
from . import types as T
from .changelog_source import ChangesOptions, IcefloeChangelogReader
from .changelog_source import spark_schema as changelog_spark_schema
from .options import ConfCatalogs, ReadOptions, WriteOptions, catalogs_from_conf, with_conf_catalogs

__all__ = [
    "IcefloeDataSource",
    "IcefloeReader",
    "IcefloeScanReader",
    "IcefloeMetadataTableReader",
    "IcefloeWriter",
    "TaskGroup",
    "DataFilesMessage",
    "WRITE_ID_KEY",
]

NAME = "icefloe"
#: snapshot summary key holding the id of the Spark write that made the snapshot
WRITE_ID_KEY = "icefloe.write-id"
PROJECTED_SCHEMA_KEY = _native.PROJECTED_SCHEMA_KEY
SCHEMA_KEY = _native.SCHEMA_KEY

_log = logging.getLogger(__name__)

# the metadata columns Java's Spark integration declares not nullable
_REQUIRED_METADATA = {"_file", "_pos", "_deleted"}


class IcefloeDataSource(DataSource):
    """``spark.read.format("icefloe")`` / ``df.write.format("icefloe")``; options in
    :mod:`icefloe.spark.options`."""

    #: catalogs from Spark conf (``spark.icefloe.catalog.*``), set by :func:`register` on the
    #: class it registers: the data source runs in Python workers, which see no Spark conf
    conf_catalogs: ClassVar[ConfCatalogs] = ()
    conf_default_catalog: ClassVar[str | None] = None

    @classmethod
    def name(cls) -> str:
        return NAME

    def _options(self) -> dict[str, str]:
        return with_conf_catalogs(self.options, self.conf_catalogs, self.conf_default_catalog)

    def schema(self) -> Any:
        if ChangesOptions.of(self._options()) is not None:
            table = ReadOptions.of(self._options()).catalog.load_table()
            self._pinned = table.metadata_location
            return changelog_spark_schema(table)
        options = ReadOptions.of(self._options())
        metadata_table = _metadata_table(options)
        if metadata_table is not None:
            info = _MetadataTableInfo.load(options, *metadata_table)
            self._pinned = info.metadata_location
            return info.spark_schema(options.columns)
        scan = _ScanInfo.load(options)
        # pinned: the reader plans against the very metadata this schema was taken from
        self._pinned = scan.metadata_location
        return scan.spark_schema()

    def reader(self, schema: Any) -> DataSourceReader:
        options = self._options()
        pinned = getattr(self, "_pinned", None)
        changes = ChangesOptions.of(options)
        if changes is not None:
            return IcefloeChangelogReader(options, pinned, changes)
        metadata_table = _metadata_table(ReadOptions.of(options))
        if metadata_table is not None:
            if ReadOptions.of(options).pushdown:
                return IcefloeMetadataTableFilteringReader(options, pinned, metadata_table[1])
            return IcefloeMetadataTableReader(options, pinned, metadata_table[1])
        if ReadOptions.of(options).pushdown:
            return IcefloeReader(options, pinned, schema)
        return IcefloeScanReader(options, pinned, schema)

    def writer(self, schema: Any, overwrite: bool) -> IcefloeWriter:
        return IcefloeWriter(self._options(), schema, overwrite)


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------


@dataclass
class _ScanInfo:
    """A scan as configured by the read options, on one metadata file."""

    options: ReadOptions
    metadata_location: str
    table: Any
    plan_schema: pa.Schema  # the schema of an (empty) plan: the scan's schemas in its metadata

    @staticmethod
    def load(options: ReadOptions, metadata_location: str | None = None) -> _ScanInfo:
        # through the catalog even when pinned: its FileIO holds the table's store settings
        # (a REST catalog's vended credentials)
        table = options.catalog.load_table()
        if metadata_location is None:
            metadata_location = table.metadata_location
        elif metadata_location != table.metadata_location:
            table = Table.from_metadata(metadata_location, io=table.io)
        # planning nothing resolves the snapshot, the scan schema and the projection exactly
        # as planning for real does, at the cost of reading the manifest list only
        plan = _scan(table, options, E.AlwaysFalse()).plan_arrow()
        return _ScanInfo(options, metadata_location, table, plan.schema)

    def schema(self) -> Any:
        """The icefloe Schema the scan reads with (filters bind to it)."""
        return Schema.from_json(self.plan_schema.metadata[SCHEMA_KEY].decode())

    def output_fields(self) -> list[dict]:
        """The Iceberg fields (JSON objects) of the rows read: the projection, then the
        requested metadata columns."""
        fields = list(json.loads(self.plan_schema.metadata[PROJECTED_SCHEMA_KEY])["fields"])
        metadata_columns = self.options.metadata_columns
        if metadata_columns:
            out = output_schema(self.plan_schema, metadata_columns)
            partition_types = self._partition_types()
            for name in metadata_columns:
                f = out.field(name)
                fields.append(
                    {
                        "id": int(f.metadata[_native.PARQUET_FIELD_ID]),
                        "name": name,
                        "required": name in _REQUIRED_METADATA,
                        "type": _iceberg_type_of(f.type, partition_types),
                    }
                )
        return fields

    def _partition_types(self) -> dict[int, Any]:
        """The Iceberg type of every partition field of the table's specs, by field id (the
        plan's partition struct carries e.g. a day as an int, which Spark shows as a date)."""
        schema = self.schema()
        out: dict[int, Any] = {}
        for spec in self.table.metadata.specs:
            try:
                fields = spec.partition_type(schema)
            except Exception:  # noqa: BLE001 (a spec whose source column is gone)
                continue
            transforms = {pf.field_id: pf.transform for pf in spec.fields}
            for f in fields:
                transform = transforms.get(f.id)
                # a field a later spec turned into void (v1 tables drop fields that way) keeps
                # the type of its real transform, as the plan's partition struct does
                if transform == "void" and f.id in out:
                    continue
                # Java's day transform results in a date (the spec says int, days from 1970)
                out[f.id] = "date" if transform == "day" else json.loads(f.type_json())
        return out

    def spark_schema(self) -> Any:
        return T.spark_type({"type": "struct", "fields": self.output_fields()})


def _metadata_table(options: ReadOptions) -> tuple[str, str] | None:
    """``(table, metadata table name)`` when the source's table is a metadata table, Java's
    ``db.t.files``: the last part names a metadata table and the catalog has no table of the
    whole name."""
    base, _, last = options.catalog.table.rpartition(".")
    if not base or last.lower() not in METADATA_TABLES:
        return None
    if options.catalog.load_catalog().table_exists(options.catalog.table):
        return None
    return base, last.lower()


@dataclass
class _MetadataTableInfo:
    """A metadata table of a table, on one metadata file of that table."""

    metadata_location: str
    table: Any
    name: str

    @staticmethod
    def load(options: ReadOptions, base: str, name: str, metadata_location: str | None = None):
        table = options.catalog.load_catalog().load_table(base)
        if metadata_location is None:
            metadata_location = table.metadata_location
        elif metadata_location != table.metadata_location:
            table = Table.from_metadata(metadata_location, io=table.io)
        return _MetadataTableInfo(metadata_location, table, name)

    def schema_json(self, columns: tuple[str, ...] | None) -> str:
        """The Iceberg schema (JSON) of the metadata table, of ``columns`` when given."""
        selected = None if columns is None else list(columns)
        return _native.metadata_table_schema_json(self.table.metadata, self.name, selected)

    def fields(self, columns: tuple[str, ...] | None) -> list[dict]:
        """The Iceberg fields (JSON objects) of the metadata table (of ``columns``)."""
        return json.loads(self.schema_json(columns))["fields"]

    def spark_schema(self, columns: tuple[str, ...] | None) -> Any:
        return T.spark_type({"type": "struct", "fields": self.fields(columns)})


class IcefloeMetadataTableReader(DataSourceReader):
    """Reads a metadata table (``spark.read.format("icefloe").load("db.t.files")``): built
    on the driver's worker in one partition, as Java builds the small ones; the snapshot
    options select the snapshot where Java allows time travel; the ``columns`` option
    selects columns (a struct's fields too: ``partition.cat``)."""

    def __init__(self, options: dict[str, str], metadata_location: str | None, name: str):
        self.options = ReadOptions.of(options)
        base = self.options.catalog.table.rpartition(".")[0]
        info = _MetadataTableInfo.load(self.options, base, name, metadata_location)
        self.name = name
        self.metadata_location = info.metadata_location
        # the table's FileIO properties (credentials: never logged; the reader is only pickled)
        self.io_properties = info.table.io.properties_for(info.table.metadata.location)
        self.fields = info.fields(self.options.columns)
        self.spark_schema_json = info.spark_schema(self.options.columns).json()
        self.schema_json = info.schema_json(self.options.columns)
        #: the Spark filters taken over (see IcefloeMetadataTableFilteringReader)
        self.pushed: list = []

    def row_filter(self) -> Any:
        """The icefloe expression of the pushed filters (``None``: every row)."""
        schema = Schema.from_json(self.schema_json)
        expressions = [e for e in (F.translate(f, schema) for f in self.pushed) if e is not None]
        if not expressions:
            return None
        return expressions[0] if len(expressions) == 1 else E.And(*expressions)

    def partitions(self) -> list:
        return [InputPartition(0)]

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        io = FileIO(self.metadata_location, self.io_properties or {})
        table = Table.from_metadata(self.metadata_location, io=io)
        result = table.inspect.table(
            self.name,
            snapshot_id=self.options.snapshot_id,
            ref=self.options.ref,
            as_of=self.options.as_of_ms,
            row_filter=self.row_filter(),
            selected_fields=self.options.columns,
        )
        target = to_arrow_schema(StructType.fromJson(json.loads(self.spark_schema_json)))
        for batch in result.to_batches():
            batch = T.to_spark_batch(batch, self.fields, target)
            # the pushed filters once more with Spark's semantics, as the table reader does
            mask = F.spark_mask(self.pushed, batch)
            if mask is not None:
                batch = batch.filter(mask)
            if batch.num_rows:
                yield batch


class IcefloeMetadataTableFilteringReader(IcefloeMetadataTableReader):
    """A metadata table reader that takes over the filters it can (the ``pushdown`` option,
    as for tables): the metadata table is built with them, so only the rows Spark wants
    leave the worker."""

    def pushFilters(self, filters: list) -> list:
        schema = Schema.from_json(self.schema_json)
        rest = []
        for f in filters:
            if F.translate(f, schema) is None:
                rest.append(f)
            else:
                self.pushed.append(f)
        return rest


def _iceberg_type_of(arrow_type: pa.DataType, partition_types: dict[int, Any]) -> Any:
    """The Iceberg type (JSON form) of a metadata column's Arrow type; the fields of the
    ``_partition`` struct take the partition fields' types."""
    if pa.types.is_struct(arrow_type):
        fields = []
        for f in arrow_type:
            fid = int((f.metadata or {}).get(_native.PARQUET_FIELD_ID, -1))
            t = partition_types.get(fid) or _iceberg_type_of(f.type, partition_types)
            fields.append({"id": fid, "name": f.name, "required": False, "type": t})
        return {"type": "struct", "fields": fields}
    return iceberg_type_of(arrow_type)


def _scan(table: Any, options: ReadOptions, row_filter: Any) -> Any:
    return table.scan(
        row_filter=row_filter,
        selected_fields=list(options.columns) if options.columns else None,
        snapshot_id=options.snapshot_id,
        ref=options.ref,
        as_of=options.as_of_ms,
    )


class TaskGroup(InputPartition):
    """One Spark partition: a bin-packed group of file scan tasks as a payload of
    ``TableScan.plan_task_payloads`` (LZ4-compressed Arrow IPC), which carries the schemas
    and residuals it needs."""

    def __init__(self, payload: bytes, files: int):
        self.payload = payload
        self.files = files

    def __reduce__(self) -> tuple:
        # Spark cloudpickles every partition on its own: rebuilding from the constructor's
        # arguments pickles a plan's tens of thousands of groups about 20 % faster than
        # cloudpickle's default for an instance
        return (TaskGroup, (self.payload, self.files))

    def __repr__(self) -> str:
        return f"TaskGroup({self.files} tasks, {len(self.payload)} bytes)"


class IcefloeScanReader(DataSourceReader):
    """Reads the table without taking filters over (the ``pushdown`` option set to
    ``false``): Spark applies every filter to all rows."""

    def __init__(self, options: dict[str, str], metadata_location: str | None, schema: Any):
        self.options = ReadOptions.of(options)
        info = _ScanInfo.load(self.options, metadata_location)
        self.metadata_location = info.metadata_location
        # the table's FileIO properties (credentials: never logged; the reader is only pickled)
        self.io_properties = info.table.io.properties_for(info.table.metadata.location)
        self.fields = info.output_fields()
        expected = info.spark_schema()
        if schema is not None and schema != expected:
            raise InvalidArgumentError(
                f"the schema given to the reader ({schema.simpleString()}) is not the table's "
                f"({expected.simpleString()}); select columns with the 'columns' option instead"
            )
        self.spark_schema_json = expected.json()
        self.schema_json = info.plan_schema.metadata[SCHEMA_KEY].decode()
        #: the Spark filters taken over (applied while planning and again on every row read)
        self.pushed: list = []

    def row_filter(self) -> Any:
        """The icefloe expression of the pushed filters (``None``: every row)."""
        schema = Schema.from_json(self.schema_json)
        expressions = [e for e in (F.translate(f, schema) for f in self.pushed) if e is not None]
        if not expressions:
            return None
        return expressions[0] if len(expressions) == 1 else E.And(*expressions)

    def partitions(self) -> list:
        io = FileIO(self.metadata_location, self.io_properties or {})
        table = Table.from_metadata(self.metadata_location, io=io)
        payloads = _scan(table, self.options, self.row_filter()).plan_task_payloads(
            target_split_size=self.options.split_size
        )
        return [TaskGroup(payload, tasks) for payload, tasks in payloads]

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        if partition is None:  # an empty plan: Spark still runs one task
            return
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        target = to_arrow_schema(StructType.fromJson(json.loads(self.spark_schema_json)))
        batches = read_tasks(
            partition.payload,
            metadata_columns=self.options.metadata_columns,
            batch_size=self.options.batch_size or DEFAULT_BATCH_SIZE,
            io_properties=self.io_properties,
        )
        for batch in batches:
            batch = T.to_spark_batch(batch, self.fields, target)
            mask = F.spark_mask(self.pushed, batch)
            if mask is not None:
                batch = batch.filter(mask)
            if batch.num_rows:
                yield batch


class IcefloeReader(IcefloeScanReader):
    """Reads the table taking over the filters it can (see ``icefloe.spark.filters``): they
    prune files while planning and are applied to the rows read with Spark's semantics."""

    def pushFilters(self, filters: list) -> list:
        schema = Schema.from_json(self.schema_json)
        rest = []
        for f in filters:
            if F.translate(f, schema) is None:
                rest.append(f)
            else:
                self.pushed.append(f)
        return rest


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------


class DataFilesMessage(WriterCommitMessage):
    """What a write task sends the driver: its data-file rows as Arrow IPC bytes."""

    def __init__(self, data_files: bytes, count: int):
        self.data_files = data_files
        self.count = count


class IcefloeWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool):
        self.options = WriteOptions.of(options)
        table = self.options.catalog.load_table()
        md = table.metadata
        schema_json = md.schema().to_json()
        T.check_write_schema(schema, schema_json)
        # the table's location provider with the write's options, as every task makes it:
        # made here so that a location property Java refuses fails the write on the driver
        # (before any task runs), and abort() lists where the tasks wrote
        self.data_location = _native.LocationProvider(md, dict(self.options.write_properties)).data_location
        self.overwrite = overwrite
        self.metadata_json = md.to_json()
        # the table's FileIO properties for the executors (credentials: never logged)
        self.io_properties = table.io.properties_for(md.location)
        self.schema_json = schema_json
        self.write_id = str(uuid.uuid4())

    # --- executors ---

    def write(self, iterator: Iterator[pa.RecordBatch]) -> DataFilesMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        attempt_id = context.taskAttemptId() if context is not None else 0
        md = TableMetadata.from_json(self.metadata_json)
        batches = (T.to_table_batch(b, self.schema_json) for b in iterator)
        files = write_data_files(
            md,
            batches,
            task_id=attempt_id,
            partition_id=partition_id,
            operation_id=self.write_id,
            properties=dict(self.options.write_properties),
            io_properties=self.io_properties,
        )
        return DataFilesMessage(data_files_to_ipc(files), files.num_rows)

    # --- driver ---

    def commit(self, messages: list) -> None:
        files = [data_files_from_ipc(m.data_files) for m in messages if m is not None and m.count]
        table = self.options.catalog.load_table()
        branch = self.options.branch
        summary = dict(self.options.snapshot_properties)
        summary[WRITE_ID_KEY] = self.write_id
        spec_id = int(files[0].schema.metadata[SPEC_ID_KEY]) if files else None
        written = sorted({p for f in files for p in f.column("file_path").to_pylist()})
        try:
            if self.overwrite:
                live = _live_data_files(table, branch)
                if not live and not files:
                    return
                # Java's static overwrite: overwriteByRowFilter(alwaysTrue) re-applied to each
                # attempt's base, so a file appended meanwhile and the table's delete files go too
                with table.transaction() as tx:
                    tx.own_files(written)
                    tx.overwrite_where(
                        E.AlwaysTrue(), files, spec_id=spec_id, branch=branch, snapshot_properties=summary
                    )
            elif files:
                # the transaction owns the files: a failed commit deletes them
                with table.transaction() as tx:
                    tx.own_files(written)
                    tx.append_files(files, spec_id=spec_id, branch=branch, snapshot_properties=summary)
        except CommitStateUnknownError:
            # Spark calls abort() next, in another process: tell it to keep the files
            _mark_state_unknown(self.write_id)
            raise

    def abort(self, messages: list) -> None:
        if _take_state_unknown(self.write_id):
            # as Java's SparkWrite after a CommitStateUnknownException: the table may
            # reference the files, so none is deleted
            _log.warning(
                "icefloe: the commit of write %s has an unknown outcome; its files are kept", self.write_id
            )
            return
        try:
            table = self.options.catalog.load_table()
        except Exception:  # noqa: BLE001
            # without the table we cannot tell whether a commit landed: keep the files
            _log.exception(
                "icefloe: abort could not load the table; files of write %s are kept", self.write_id
            )
            return
        if any(s.summary.get(WRITE_ID_KEY) == self.write_id for s in table.snapshots()):
            return  # the commit landed although Spark saw it fail
        paths = set()
        for m in messages:
            if m is not None and m.count:
                paths.update(data_files_from_ipc(m.data_files).column("file_path").to_pylist())
        io_properties = table.io.properties_for(table.metadata.location)
        paths.update(_files_of_write(self.data_location, self.write_id, io_properties))
        _delete(paths, io_properties)


def _state_unknown_marker(write_id: str) -> str:
    """A file in the driver's temporary folder that says the commit of ``write_id`` ended
    with an unknown outcome. Spark runs ``commit()`` and ``abort()`` in separate Python
    processes of the driver, so this is how the one tells the other."""
    return os.path.join(tempfile.gettempdir(), f"icefloe-write-{write_id}.commit-state-unknown")


def _mark_state_unknown(write_id: str) -> None:
    try:
        with open(_state_unknown_marker(write_id), "w", encoding="utf-8") as f:
            f.write(write_id)
    except OSError:
        _log.warning(
            "icefloe: could not record the unknown commit state of write %s", write_id, exc_info=True
        )


def _take_state_unknown(write_id: str) -> bool:
    """Whether the commit of ``write_id`` ended with an unknown outcome (the marker is
    removed: abort runs once)."""
    try:
        os.remove(_state_unknown_marker(write_id))
    except FileNotFoundError:
        return False
    except OSError:
        return True  # there is a marker, even if it cannot be removed
    return True


def _live_data_files(table: Any, branch: str | None) -> list[str]:
    """The paths of the data files live in the head of ``branch`` (default: current)."""
    if table.metadata.current_snapshot_id is None and branch is None:
        return []
    if branch is not None and table.metadata.snapshot_by_ref(branch) is None:
        branch = None  # a new branch starts from the current snapshot
        if table.metadata.current_snapshot_id is None:
            return []
    plan = table.scan(ref=branch).plan_arrow()
    return sorted(set(plan.column("file_path").to_pylist()))


def _files_of_write(location: str, write_id: str, io_properties: dict[str, str] | None = None) -> list[str]:
    """Every file under the write's data ``location`` named for ``write_id`` (including those
    of failed task attempts, which sent no message)."""
    fs, base = filesystem_for(location, io_properties)
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    marker = f"-{write_id}-"
    prefix = location[: len(location) - len(base)] if location.endswith(base) else ""
    return [prefix + i.path for i in infos if i.type == pafs.FileType.File and marker in i.base_name]


def _delete(paths: set[str], io_properties: dict[str, str] | None = None) -> None:
    for path in sorted(paths):
        fs, p = filesystem_for(path, io_properties)
        try:
            fs.delete_file(p)
        except FileNotFoundError:
            pass
        except OSError:
            _log.warning("icefloe: could not delete %s", path, exc_info=True)


#: Spark refuses to plan a Python source that pushes filters unless this is true
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: Any) -> None:
    """Registers the ``icefloe`` data source with a SparkSession and turns on Python filter
    pushdown (``spark.sql.python.filterPushdown.enabled``), which Spark 4.1 requires of a
    source that takes filters over.

    The catalogs configured in the session's conf (``spark.icefloe.catalog.<name>.*``, see
    :mod:`icefloe.spark.options`) are taken now: call ``register`` again after changing them."""
    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    catalogs, default = catalogs_from_conf(dict(spark.conf.getAll))
    source: type[IcefloeDataSource] = IcefloeDataSource
    if catalogs or default:
        # a class of its own, which cloudpickle ships by value with its conf to the workers
        # (the module-level class would be pickled by reference, without it)
        source = type(
            "IcefloeDataSource",
            (IcefloeDataSource,),
            {
                "__qualname__": "IcefloeDataSource.configured",
                "conf_catalogs": catalogs,
                "conf_default_catalog": default,
            },
        )
    spark.dataSource.register(source)
