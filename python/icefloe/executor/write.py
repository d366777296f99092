"""Writing data files from pyarrow data: the executor side of a write.

``write_data_files(table_metadata, data)`` writes Parquet data files for a table and
returns their ``data_file`` rows, one per file, as a pyarrow Table in the form of
``icefloe._native.manifest_entries_schema`` (status ADDED; snapshot id and sequence
numbers are left to the commit). It needs only the table's metadata, no catalog, so Spark
executors can call it and ship the rows to the driver (``data_files_to_ipc`` /
``data_files_from_ipc``), which commits them.

What is done where:

- Rust (``icefloe::write``): partition transforms on whole Arrow arrays, grouping rows by
  partition tuple, Java's partition paths, and the column metrics of each file (value,
  null and NaN counts, bounds per ``write.metadata.metrics.*``).
- pyarrow: the Parquet encoding, with every field's Iceberg id in ``PARQUET:field_id``.
- here: matching the input to the table schema by name, rolling files at
  ``write.target-file-size-bytes``, file names and locations as Java names them.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from .. import _native
from ..errors import IcefloeIOError, InvalidArgumentError
from .files import filesystem_for, io_error, scrub

__all__ = ["write_data_files", "data_files_to_ipc", "data_files_from_ipc", "SPEC_ID_KEY"]

#: Schema metadata key of the returned table holding the partition spec id of its rows.
SPEC_ID_KEY = _native.SPEC_ID_KEY

TARGET_FILE_SIZE = "write.target-file-size-bytes"
TARGET_FILE_SIZE_DEFAULT = 512 * 1024 * 1024
ROW_GROUP_SIZE = "write.parquet.row-group-size-bytes"
ROW_GROUP_SIZE_DEFAULT = 128 * 1024 * 1024
PAGE_SIZE = "write.parquet.page-size-bytes"
PAGE_SIZE_DEFAULT = 1024 * 1024
DICT_SIZE = "write.parquet.dict-size-bytes"
DICT_SIZE_DEFAULT = 2 * 1024 * 1024
COMPRESSION = "write.parquet.compression-codec"
COMPRESSION_DEFAULT = "zstd"
COMPRESSION_LEVEL = "write.parquet.compression-level"

# Java's codec names and pyarrow's
_CODECS = {
    "zstd": "zstd",
    "gzip": "gzip",
    "snappy": "snappy",
    "lz4": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}


def write_data_files(
    table_metadata: Any,
    data: pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch],
    *,
    location_prefix: str | None = None,
    task_id: int = 0,
    partition_id: int = 0,
    operation_id: str | None = None,
    sort_order_id: int | None = None,
    properties: Mapping[str, str] | None = None,
    io_properties: Mapping[str, str] | None = None,
    row_lineage: bool = False,
) -> pa.Table:
    """Writes ``data`` as Parquet data files of the table and returns their data-file rows.

    ``table_metadata`` is an ``icefloe.TableMetadata`` or its JSON text. Files go under
    ``location_prefix`` when given, else ``write.data.path``, else ``<location>/data``,
    then the partition path (with ``write.object-storage.enabled``: hash-derived
    directories first, as Java's ``ObjectStoreLocationProvider``), named ``<partition_id>-<task_id>-<operation_id>-<n>.parquet``
    as Java names them (``operation_id`` defaults to a random UUID). ``properties``
    override the table's properties for this write. ``io_properties``: the table's FileIO
    properties (``table.io.properties_for(table.location)``) for a table on an object store. Rows are written for the table's
    current schema and default partition spec; the spec id is in the returned table's
    schema metadata under :data:`SPEC_ID_KEY`.

    Input columns are matched to the schema by name: missing optional columns are written
    as nulls; a missing required column, a column not in the schema, nulls in a required
    column or a type that cannot be converted without loss raise ``InvalidArgumentError``
    naming the column.

    ``row_lineage``: ``data`` may also hold ``_row_id`` and ``_last_updated_sequence_number``
    (v3 row lineage), written with their reserved field ids so that rewritten rows keep them
    ("Row Lineage": a null value is inherited from the new file instead).
    """
    md = _metadata(table_metadata)
    return _write_files(
        md,
        md.schema(),
        md.sort_order(),
        data,
        location_prefix=location_prefix,
        task_id=task_id,
        partition_id=partition_id,
        operation_id=operation_id,
        sort_order_id=sort_order_id,
        properties=properties,
        io_properties=io_properties,
        row_lineage=row_lineage,
    )


#: the row lineage columns a rewrite carries into its files
_LINEAGE_COLUMNS = ("_row_id", "_last_updated_sequence_number")


def _write_files(
    md: Any,
    schema: Any,
    sort_order: Any,
    data: Any,
    *,
    location_prefix: str | None,
    task_id: int,
    partition_id: int,
    operation_id: str | None,
    sort_order_id: int | None,
    properties: Mapping[str, str] | None,
    io_properties: Mapping[str, str] | None,
    row_lineage: bool = False,
) -> pa.Table:
    """Parquet files of ``data`` with the columns of ``schema`` (the table's, or a projection
    of it holding the partition source columns), in the table's default spec."""
    spec = md.spec()
    props = dict(md.properties)
    if properties:
        props.update({str(k): str(v) for k, v in properties.items()})
    arrow_schema = _native.data_file_arrow_schema(schema)
    if row_lineage:
        for name in _LINEAGE_COLUMNS:
            field_id = str(_native.RESERVED_FIELD_IDS[name])
            arrow_schema = arrow_schema.append(
                pa.field(name, pa.int64(), nullable=True, metadata={_native.PARQUET_FIELD_ID: field_id})
            )
    # made before any row is written: a location property Java refuses fails every write
    locations = _native.LocationProvider(md, props, location_prefix)
    files = _FileFactory(locations, partition_id, task_id, operation_id or str(uuid.uuid4()))
    options = _WriteOptions(props)
    context = _FileContext(schema, spec, sorted(props.items()), sort_order, sort_order_id)
    context.io_properties = io_properties

    writers: dict[str, _RollingWriter] = {}
    rows: list[pa.RecordBatch] = []
    for batch in _batches(data):
        if batch.num_rows == 0:
            continue
        batch = _conform_batch(batch, arrow_schema)
        # partitioned by the table's columns (the lineage columns, last, ride along)
        table_columns = batch.select(list(range(batch.num_columns - 2))) if row_lineage else batch
        groups, indices, offsets = _native.partition_batch(table_columns, schema, spec)
        partitions = groups.column("partition")
        paths = groups.column("path").to_pylist()
        for g, path in enumerate(paths):
            start, end = offsets[g], offsets[g + 1]
            part = batch if end - start == batch.num_rows else batch.take(indices.slice(start, end - start))
            writer = writers.get(path)
            if writer is None:
                partition = partitions.slice(g, 1) if spec.fields else None
                writer = writers[path] = _RollingWriter(
                    path, partition, arrow_schema, files, options, context
                )
            rows.extend(writer.write(part))
    for writer in writers.values():
        rows.extend(writer.close())

    out_schema = _native.manifest_entries_schema(schema, spec).with_metadata(
        {SPEC_ID_KEY: str(spec.spec_id).encode()}
    )
    if not rows:
        return out_schema.empty_table()
    return pa.Table.from_batches(
        [r.cast(out_schema) if r.schema != out_schema else r for r in rows], schema=out_schema
    )


def data_files_to_ipc(files: pa.Table) -> bytes:
    """Data-file rows as Arrow IPC stream bytes, for shipping from an executor."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, files.schema) as w:
        w.write_table(files)
    return sink.getvalue().to_pybytes()


def data_files_from_ipc(payload: bytes) -> pa.Table:
    """The inverse of :func:`data_files_to_ipc`."""
    return pa.ipc.open_stream(payload).read_all()


# ---------------------------------------------------------------------------------------


def _metadata(table_metadata: Any) -> Any:
    if isinstance(table_metadata, str):
        return _native.TableMetadata.from_json(table_metadata)
    if isinstance(table_metadata, bytes):
        return _native.TableMetadata.from_json(table_metadata.decode())
    return table_metadata


def _batches(data: Any) -> Iterable[pa.RecordBatch]:
    if isinstance(data, pa.Table):
        return data.to_batches()
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.RecordBatchReader):
        return data
    return data


class _WriteOptions:
    def __init__(self, props: dict[str, str]):
        self.target_file_size = _int_prop(props, TARGET_FILE_SIZE, TARGET_FILE_SIZE_DEFAULT)
        self.row_group_size = _int_prop(props, ROW_GROUP_SIZE, ROW_GROUP_SIZE_DEFAULT)
        codec = props.get(COMPRESSION, COMPRESSION_DEFAULT).lower()
        if codec not in _CODECS:
            raise InvalidArgumentError(f"unsupported {COMPRESSION}: {codec}", field=COMPRESSION)
        level = props.get(COMPRESSION_LEVEL)
        self.parquet = dict(
            compression=_CODECS[codec],
            compression_level=int(level) if level not in (None, "") else None,
            data_page_size=_int_prop(props, PAGE_SIZE, PAGE_SIZE_DEFAULT),
            dictionary_pagesize_limit=_int_prop(props, DICT_SIZE, DICT_SIZE_DEFAULT),
            write_statistics=True,
        )


def _int_prop(props: dict[str, str], key: str, default: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    try:
        n = int(value)
    except ValueError:
        raise InvalidArgumentError(f"{key} must be an integer, got {value!r}", field=key) from None
    if n <= 0:
        raise InvalidArgumentError(f"{key} must be positive, got {n}", field=key)
    return n


class _FileFactory:
    """Java's ``OutputFileFactory`` names: ``%05d-%d-%s-%05d.parquet``."""

    def __init__(self, locations: Any, partition_id: int, task_id: int, operation_id: str):
        self.locations = locations
        self.prefix = f"{partition_id:05d}-{task_id}-{operation_id}"
        self.count = 0

    def new_path(self, partition_path: str) -> str:
        """The table's location provider places the file (``write.object-storage.enabled``:
        under hash-derived directories, as Java's ``ObjectStoreLocationProvider``)."""
        self.count += 1
        name = f"{self.prefix}-{self.count:05d}.parquet"
        return self.locations.new_data_location(name, partition_path)


class _FileContext:
    def __init__(self, schema, spec, props, sort_order, sort_order_id):
        self.schema = schema
        self.spec = spec
        self.props = props
        self.sort_order = sort_order
        self.sort_order_id = sort_order_id
        self.io_properties = None


class _RollingWriter:
    """The files of one partition: buffers batches into row groups of about
    ``write.parquet.row-group-size-bytes`` (in memory) and starts a new file once the
    current one reaches ``write.target-file-size-bytes``."""

    def __init__(self, partition_path, partition, arrow_schema, files, options, context):
        self.partition_path = partition_path
        self.partition = partition
        self.arrow_schema = arrow_schema
        self.files = files
        self.options = options
        self.context = context
        self.pending: list[pa.RecordBatch] = []
        self.pending_bytes = 0
        self.bytes_per_row: float | None = None
        self.file = None

    def write(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        self.pending.append(batch)
        self.pending_bytes += batch.nbytes
        if self.pending_bytes >= self.options.row_group_size:
            return self._flush()
        return []

    def close(self) -> list[pa.RecordBatch]:
        done = self._flush()
        if self.file is not None:
            done.append(self.file.close())
            self.file = None
        return done

    def _flush(self) -> list[pa.RecordBatch]:
        done = []
        table = pa.Table.from_batches(self.pending, schema=self.arrow_schema)
        self.pending, self.pending_bytes = [], 0
        while table.num_rows:
            if self.file is None:
                path = self.files.new_path(self.partition_path)
                self.file = _OpenFile(path, self.arrow_schema, self.options, self.partition, self.context)
            # as many rows as are expected to fill the file, by the compressed bytes per
            # row seen so far (the in-memory size before anything was written)
            memory_per_row = max(table.nbytes / table.num_rows, 1.0)
            per_row = self.bytes_per_row or memory_per_row
            remaining = self.options.target_file_size - self.file.position()
            rows = min(table.num_rows, max(1, math.ceil(remaining / per_row)))
            # and no more than a row group's worth, measured in memory as Java measures
            # its buffered row group
            rows = min(rows, max(1, int(self.options.row_group_size / memory_per_row)))
            chunk = table.slice(0, rows)
            table = table.slice(rows)
            self.file.write(chunk)
            self.bytes_per_row = self.file.position() / self.file.rows
            if self.file.position() >= self.options.target_file_size:
                done.append(self.file.close())
                self.file = None
        return done


class _OpenFile:
    def __init__(self, path, arrow_schema, options, partition, context):
        self.path = path
        self.partition = partition
        self.context = context
        io_properties = context.io_properties
        fs, fs_path = filesystem_for(path, io_properties)
        try:
            parent = fs_path.rsplit("/", 1)[0]
            # object stores have no folders (pyarrow would write empty marker objects)
            if parent and isinstance(fs, pafs.LocalFileSystem):
                fs.create_dir(parent, recursive=True)
            self.sink = fs.open_output_stream(fs_path)
        except OSError as e:
            raise io_error(
                f"cannot write data file {path}: {scrub(str(e), path, io_properties)}", path
            ) from None
        parquet = dict(options.parquet)
        if "_row_id" in arrow_schema.names:
            # row ids of a rewrite ascend: delta encoding stores them in a few bits a row
            # (plain or dictionary encoding would grow the file past the rewrite's target)
            parquet["use_dictionary"] = [n for n in arrow_schema.names if n != "_row_id"]
            parquet["column_encoding"] = {"_row_id": "DELTA_BINARY_PACKED"}
        self.writer = pq.ParquetWriter(self.sink, arrow_schema, **parquet)
        self.batches: list[pa.RecordBatch] = []
        self.rows = 0

    def position(self) -> int:
        return self.sink.tell()

    def _failed(self, e: OSError) -> IcefloeIOError:
        # on an object store the bytes go out while writing and on close (the upload): a
        # refusal there is as typed and scrubbed as one on open
        io_properties = self.context.io_properties
        return io_error(
            f"cannot write data file {self.path}: {scrub(str(e), self.path, io_properties)}", self.path
        )

    def write(self, chunk: pa.Table) -> None:
        try:
            self.writer.write_table(chunk, row_group_size=max(chunk.num_rows, 1))
        except OSError as e:
            raise self._failed(e) from None
        self.batches.extend(chunk.to_batches())
        self.rows += chunk.num_rows

    def close(self) -> pa.RecordBatch:
        try:
            self.writer.close()
            size = self.sink.tell()
            self.sink.close()
        except OSError as e:
            raise self._failed(e) from None
        meta = self.writer.writer.metadata
        column_sizes = [0] * meta.num_columns
        split_offsets = []
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            for c in range(rg.num_columns):
                column_sizes[c] += rg.column(c).total_compressed_size
            if rg.num_columns:
                first = rg.column(0)
                start = first.data_page_offset
                dict_offset = first.dictionary_page_offset
                if first.has_dictionary_page and dict_offset is not None and 0 < dict_offset < start:
                    start = dict_offset
                split_offsets.append(start)
        ctx = self.context
        batches = self.batches
        names = batches[0].schema.names if batches else []
        lineage = [n for n in names if n in _LINEAGE_COLUMNS]
        if lineage:
            # the metrics are those of the table's columns (the lineage columns come last)
            batches = [b.select([n for n in names if n not in _LINEAGE_COLUMNS]) for b in batches]
            column_sizes = column_sizes[: len(column_sizes) - len(lineage)]
        return _native.data_file_batch(
            batches,
            ctx.schema,
            ctx.spec,
            properties=ctx.props,
            sort_order=ctx.sort_order,
            path=self.path,
            file_size_in_bytes=size,
            column_sizes=column_sizes,
            split_offsets=split_offsets,
            partition=self.partition,
            sort_order_id=ctx.sort_order_id,
        )


# ---------------------------------------------------------------------------------------
# Matching input columns to the table schema by name


def _conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    names = batch.schema.names
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InvalidArgumentError(f"duplicate input columns: {', '.join(dup)}")
    extra = [n for n in names if schema.get_field_index(n) < 0]
    if extra:
        raise InvalidArgumentError(
            f"input columns not in the table schema: {', '.join(extra)}", field=extra[0]
        )
    arrays = []
    for field in schema:
        column = batch.column(field.name) if field.name in names else None
        arrays.append(_conform(column, field, field.name, batch.num_rows, None))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _error(path: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"column '{path}': {message}", field=path)


def _conform(
    arr: pa.Array | None, field: pa.Field, path: str, n: int, parent_valid: pa.Array | None
) -> pa.Array:
    """``arr`` as an array of ``field``'s type; ``parent_valid`` marks the slots whose
    ancestors are not null (where a required field must have a value)."""
    target = field.type
    if arr is None:
        if not field.nullable:
            raise _error(path, "is required but missing from the input")
        return pa.nulls(n, target)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not field.nullable:
        nulls = arr.is_null()
        if parent_valid is not None:
            nulls = pc.and_(nulls, parent_valid)
        if pc.any(nulls).as_py():
            raise _error(path, "is required but has nulls")
    if pa.types.is_struct(target):
        if not pa.types.is_struct(arr.type):
            raise _error(path, f"cannot write {arr.type} as {target}")
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        extra = [x for x in names if target.get_field_index(x) < 0]
        if extra:
            raise _error(f"{path}.{extra[0]}", "is not in the table schema")
        valid = arr.is_valid() if parent_valid is None else pc.and_(arr.is_valid(), parent_valid)
        children = []
        for i in range(target.num_fields):
            child_field = target.field(i)
            child = arr.field(names.index(child_field.name)) if child_field.name in names else None
            children.append(_conform(child, child_field, f"{path}.{child_field.name}", len(arr), valid))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_list(target):
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            raise _error(path, f"cannot write {arr.type} as {target}")
        offsets, values = _rebase(arr)
        values = _conform(values, target.value_field, f"{path}.element", len(values), None)
        mask = arr.is_null() if arr.null_count else None
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    if pa.types.is_map(target):
        if not pa.types.is_map(arr.type):
            raise _error(path, f"cannot write {arr.type} as {target}")
        offsets, entries = _rebase(arr)
        keys = _conform(entries.field(0), target.key_field, f"{path}.key", len(entries), None)
        items = _conform(entries.field(1), target.item_field, f"{path}.value", len(entries), None)
        mask = arr.is_null() if arr.null_count else None
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    if arr.type == target:
        return arr
    if not _castable(arr.type, target):
        raise _error(path, f"cannot write {arr.type} as {target}")
    try:
        return pc.cast(arr, target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise _error(path, f"cannot convert {arr.type} to {target}: {e}") from None


def _rebase(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Zero-based int32 offsets and the child values they cover, of a (sliced) list or map."""
    offsets = arr.offsets
    first, last = offsets[0].as_py(), offsets[len(offsets) - 1].as_py()
    if last > 2**31 - 1:
        raise InvalidArgumentError("a list column holds more than 2^31 values in one batch")
    rebased = pc.cast(pc.subtract(offsets, first), pa.int32())
    return rebased, arr.values.slice(first, last - first)


_INT_WIDTH = {
    pa.int8(): 8,
    pa.int16(): 16,
    pa.int32(): 32,
    pa.int64(): 64,
    pa.uint8(): 9,
    pa.uint16(): 17,
    pa.uint32(): 33,
}
_UNITS = ["s", "ms", "us", "ns"]


def _castable(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether values of ``src`` convert to ``dst`` without loss of meaning (narrower
    integers and floats, other string/binary layouts, coarser time units, smaller decimals
    of the same scale, timestamps in another zone as UTC)."""
    t = pa.types
    if t.is_integer(dst):
        return src in _INT_WIDTH and _INT_WIDTH[src] <= dst.bit_width
    if t.is_floating(dst):
        return t.is_floating(src) and src.bit_width <= dst.bit_width
    if t.is_string(dst):
        return t.is_large_string(src) or t.is_string_view(src)
    if t.is_binary(dst):
        return t.is_large_binary(src) or t.is_binary_view(src)
    if t.is_timestamp(dst):
        return (
            t.is_timestamp(src)
            and (src.tz is None) == (dst.tz is None)
            and _UNITS.index(src.unit) <= _UNITS.index(dst.unit)
        )
    if t.is_date32(dst):
        return t.is_date64(src)
    if t.is_time64(dst):
        return (t.is_time32(src) or t.is_time64(src)) and _UNITS.index(src.unit) <= _UNITS.index(dst.unit)
    if t.is_decimal(dst):
        return t.is_decimal(src) and src.scale == dst.scale and src.precision <= dst.precision
    return False
