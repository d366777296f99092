"""Reading file scan tasks into Arrow (the executor side of a scan).

``read_tasks(tasks)`` takes what the driver planned (a ``CombinedScanTask``, a slice of a
plan table, or the task's Arrow IPC bytes) and yields pyarrow record batches of the scan's
projected schema, with everything an Iceberg reader must do applied:

- Parquet columns are matched to the schema by Iceberg field id (``PARQUET:field_id``), so
  renamed, reordered, added and dropped columns read correctly, nested ones too; files
  without ids get them from the table's name mapping (in the plan's schema metadata), or
  by position as Java's fallback when there is none;
- columns a file lacks read as their ``initial-default`` (v3) or null; identity partition
  values (and the metadata columns) are constants taken from the task, preferred over the
  file's column as in Java's ``PartitionUtil.constantsMap`` readers;
- type promotions (int to long, float to double, decimal widening, date to timestamp);
- deletes: deletion vectors, position delete files (rows of this file only) and equality
  delete files (null equals null), those listed on the task only;
- the task's residual filter, with SQL's null rules (a null never matches a comparison)
  and NaN ordered above every number, as Spark evaluates filters;
- metadata columns on request (``_file``, ``_pos``, ``_spec_id``, ``_partition``,
  ``_deleted``, ``_row_id``, ``_last_updated_sequence_number``).

Output conventions: the Arrow schema is the projected Iceberg schema in the types of
``icefloe._native.data_file_arrow_schema`` (timestamps in microseconds, ``timestamptz``
with zone UTC, uuid as ``fixed_size_binary(16)``), every field carrying its Iceberg id in
the ``PARQUET:field_id`` metadata key; requested metadata columns follow in the order
asked, with their reserved ids. Positions (``_pos``) are file-global.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import _native
from ..errors import (
    IcefloeIOError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidInputError,
    UnsupportedError,
)
from .files import file_io_for, filesystem_for, io_error, local_path, scrub
from .tasks import CombinedScanTask

__all__ = ["read_tasks", "METADATA_COLUMNS", "DEFAULT_BATCH_SIZE"]

DEFAULT_BATCH_SIZE = 65536
FIELD_ID = _native.PARQUET_FIELD_ID

# The spec's reserved field ids ("Reserved Field IDs", "Row Lineage"), as the Rust core
# defines them
_RESERVED = _native.RESERVED_FIELD_IDS
FILE_PATH_ID = _RESERVED["_file"]
POS_ID = _RESERVED["_pos"]
DELETED_ID = _RESERVED["_deleted"]
SPEC_ID_ID = _RESERVED["_spec_id"]
PARTITION_ID = _RESERVED["_partition"]
DELETE_FILE_PATH_ID = _RESERVED["file_path"]
DELETE_FILE_POS_ID = _RESERVED["pos"]
ROW_ID_ID = _RESERVED["_row_id"]
LAST_UPDATED_SEQ_ID = _RESERVED["_last_updated_sequence_number"]

# the metadata columns a scan reads, with their reserved ids and Arrow types (None: the
# plan's partition struct)
METADATA_COLUMNS = {
    name: (
        _RESERVED[name],
        None if name == "_partition" else _native.arrow_type(_native.RESERVED_FIELD_TYPES[name]),
    )
    for name in (
        "_file",
        "_pos",
        "_deleted",
        "_spec_id",
        "_partition",
        "_row_id",
        "_last_updated_sequence_number",
    )
}

_POSITION_DELETES = 1
_EQUALITY_DELETES = 2


# ---------------------------------------------------------------------------------------------
# the public entry point
# ---------------------------------------------------------------------------------------------


def read_tasks(
    tasks: Any,
    *,
    metadata_columns: Sequence[str] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    io_properties: Mapping[str, str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Reads file scan tasks and yields record batches of the projected schema (plus the
    requested metadata columns).

    ``tasks`` is a :class:`icefloe.table.CombinedScanTask`, a plan ``pa.Table`` or
    ``pa.RecordBatch`` (rows of ``plan_arrow()``/``plan_tasks()``, with the plan's schema
    metadata), or the Arrow IPC bytes of ``CombinedScanTask.to_bytes()``. Batches hold at
    most ``batch_size`` rows (fewer after deletes and filtering; tasks are never mixed in
    one batch). ``io_properties``: the table's FileIO properties
    (``table.io.properties_for(table.location)``: endpoint, region, credentials) for data
    and delete files on an object store."""
    if isinstance(tasks, (bytes, bytearray, memoryview)):
        payload = bytes(tasks)
        table = CombinedScanTask.from_bytes(payload).table
    else:
        payload = None
        table = _plan_table(tasks)
    if _rust_reads(table.schema, table):
        yield from _read_rust(payload if payload is not None else table, table, metadata_columns, batch_size, io_properties)
        return
    ctx = _PlanContext.of(table.schema, None, metadata_columns)
    ctx.io_properties = io_properties
    for batch in table.to_batches():
        yield from _read_plan_batch(ctx, batch, batch_size)


def _rust_reads(plan_schema: pa.Schema, plan: pa.Table | pa.RecordBatch) -> bool:
    """Whether the Rust reader (``icefloe::read``) reads this plan: everything but residual
    filters and equality deletes, which it does not apply yet (they stay with the pyarrow
    reader below until the Rust filter lands)."""
    md = plan_schema.metadata or {}
    if json.loads(md.get(_native.FILTER_KEY, b"true")) is not True:
        return False
    if plan.num_rows == 0:
        return True
    deletes = plan.column("deletes")
    contents = pc.list_flatten(deletes).field("content") if len(pc.list_flatten(deletes)) else None
    return contents is None or not pc.any(pc.equal(contents, _EQUALITY_DELETES)).as_py()


def _read_rust(
    plan: Any,
    table: pa.Table | pa.RecordBatch,
    metadata_columns: Sequence[str],
    batch_size: int,
    io_properties: Mapping[str, str] | None,
    residuals: list | None = None,
) -> Iterator[pa.RecordBatch]:
    """The batches of the Rust reader for ``plan`` (a table of plan rows or a task group
    payload); ``table`` is the same plan as rows, for the location its FileIO is for."""
    first = table.column("file_path")[0].as_py() if table.num_rows else "file:///"
    io = file_io_for(first, io_properties)
    if isinstance(plan, pa.RecordBatch):
        plan = pa.Table.from_batches([plan])
    reader = _native.read_plan(
        plan,
        io=io,
        metadata_columns=list(metadata_columns),
        batch_size=batch_size,
        residuals_json=None if residuals is None else json.dumps(residuals),
    )
    try:
        yield from reader
    finally:
        reader.close()


def output_schema(plan_schema: pa.Schema, metadata_columns: Sequence[str] = ()) -> pa.Schema:
    """The schema of the batches ``read_tasks`` yields for a plan of this schema."""
    return _native.read_output_schema(plan_schema, list(metadata_columns))


def _plan_table(tasks: Any) -> pa.Table:
    if isinstance(tasks, CombinedScanTask):
        return tasks.table
    if isinstance(tasks, (bytes, bytearray, memoryview)):
        return CombinedScanTask.from_bytes(bytes(tasks)).table
    if isinstance(tasks, pa.RecordBatch):
        return pa.Table.from_batches([tasks])
    if isinstance(tasks, pa.Table):
        return tasks
    raise InvalidArgumentTypeError(
        f"read_tasks takes a CombinedScanTask, a plan table or batch, or IPC bytes, not {type(tasks)!r}"
    )


def _read_plan_batch(
    ctx: _PlanContext, batch: pa.RecordBatch, batch_size: int, residuals: list | None = None
) -> Iterator[pa.RecordBatch]:
    residuals = ctx.residuals if residuals is None else residuals
    for row in batch.to_pylist():
        residual = residuals[row["residual"]]
        yield from _TaskReader(ctx, row, residual).read(batch_size)


# ---------------------------------------------------------------------------------------------
# what is the same for every task of a plan
# ---------------------------------------------------------------------------------------------


def _field_id(f: pa.Field) -> int | None:
    md = f.metadata
    if md and FIELD_ID in md:
        return int(md[FIELD_ID])
    return None


def _id_of(f: pa.Field) -> int:
    """The field id of a field of the plan's own schemas, which always carry one."""
    fid = _field_id(f)
    if fid is None:
        raise InvalidArgumentError(f"the plan's schema field {f.name!r} has no field id")
    return fid


def _with_id(f: pa.Field, fid: int) -> pa.Field:
    return f.with_metadata({FIELD_ID: str(fid).encode()})


def _index_fields(fields: Iterable[dict], out: dict[int, dict]) -> None:
    """Iceberg schema JSON fields by id (nested ones too)."""
    for f in fields:
        out[f["id"]] = f
        _index_type(f["type"], out)


def _index_type(t: Any, out: dict[int, dict]) -> None:
    if isinstance(t, dict):
        kind = t.get("type")
        if kind == "struct":
            _index_fields(t["fields"], out)
        elif kind == "list":
            out[t["element-id"]] = {
                "id": t["element-id"],
                "name": "element",
                "type": t["element"],
                "required": t.get("element-required", False),
            }
            _index_type(t["element"], out)
        elif kind == "map":
            out[t["key-id"]] = {"id": t["key-id"], "name": "key", "type": t["key"], "required": True}
            out[t["value-id"]] = {
                "id": t["value-id"],
                "name": "value",
                "type": t["value"],
                "required": t.get("value-required", False),
            }
            _index_type(t["key"], out)
            _index_type(t["value"], out)


@dataclass
class _PlanContext:
    """The plan-wide parts of a task: schemas, specs, residuals, name mapping."""

    plan_schema: pa.Schema
    schema_json: dict
    projected_json: dict
    fields_by_id: dict[int, dict]
    # the Arrow fields (with ids) of every top-level field of the table schema, by id
    table_arrow: dict[int, pa.Field]
    projected_arrow: pa.Schema
    specs: dict[int, dict]
    residuals: list
    filter: Any  # the scan's whole row filter (bound JSON)
    name_mapping: Any
    metadata_columns: list[str]
    out_schema: pa.Schema
    partition_type: pa.DataType
    partition_slot: dict[int, int]  # partition field id -> child index of the plan's struct
    _schema_cache: dict = field(default_factory=dict)
    # the FileIO properties data and delete files are reached with (None: local files)
    io_properties: Mapping[str, str] | None = None

    @staticmethod
    def of(plan_schema: pa.Schema, residuals: list | None, metadata_columns: Sequence[str]) -> _PlanContext:
        md = plan_schema.metadata or {}
        try:
            schema_text = md[_native.SCHEMA_KEY].decode()
            projected_text = md[_native.PROJECTED_SCHEMA_KEY].decode()
            specs = {s["spec-id"]: s for s in json.loads(md[_native.SPECS_KEY])}
        except KeyError as e:
            raise InvalidArgumentError(
                f"the tasks' schema has no plan metadata ({e.args[0]!r}): not a scan plan"
            ) from None
        if residuals is None:
            residuals = json.loads(md.get(_native.RESIDUALS_KEY, b"[]"))
        mapping_text = md.get(_native.NAME_MAPPING_KEY)
        name_mapping = _native.NameMapping.from_json(mapping_text.decode()) if mapping_text else None
        schema_json = json.loads(schema_text)
        projected_json = json.loads(projected_text)
        fields_by_id: dict[int, dict] = {}
        _index_fields(schema_json["fields"], fields_by_id)
        _index_fields(projected_json["fields"], fields_by_id)
        table_arrow_schema = _native.data_file_arrow_schema(_native.Schema.from_json(schema_text))
        projected_arrow = _native.data_file_arrow_schema(_native.Schema.from_json(projected_text))
        partition_type = plan_schema.field("partition").type
        slots = {}
        for i in range(partition_type.num_fields):
            fid = _field_id(partition_type.field(i))
            if fid is not None:
                slots[fid] = i
        # _partition as Spark reads it from Java: day fields are dates (the plan keeps them
        # as day numbers)
        day_ids = {f["field-id"] for sp in specs.values() for f in sp["fields"] if f["transform"] == "day"}
        meta_partition_type = pa.struct(
            [
                f.with_type(pa.date32()) if _field_id(f) in day_ids and pa.types.is_int32(f.type) else f
                for f in _struct_fields(partition_type)
            ]
        )
        out_fields = list(projected_arrow)
        for name in metadata_columns:
            if name not in METADATA_COLUMNS:
                raise InvalidArgumentError(
                    f"unknown metadata column {name!r} (known: {', '.join(METADATA_COLUMNS)})"
                )
            fid, t = METADATA_COLUMNS[name]
            out_fields.append(_with_id(pa.field(name, t or meta_partition_type, nullable=True), fid))
        return _PlanContext(
            plan_schema=plan_schema,
            schema_json=schema_json,
            projected_json=projected_json,
            fields_by_id=fields_by_id,
            table_arrow={_id_of(f): f for f in table_arrow_schema},
            projected_arrow=projected_arrow,
            specs=specs,
            residuals=residuals,
            filter=json.loads(md.get(_native.FILTER_KEY, b"true")),
            name_mapping=name_mapping,
            metadata_columns=list(metadata_columns),
            out_schema=pa.schema(out_fields),
            partition_type=partition_type,
            partition_slot=slots,
        )

    def column_path(self, name: str) -> list[dict[str, Any]] | None:
        """The fields (JSON objects) from the top level down to the column ``name`` (a dotted
        name of the table schema), for a residual's term."""
        fields = self.schema_json["fields"]
        path = []
        rest = name
        while rest:
            found = None
            for f in fields:
                if rest == f["name"] or rest.startswith(f["name"] + "."):
                    if found is None or len(f["name"]) > len(found["name"]):
                        found = f
            if found is None:
                return None
            path.append(found)
            rest = rest[len(found["name"]) + 1 :]
            t = found["type"]
            fields = t["fields"] if isinstance(t, dict) and t.get("type") == "struct" else []
            if rest and not fields:
                return None
        return path


# ---------------------------------------------------------------------------------------------
# values: single-value JSON (Appendix D) -> Arrow, parsed by the Rust core
# ---------------------------------------------------------------------------------------------


def _json_values(values: Sequence[Any], iceberg_type: Any, arrow_type: pa.DataType) -> pa.Array:
    """An array of ``iceberg_type`` (its JSON form) values given in their single-value JSON
    form (``initial-default``s, the literals of a residual), in ``arrow_type``."""
    arr = _native.single_values_to_arrow(json.dumps(iceberg_type), [json.dumps(v) for v in values])
    return arr if arr.type == arrow_type else arr.cast(arrow_type)


def _constant_array(value: Any, arrow_type: pa.DataType, n: int) -> pa.Array:
    """``n`` copies of a partition value as the plan holds it (a Python value of its Arrow
    column)."""
    if value is None:
        return pa.nulls(n, arrow_type)
    return pa.repeat(pa.scalar(value, arrow_type), n)


# ---------------------------------------------------------------------------------------------
# a file's columns matched to the read schema by field id
# ---------------------------------------------------------------------------------------------


def _assign_ids(schema: pa.Schema, mapping: Any) -> pa.Schema:
    """Field ids for a file written without them: from the name mapping, or (without one)
    by position, depth first, as Java's fallback ids."""
    counter = [0]

    def visit(f: pa.Field, path: list[str]) -> pa.Field:
        if mapping is not None:
            fid = mapping.find(path)
        else:
            counter[0] += 1
            fid = counter[0]
        t = f.type
        if pa.types.is_struct(t):
            t = pa.struct([visit(t.field(i), path + [t.field(i).name]) for i in range(t.num_fields)])
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            vf = visit(t.value_field, path + ["element"])
            t = pa.list_(vf) if pa.types.is_list(t) else pa.large_list(vf)
        elif pa.types.is_map(t):
            kf = visit(t.key_field, path + ["key"])
            itf = visit(t.item_field, path + ["value"])
            t = pa.map_(kf, itf)
        out = pa.field(f.name, t, f.nullable)
        return out if fid is None else _with_id(out, fid)

    return pa.schema([visit(f, [f.name]) for f in schema])


def _by_id(fields: Iterable[pa.Field]) -> dict[int, tuple[int, pa.Field]]:
    out = {}
    for i, f in enumerate(fields):
        fid = _field_id(f)
        if fid is not None:
            out[fid] = (i, f)
    return out


def _struct_fields(t: pa.DataType) -> list[pa.Field]:
    return [t.field(i) for i in range(t.num_fields)]


def _storage(arr: pa.Array) -> pa.Array:
    return arr.storage if isinstance(arr, pa.ExtensionArray) else arr


class _Conformer:
    """Turns a file's arrays into arrays of the read schema's types, by field id."""

    def __init__(self, ctx: _PlanContext, path: str):
        self.ctx = ctx
        self.path = path

    def missing(self, target: pa.Field, n: int) -> pa.Array:
        fid = _field_id(target)
        f = self.ctx.fields_by_id.get(fid) if fid is not None else None
        default = f.get("initial-default") if f is not None else None
        if f is not None and default is not None:
            try:
                value = _json_values([default], f["type"], target.type)[0]
                return pa.repeat(value, n)
            except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as e:
                raise InvalidInputError(
                    f"initial-default of field {fid} does not fit {target.type}: {e}", field=target.name
                ) from None
        if f is not None and f.get("required"):
            # Java's readers refuse this too ("Missing required field"): nulls would break
            # the column's contract, and a required column without an initial-default was
            # in the file when it was written, so the file is not what the table says
            raise InvalidInputError(
                f"data file {self.path} has no column for the required field "
                f"{target.name!r} (id {fid}), which has no initial-default",
                file=self.path,
                field=target.name,
            )
        return pa.nulls(n, target.type)

    def conform(self, arr: pa.Array, source: pa.Field, target: pa.Field) -> pa.Array:
        arr = _storage(arr)
        tt = target.type
        st = arr.type
        if pa.types.is_struct(tt):
            if not pa.types.is_struct(st):
                raise self._mismatch(source, target)
            have = _by_id(_struct_fields(st))
            children = []
            for child in _struct_fields(tt):
                cid = _field_id(child)
                if cid in have:
                    i, sf = have[cid]
                    children.append(self.conform(pc.struct_field(arr, [i]), sf, child))
                else:
                    children.append(self.missing(child, len(arr)))
            mask = arr.is_null() if arr.null_count else None
            return pa.StructArray.from_arrays(children, fields=_struct_fields(tt), mask=mask)
        if pa.types.is_list(tt):
            if not (pa.types.is_list(st) or pa.types.is_large_list(st)):
                raise self._mismatch(source, target)
            values = self.conform(arr.values, st.value_field, tt.value_field)
            offsets = arr.offsets
            if pa.types.is_large_list(st):
                offsets = offsets.cast(pa.int32())
            mask = arr.is_null() if arr.null_count else None
            return pa.ListArray.from_arrays(offsets, values, type=tt, mask=mask)
        if pa.types.is_map(tt):
            if not pa.types.is_map(st):
                raise self._mismatch(source, target)
            keys = self.conform(arr.keys, st.key_field, tt.key_field)
            items = self.conform(arr.items, st.item_field, tt.item_field)
            mask = arr.is_null() if arr.null_count else None
            return pa.MapArray.from_arrays(arr.offsets, keys, items, type=tt, mask=mask)
        if st == tt:
            return arr
        try:
            return arr.cast(tt)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            raise self._mismatch(source, target) from None

    def _mismatch(self, source: pa.Field, target: pa.Field) -> InvalidInputError:
        return InvalidInputError(
            f"column {source.name!r} (field id {_field_id(target)}) of {self.path} has type {source.type}, "
            f"which cannot be read as {target.type}",
            file=self.path,
            field=target.name,
        )


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------


def _open_parquet(location: str, what: str, io_properties: Mapping[str, str] | None) -> pq.ParquetFile:
    fs, path = filesystem_for(location, io_properties)
    try:
        return pq.ParquetFile(fs.open_input_file(path))
    except FileNotFoundError:
        raise IcefloeIOError(f"{what} {location} does not exist", file=location) from None
    except OSError as e:
        text = scrub(str(e), location, io_properties)
        if isinstance(e, (pa.ArrowInvalid,)) or "Parquet" in text or "magic" in text:
            raise InvalidInputError(
                f"{what} {location} is not a valid Parquet file: {text}", file=location
            ) from None
        raise io_error(f"cannot read {what} {location}: {text}", location) from None
    except pa.ArrowInvalid as e:
        raise InvalidInputError(
            f"{what} {location} is not a valid Parquet file: {scrub(str(e), location, io_properties)}",
            file=location,
        ) from None


def _file_schema(pf: pq.ParquetFile, ctx: _PlanContext) -> pa.Schema:
    schema = pf.schema_arrow
    if any(_field_id(f) is not None for f in schema):
        return schema
    return _assign_ids(schema, ctx.name_mapping)


def _read_table(pf: pq.ParquetFile, location: str, what: str, columns: list[str] | None = None) -> pa.Table:
    try:
        return pf.read(columns=columns)
    except (OSError, pa.ArrowException) as e:
        raise InvalidInputError(f"cannot read {what} {location}: {e}", file=location) from None


# ---------------------------------------------------------------------------------------------
# one task
# ---------------------------------------------------------------------------------------------


def _row_group_starts(pf: pq.ParquetFile) -> list[tuple[int, int, int]]:
    """(starting byte, midpoint byte, first row position) of each row group."""
    out = []
    row = 0
    md = pf.metadata
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        first = rg.column(0)
        start = first.data_page_offset
        if (
            first.has_dictionary_page
            and first.dictionary_page_offset is not None
            and first.dictionary_page_offset > 0
        ):
            start = min(start, first.dictionary_page_offset)
        size = sum(rg.column(j).total_compressed_size for j in range(rg.num_columns))
        out.append((start, start + size // 2, row))
        row += rg.num_rows
    return out


class _TaskReader:
    def __init__(self, ctx: _PlanContext, task: dict, residual: Any):
        self.ctx = ctx
        self.task = task
        self.location = task["file_path"]
        # The residual is exact only for partitions without nulls: planning evaluates
        # predicates on null partition values with Java's comparators (nulls first, so
        # `null != 'a'` and `null < 5` hold and leave `true`), while on rows a null never
        # matches a comparison. A task with a null in its partition tuple gets the whole
        # scan filter instead.
        if residual is not False and self._partition_has_null():
            residual = ctx.filter
        self.residual = residual
        if task["file_format"].lower() != "parquet":
            raise UnsupportedError(
                f"cannot read {self.location}: {task['file_format']} data files are not supported yet",
                file=self.location,
            )

    def _partition_has_null(self) -> bool:
        spec = self.ctx.specs.get(self.task["spec_id"])
        if spec is None or not spec["fields"]:
            return False
        partition = self.task["partition"] or {}
        names = [self.ctx.partition_type.field(i).name for i in range(self.ctx.partition_type.num_fields)]
        for pf in spec["fields"]:
            slot = self.ctx.partition_slot.get(pf["field-id"])
            if slot is None or partition.get(names[slot]) is None:
                return True
        return False

    # -- planning what to read --

    def _constants(self) -> dict[int, Any]:
        """Identity partition values by source field id (Java's PartitionUtil.constantsMap)."""
        out: dict[int, Any] = {}
        spec = self.ctx.specs.get(self.task["spec_id"])
        if spec is None:
            return out
        partition = self.task["partition"] or {}
        names = [self.ctx.partition_type.field(i).name for i in range(self.ctx.partition_type.num_fields)]
        for pf in spec["fields"]:
            if pf["transform"] != "identity":
                continue
            slot = self.ctx.partition_slot.get(pf["field-id"])
            if slot is None:
                continue
            out[pf["source-id"]] = partition.get(names[slot])
        return out

    def read(self, batch_size: int) -> Iterator[pa.RecordBatch]:
        ctx = self.ctx
        task = self.task
        pf = _open_parquet(self.location, "data file", ctx.io_properties)
        file_schema = _file_schema(pf, ctx)
        file_top = _by_id(file_schema)
        conformer = _Conformer(ctx, self.location)
        constants = self._constants()

        # the top-level fields to build: the projection, plus what the residual and the
        # equality deletes need
        residual_refs = _references(self.residual)
        extra_ids: list[int] = []
        for name in residual_refs:
            path = ctx.column_path(name)
            if path is None:
                raise InvalidArgumentError(f"residual column {name!r} is not in the table schema")
            extra_ids.append(path[0]["id"])
        eq_deletes = [d for d in task["deletes"] if d["content"] == _EQUALITY_DELETES]
        eq_ids = sorted({i for d in eq_deletes for i in (d["equality_ids"] or [])})

        projected_ids = [_field_id(f) for f in ctx.projected_arrow]
        build: dict[int, pa.Field | None] = {}  # top-level id -> target field (None: null)
        for f in ctx.projected_arrow:
            build[_id_of(f)] = f
        # A residual on a field of a struct that the projection prunes (`s.a > 10` with
        # only `s.b` selected) needs the struct as the table has it; the output is then
        # narrowed to the projected struct (see `_batch`).
        narrow: dict[int, pa.Field] = {}
        for fid in extra_ids:
            projected = build.get(fid)
            if (
                projected is not None
                and fid not in narrow
                and fid in ctx.table_arrow
                and projected.type != ctx.table_arrow[fid].type
            ):
                narrow[fid] = projected
                build[fid] = ctx.table_arrow[fid]
        for fid in extra_ids + eq_ids:
            if fid in build:
                continue
            if fid in ctx.table_arrow:
                build[fid] = ctx.table_arrow[fid]
            elif fid in file_top:
                # an equality column that is gone from the read schema: as the file has it
                build[fid] = _with_id(file_top[fid][1], fid)
            elif fid in ctx.fields_by_id:
                raise UnsupportedError(
                    f"equality deletes on nested field {fid} are not supported", file=self.location
                )
            else:
                build[fid] = None  # dropped and not in this file: null

        read_names = []
        for fid, target in build.items():
            if fid in constants or target is None:
                continue
            if fid in file_top:
                read_names.append(file_top[fid][1].name)
        lineage_in_file = {
            fid: file_top[fid][1].name for fid in (ROW_ID_ID, LAST_UPDATED_SEQ_ID) if fid in file_top
        }
        wants = set(ctx.metadata_columns)
        for fid, name in lineage_in_file.items():
            if (fid == ROW_ID_ID and "_row_id" in wants) or (
                fid == LAST_UPDATED_SEQ_ID and "_last_updated_sequence_number" in wants
            ):
                read_names.append(name)

        # which row groups the task's byte range covers (the row group's midpoint in the
        # range, as Parquet's range filter); positions stay file-global
        start, end = task["start"], task["start"] + task["length"]
        groups = _row_group_starts(pf)
        whole = start == 0 and end >= task["file_size_in_bytes"]
        selected = [i for i, (s, mid, _) in enumerate(groups) if whole or start <= mid < end]

        deleted = self._position_deletes(ctx)
        eq_sets = [_EqualityDeletes.read(d, ctx, build, file_top, self.location) for d in eq_deletes]

        residual_expr = _residual_expression(self.residual, ctx) if self.residual is not True else None
        for rg in selected:
            pos = groups[rg][2]  # file-global position of the row group's first row
            try:
                for raw in pf.iter_batches(
                    batch_size=batch_size, row_groups=[rg], columns=read_names, use_threads=True
                ):
                    n = raw.num_rows
                    if n == 0:
                        continue
                    out = self._batch(
                        raw,
                        n,
                        pos,
                        build,
                        file_top,
                        constants,
                        conformer,
                        deleted,
                        eq_sets,
                        residual_expr,
                        lineage_in_file,
                        projected_ids,
                        narrow,
                    )
                    pos += n
                    if out is not None and out.num_rows:
                        yield out
            except (OSError, pa.ArrowInvalid) as e:
                if isinstance(e, IcefloeIOError):
                    raise
                raise InvalidInputError(
                    f"cannot read data file {self.location}: {e}", file=self.location
                ) from None

    def _position_deletes(self, ctx: _PlanContext) -> Any:
        """One deletion vector of this file's deleted positions (DVs and position delete
        files merged), or None."""
        dv = None
        for d in self.task["deletes"]:
            if d["content"] != _POSITION_DELETES:
                continue
            if d["file_format"].lower() == "puffin":
                if d["referenced_data_file"] is not None and d["referenced_data_file"] != self.location:
                    raise InvalidInputError(
                        f"deletion vector in {d['file_path']} is for {d['referenced_data_file']}, "
                        f"not {self.location}",
                        file=d["file_path"],
                    )
                try:
                    one = _native.DeletionVector.read_for_entry(
                        d["file_path"],
                        d["content_offset"],
                        d["content_size_in_bytes"],
                        d["record_count"],
                        d["referenced_data_file"],
                        d["file_size_in_bytes"],
                        io=file_io_for(d["file_path"], ctx.io_properties),
                    )
                except FileNotFoundError:
                    raise IcefloeIOError(
                        f"delete file {d['file_path']} does not exist", file=d["file_path"]
                    ) from None
            else:
                one = _native.DeletionVector.from_positions(
                    _read_position_deletes(d, self.location, ctx.io_properties)
                )
            dv = one if dv is None else dv.merge(one)
        return dv

    def _batch(
        self,
        raw: pa.RecordBatch,
        n: int,
        pos: int,
        build: dict,
        file_top: dict,
        constants: dict,
        conformer: _Conformer,
        deleted: Any,
        eq_sets: list,
        residual_expr: Any,
        lineage_in_file: dict,
        projected_ids: list,
        narrow: dict,
    ) -> pa.RecordBatch | None:
        ctx = self.ctx
        columns: dict[int, pa.Array | None] = {}
        for fid, target in build.items():
            if target is None:
                columns[fid] = None
                continue
            if fid in constants:
                try:
                    columns[fid] = _constant_array(constants[fid], target.type, n)
                except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                    raise InvalidInputError(
                        f"partition value of field {fid} does not fit {target.type}: {e}", file=self.location
                    ) from None
            elif fid in file_top:
                arr = raw.column(file_top[fid][1].name)
                columns[fid] = conformer.conform(arr, file_top[fid][1], target)
            else:
                columns[fid] = conformer.missing(target, n)

        keep = None
        if deleted is not None:
            keep = deleted.keep_mask(pos, n)
        for eq in eq_sets:
            mask = eq.keep_mask(columns, n)
            keep = mask if keep is None else pc.and_(keep, mask)

        names = {fid: (build[fid].name if build[fid] is not None else f"_dropped_{fid}") for fid in build}
        work_cols = {}
        for fid, arr in columns.items():
            if arr is None:
                continue
            work_cols[names[fid]] = arr
        # metadata columns
        wants = ctx.metadata_columns
        positions = None
        if "_pos" in wants or "_row_id" in wants:
            positions = pa.array(np.arange(pos, pos + n, dtype=np.int64))
        meta: dict[str, pa.Array] = {}
        task = self.task
        for name in wants:
            if name == "_file":
                meta[name] = pa.repeat(pa.scalar(self.location, pa.string()), n)
            elif name == "_pos":
                meta[name] = positions
            elif name == "_spec_id":
                meta[name] = pa.repeat(pa.scalar(task["spec_id"], pa.int32()), n)
            elif name == "_partition":
                # an unpartitioned table's _partition is null, as Spark reads it from Java
                if ctx.partition_type.num_fields == 0:
                    meta[name] = pa.nulls(n, ctx.partition_type)
                else:
                    value = pa.scalar(task["partition"], ctx.partition_type).cast(
                        ctx.out_schema.field(name).type
                    )
                    meta[name] = pa.repeat(value, n)
            elif name == "_row_id":
                meta[name] = self._lineage(
                    raw,
                    lineage_in_file.get(ROW_ID_ID),
                    n,
                    None if task["first_row_id"] is None else pc.add(positions, task["first_row_id"]),
                )
            elif name == "_last_updated_sequence_number":
                inherited = None
                if task["first_row_id"] is not None:
                    inherited = pa.repeat(pa.scalar(task["data_sequence_number"], pa.int64()), n)
                meta[name] = self._lineage(raw, lineage_in_file.get(LAST_UPDATED_SEQ_ID), n, inherited)
            elif name == "_deleted":
                meta[name] = pa.repeat(pa.scalar(False), n) if keep is None else pc.invert(keep)

        out_arrays = [
            conformer.conform(columns[fid], build[fid], narrow[fid]) if fid in narrow else columns[fid]
            for fid in projected_ids
        ] + [meta[name] for name in wants]
        if out_arrays:
            batch = pa.RecordBatch.from_arrays(out_arrays, schema=ctx.out_schema)
        else:  # no columns (counting rows): a batch of n rows all the same
            batch = pa.RecordBatch.from_struct_array(pa.nulls(n, pa.struct([])))
        mask = None if "_deleted" in wants else keep
        if residual_expr is not None:
            work = pa.table(work_cols) if work_cols else pa.table({"_": pa.nulls(n)})
            try:
                rmask = _evaluate(work, residual_expr)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise InvalidArgumentError(
                    f"cannot apply the residual filter {json.dumps(self.residual)}: {e}"
                ) from None
            mask = rmask if mask is None else pc.and_(mask, rmask)
        if mask is not None:
            batch = batch.filter(mask)
        return batch

    def _lineage(
        self, raw: pa.RecordBatch, column: str | None, n: int, inherited: pa.Array | None
    ) -> pa.Array:
        if column is None:
            return inherited if inherited is not None else pa.nulls(n, pa.int64())
        arr = raw.column(column).cast(pa.int64())
        if inherited is None:
            return arr
        return pc.coalesce(arr, inherited)


def _evaluate(work: pa.Table, expr: pc.Expression) -> pa.Array:
    """The boolean mask of ``expr`` over ``work`` (null counts as not matching)."""
    idx = pa.array(np.arange(work.num_rows, dtype=np.int64))
    table = work.append_column("__row", idx)
    hits = table.filter(expr).column("__row").to_numpy()
    mask = np.zeros(work.num_rows, dtype=bool)
    mask[hits] = True
    return pa.array(mask)


def _read_position_deletes(d: dict, data_location: str, io_properties: Mapping[str, str] | None) -> pa.Array:
    """The positions in a position delete file that belong to ``data_location``."""
    location = d["file_path"]
    if d["file_format"].lower() != "parquet":
        raise UnsupportedError(
            f"cannot read {location}: {d['file_format']} delete files are not supported yet", file=location
        )
    pf = _open_parquet(location, "delete file", io_properties)
    schema = pf.schema_arrow
    by_id = _by_id(schema)
    path_col = by_id.get(DELETE_FILE_PATH_ID, (None, None))[1]
    pos_col = by_id.get(DELETE_FILE_POS_ID, (None, None))[1]
    if path_col is None or pos_col is None:
        names = schema.names
        if "file_path" in names and "pos" in names:
            path_col, pos_col = schema.field("file_path"), schema.field("pos")
        else:
            raise InvalidInputError(
                f"position delete file {location} has no file_path and pos columns", file=location
            )
    table = _read_table(pf, location, "delete file", [path_col.name, pos_col.name])
    paths = table.column(path_col.name)
    if not pa.types.is_string(paths.type) and not pa.types.is_large_string(paths.type):
        raise InvalidInputError(
            f"file_path of position delete file {location} is {paths.type}, not a string", file=location
        )
    rows = table.filter(pc.equal(paths, data_location))
    return rows.column(pos_col.name).cast(pa.int64()).combine_chunks()


class _EqualityDeletes:
    """The rows of one equality delete file, keyed for anti-joining data rows."""

    def __init__(self, ids: list[int], table: pa.Table, location: str):
        self.ids = ids
        self.table = table  # columns "0".."k-1", in the order of ids
        self.location = location

    @staticmethod
    def read(d: dict, ctx: _PlanContext, build: dict, file_top: dict, data_location: str) -> _EqualityDeletes:
        location = d["file_path"]
        if d["file_format"].lower() != "parquet":
            raise UnsupportedError(
                f"cannot read {location}: {d['file_format']} delete files are not supported yet",
                file=location,
            )
        ids = list(d["equality_ids"] or [])
        if not ids:
            raise InvalidInputError(
                f"equality delete file {location} has no equality field ids", file=location
            )
        pf = _open_parquet(location, "delete file", ctx.io_properties)
        schema = _file_schema(pf, ctx)
        have = _by_id(schema)
        missing = [i for i in ids if i not in have]
        if missing:
            raise InvalidInputError(
                f"equality delete file {location} lacks the equality columns {missing}", file=location
            )
        table = _read_table(pf, location, "delete file", [have[i][1].name for i in ids])
        conformer = _Conformer(ctx, location)
        cols = []
        for fid in ids:
            target = build.get(fid)
            arr = (
                table.column(have[fid][1].name).combine_chunks()
                if table.num_rows
                else pa.array([], have[fid][1].type)
            )
            if target is not None:
                arr = conformer.conform(arr, have[fid][1], target)
            cols.append(arr)
        return _EqualityDeletes(ids, pa.table({str(k): c for k, c in enumerate(cols)}), location)

    def keep_mask(self, columns: dict[int, pa.Array], n: int) -> pa.Array:
        if self.table.num_rows == 0:
            return pa.array(np.ones(n, dtype=bool))
        # codes per column: the data's and the deletes' values encoded together, nulls
        # getting a code of their own, so equal codes mean equal under Iceberg's
        # equality-delete rules (null equals null)
        data_codes = {}
        del_codes = {}
        for k, fid in enumerate(self.ids):
            data = columns.get(fid)
            dels = self.table.column(str(k)).combine_chunks()
            if data is None:
                data = pa.nulls(n, dels.type)
            if data.type != dels.type:
                try:
                    dels = dels.cast(data.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    raise InvalidInputError(
                        f"equality column {fid} of delete file {self.location} has type {dels.type}, the data {data.type}",
                        file=self.location,
                    ) from None
            both = pa.concat_arrays([_storage(data), _storage(dels)])
            codes = pc.dictionary_encode(both, null_encoding="encode").indices
            data_codes[f"k{k}"] = codes.slice(0, n)
            del_codes[f"k{k}"] = codes.slice(n)
        keys = list(data_codes)
        left = pa.table(dict(data_codes, __row=pa.array(np.arange(n, dtype=np.int64))))
        right = pa.table(del_codes)
        hit = left.join(right, keys=keys, join_type="left semi").column("__row").to_numpy()
        keep = np.ones(n, dtype=bool)
        keep[hit] = False
        return pa.array(keep)


# ---------------------------------------------------------------------------------------------
# residual filters (the JSON form of bound expressions) -> pyarrow expressions
# ---------------------------------------------------------------------------------------------


def _term_name(term: Any) -> str:
    if isinstance(term, dict):
        if term.get("type") == "reference":
            return term["term"]
        raise UnsupportedError(f"residual term {json.dumps(term)} is not supported (only column references)")
    return term


def _references(expr: Any) -> list[str]:
    out: list[str] = []

    def walk(e: Any) -> None:
        if isinstance(e, dict):
            t = e.get("type")
            if t in ("and", "or"):
                walk(e["left"])
                walk(e["right"])
            elif t == "not":
                walk(e["child"])
            elif "term" in e:
                name = _term_name(e["term"])
                if name not in out:
                    out.append(name)

    walk(expr)
    return out


def _residual_expression(expr: Any, ctx: _PlanContext) -> pc.Expression:
    if expr is True:
        return pc.scalar(True)
    if expr is False:
        return pc.scalar(False)
    t = expr["type"]
    if t == "and":
        return pc.and_kleene(
            _residual_expression(expr["left"], ctx), _residual_expression(expr["right"], ctx)
        )
    if t == "or":
        return pc.or_kleene(_residual_expression(expr["left"], ctx), _residual_expression(expr["right"], ctx))
    if t == "not":
        return pc.invert(_residual_expression(expr["child"], ctx))
    if t in ("true", "false"):
        return pc.scalar(t == "true")
    name = _term_name(expr["term"])
    path = ctx.column_path(name)
    if path is None:
        raise InvalidArgumentError(f"residual column {name!r} is not in the table schema")
    ref = pc.field(*[f["name"] for f in path])
    arrow_type = _leaf_arrow_type(ctx, path)
    is_float = pa.types.is_floating(arrow_type)
    if t == "is-null":
        return ref.is_null()
    if t == "not-null":
        return ref.is_valid()
    if t == "is-nan":
        return pc.and_kleene(ref.is_valid(), pc.is_nan(ref)) if is_float else pc.scalar(False)
    if t == "not-nan":
        return pc.or_kleene(ref.is_null(), pc.invert(pc.is_nan(ref))) if is_float else pc.scalar(True)
    iceberg_type = path[-1]["type"]
    if t in ("in", "not-in"):
        value_set = _json_values(expr["values"], iceberg_type, arrow_type)
        inside = pc.is_in(ref, value_set=value_set)
        if t == "in":
            return pc.and_kleene(ref.is_valid(), inside)
        return pc.and_kleene(ref.is_valid(), pc.invert(inside))
    value = _json_values([expr["value"]], iceberg_type, arrow_type)[0]
    lit = pc.scalar(value)
    if t == "lt":
        return pc.less(ref, lit)
    if t == "lt-eq":
        return pc.less_equal(ref, lit)
    if t == "gt":
        # NaN sorts above every number (Java's Float.compare, Spark's ordering)
        cmp = pc.greater(ref, lit)
        return pc.or_kleene(cmp, pc.and_kleene(ref.is_valid(), pc.is_nan(ref))) if is_float else cmp
    if t == "gt-eq":
        cmp = pc.greater_equal(ref, lit)
        return pc.or_kleene(cmp, pc.and_kleene(ref.is_valid(), pc.is_nan(ref))) if is_float else cmp
    if t == "eq":
        return pc.equal(ref, lit)
    if t == "not-eq":
        return pc.not_equal(ref, lit)
    if t == "starts-with":
        return pc.starts_with(ref, pattern=value.as_py())
    if t == "not-starts-with":
        return pc.invert(pc.starts_with(ref, pattern=value.as_py()))
    raise UnsupportedError(f"residual operation {t!r} is not supported")


def _leaf_arrow_type(ctx: _PlanContext, path: list[dict]) -> pa.DataType:
    top = ctx.table_arrow[path[0]["id"]]
    t = top.type
    for f in path[1:]:
        t = t.field(t.get_field_index(f["name"])).type
    return t


# ---------------------------------------------------------------------------------------------
# scans (used by icefloe.table.TableScan)
# ---------------------------------------------------------------------------------------------


def read_plan_stream(
    stream: Any,
    metadata_columns: Sequence[str] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    io_properties: Mapping[str, str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Reads the tasks of a ``PlanBatches`` stream as they are planned (bounded memory)."""
    ctx = None
    for plan_batch in stream:
        if _rust_reads(stream.schema, plan_batch):
            plan_batch = plan_batch.replace_schema_metadata(stream.schema.metadata)
            yield from _read_rust(
                plan_batch, plan_batch, metadata_columns, batch_size, io_properties, stream.residuals
            )
            continue
        if ctx is None:
            ctx = _PlanContext.of(stream.schema, [], metadata_columns)
            ctx.io_properties = io_properties
        yield from _read_plan_batch(ctx, plan_batch, batch_size, stream.residuals)


def counts_from_metadata(plan: pa.Table) -> bool:
    """Whether the record counts of the plan's files are its row count: no task has
    deletes, and every task's residual is ``true`` and exact (see ``_TaskReader``)."""
    ctx = _PlanContext.of(plan.schema, None, ())
    if ctx.filter is True:
        return all(len(d) == 0 for d in plan.column("deletes").to_pylist())
    for row in plan.to_pylist():
        if row["deletes"] or ctx.residuals[row["residual"]] is not True:
            return False
        if _TaskReader(ctx, row, True).residual is not True:
            return False
    return True


__all__ += ["output_schema", "local_path", "read_plan_stream", "counts_from_metadata"]
