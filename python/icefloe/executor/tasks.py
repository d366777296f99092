"""The tasks a scan plan hands to readers: ``FileScanTask`` (one data file or byte range, with
its deletes) and ``CombinedScanTask`` (a group of them for one reader, a slice of the plan
table, serializable for a Spark executor). Executor code: imports nothing of the driver."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from .. import _native

__all__ = ["FileScanTask", "CombinedScanTask", "tasks_of"]


@dataclass(frozen=True)
class FileScanTask:
    """One data file (or byte range of it) to read, with the deletes to apply."""

    file_path: str
    file_format: str
    start: int
    length: int
    record_count: int
    file_size_in_bytes: int
    spec_id: int
    partition: dict
    data_sequence_number: int
    first_row_id: int | None
    residual: dict | bool
    deletes: list


@dataclass(frozen=True)
class CombinedScanTask:
    """Tasks packed together for one reader: a slice of the plan table."""

    table: pa.Table

    @property
    def tasks(self) -> list[FileScanTask]:
        return list(tasks_of(self.table))

    def to_bytes(self) -> bytes:
        """The tasks as Arrow IPC stream bytes (schema metadata included)."""
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.table.schema) as writer:
            writer.write_table(self.table)
        return sink.getvalue().to_pybytes()

    @staticmethod
    def from_bytes(data: bytes) -> CombinedScanTask:
        """Reads ``to_bytes()`` or a payload of ``TableScan.plan_task_payloads()`` (the same
        IPC stream compressed as an LZ4 frame)."""
        return CombinedScanTask(pa.ipc.open_stream(_native.task_group_ipc(data)).read_all())


def tasks_of(table: pa.Table) -> Iterator[FileScanTask]:
    """The tasks of a plan table (or a slice of one), one row at a time."""
    residuals = json.loads(table.schema.metadata[_native.RESIDUALS_KEY])
    # one batch at a time: only the tasks being iterated exist as Python objects
    rows = (row for batch in table.to_batches() for row in batch.to_pylist())
    for row in rows:
        yield FileScanTask(
            file_path=row["file_path"],
            file_format=row["file_format"],
            start=row["start"],
            length=row["length"],
            record_count=row["record_count"],
            file_size_in_bytes=row["file_size_in_bytes"],
            spec_id=row["spec_id"],
            partition=row["partition"],
            data_sequence_number=row["data_sequence_number"],
            first_row_id=row["first_row_id"],
            residual=residuals[row["residual"]],
            deletes=row["deletes"],
        )
