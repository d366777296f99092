"""Manifests and manifest lists as pyarrow tables.

One row per manifest entry (or per manifest of a list), with the spec's field names as
columns; the partition tuple is a struct column typed by the manifest's own partition spec.
Decoding and encoding happen in Rust; this module only moves Arrow data across.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from . import _native

__all__ = [
    "entries_schema",
    "manifest_list_schema",
    "read_manifest_list",
    "read_manifest",
    "manifest_metadata",
    "write_manifest",
    "write_manifest_list",
]


def _one_batch(data: pa.Table | pa.RecordBatch, schema: pa.Schema | None = None) -> pa.RecordBatch:
    if isinstance(data, pa.RecordBatch):
        return data
    batches = data.combine_chunks().to_batches()
    if batches:
        return batches[0]
    return pa.RecordBatch.from_pylist([], schema=schema or data.schema)


def _list_rows(manifests: pa.Table | pa.RecordBatch | Iterable[dict[str, Any]]) -> pa.RecordBatch:
    schema = _native.manifest_list_schema()
    if isinstance(manifests, (pa.Table, pa.RecordBatch)):
        return _one_batch(manifests, schema)
    return pa.RecordBatch.from_pylist(
        [{k: row.get(k) for k in schema.names} for row in manifests], schema=schema
    )


def entries_schema(schema: _native.Schema, spec: _native.PartitionSpec) -> pa.Schema:
    """The Arrow schema of manifest entries for files partitioned by ``spec`` over ``schema``
    (what ``read_manifest`` returns and ``write_manifest`` takes)."""
    return _native.manifest_entries_schema(schema, spec)


def manifest_list_schema() -> pa.Schema:
    """The Arrow schema of manifest list rows."""
    return _native.manifest_list_schema()


def read_manifest_list(path: str) -> pa.Table:
    """The manifest list at ``path``: one row per manifest (``manifest_file`` fields).

    Version-1 lists read with the Appendix E defaults (sequence numbers 0, content data).
    """
    return pa.Table.from_batches([_native.read_manifest_list_batch(path)])


def read_manifest(
    path: str,
    manifest_file: dict[str, Any] | None = None,
    *,
    stats: bool = True,
    bounds_for: Sequence[int] | None = None,
    decode_bounds: Sequence[str | int] | None = None,
) -> pa.Table:
    """The entries of the manifest at ``path``, one row each.

    With ``manifest_file`` (the manifest's row of ``read_manifest_list(...).to_pylist()``),
    snapshot ids, sequence numbers and first row ids are inherited as the spec says;
    without it, values are as stored in the file.

    What is decoded can be narrowed, as a scan does: ``stats=False`` skips column sizes,
    value/null/NaN counts and split offsets; ``bounds_for`` keeps lower/upper bounds only for
    these field ids. ``decode_bounds`` adds the bounds of the named columns (full names in
    the manifest's schema, or field ids) as typed values, in the struct columns
    ``lower_bound_values`` and ``upper_bound_values``.
    """
    row = None if manifest_file is None else _list_rows([manifest_file])
    bounds = None if bounds_for is None else [int(i) for i in bounds_for]
    decode = None if decode_bounds is None else [str(c) for c in decode_bounds]
    return pa.Table.from_batches(
        [
            _native.read_manifest_batch(
                path, manifest_file=row, stats=stats, bounds_for=bounds, decode_bounds=decode
            )
        ]
    )


def manifest_metadata(path: str) -> dict[str, str]:
    """The key-value metadata of a manifest (or manifest list) file, as written."""
    return dict(_native.manifest_metadata(path))


def write_manifest(
    path: str,
    entries: pa.Table | pa.RecordBatch,
    *,
    schema: _native.Schema,
    spec: _native.PartitionSpec,
    format_version: int,
    snapshot_id: int,
    content: int = 0,
    compression: str = "deflate",
) -> dict[str, Any]:
    """Writes ``entries`` (the columns ``read_manifest`` returns) as a new manifest file.

    ``snapshot_id`` is the snapshot that writes the manifest; ``content`` is 0 for data and
    1 for delete files. Returns the manifest's row for a manifest list, with sequence
    numbers ``None`` until the list assigns them.
    """
    batch = _one_batch(entries)
    row = _native.write_manifest_batch(
        path,
        batch,
        schema,
        spec,
        format_version=format_version,
        content=content,
        snapshot_id=snapshot_id,
        compression=compression,
    )
    return row.to_pylist()[0]


def write_manifest_list(
    path: str,
    manifests: pa.Table | pa.RecordBatch | Iterable[dict[str, Any]],
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    first_row_id: int | None = None,
    compression: str = "deflate",
) -> int | None:
    """Writes a manifest list; rows with ``sequence_number`` None get this snapshot's.

    In v3, data manifests without a ``first_row_id`` are assigned one from ``first_row_id``
    on; the return value is then the table's next row id (None before v3).
    """
    return _native.write_manifest_list_batch(
        path,
        _list_rows(manifests),
        format_version=format_version,
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent_snapshot_id,
        sequence_number=sequence_number,
        first_row_id=first_row_id,
        compression=compression,
    )
