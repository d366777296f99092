"""The executor side of ``rewrite_position_delete_files``: one unit of a delete file group
(planned in Rust, ``icefloe::maintenance::rewrite_position_deletes``) read, its deletes of
data files that are no longer live dropped, and written as new delete files (DVs in v3,
position delete files in v2) by the Rust writer.

A unit is a plain tuple (:data:`DeleteUnit`) so that Spark can ship it; the result is the
Arrow IPC bytes of the new delete files' rows.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from .. import _native
from .files import file_io_for
from .write import data_files_to_ipc

__all__ = ["DeleteUnit", "rewrite_delete_unit"]

#: (table metadata JSON, the unit's IPC bytes, FileIO properties, file name prefix)
DeleteUnit = tuple[str, bytes, "Mapping[str, str] | None", str]


def rewrite_delete_unit(unit: DeleteUnit) -> bytes:
    """Rewrites one unit and returns the new delete files' rows as IPC bytes."""
    metadata_json, payload, io_properties, prefix = unit
    md = _native.TableMetadata.from_json(metadata_json)
    io = file_io_for(md.location, dict(io_properties) if io_properties else None)
    rows = pa.Table.from_batches([_native.rewrite_position_delete_unit(io, md, payload, prefix)])
    return data_files_to_ipc(rows)
