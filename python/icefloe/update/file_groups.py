"""What ``rewrite_data_files`` and ``rewrite_position_delete_files`` share: running the
read units of their planned groups (threads here, or Spark's executors) and committing the
groups as Java's commit managers do, all at once or, with ``partial-progress.enabled``, in
up to ``partial-progress.max-commits`` commits, of which a failed one is logged and skipped
(its transaction deleted its files)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa

from .._log import log
from ..errors import CommitStateUnknownError
from ..executor.write import data_files_from_ipc

__all__ = ["local_map", "rewrite_units", "commit_groups", "CommitOutcome"]

U = TypeVar("U")


def local_map(workers: int) -> Callable[[Callable[[U], bytes], Sequence[U]], list[bytes]]:
    """``map_units`` on ``workers`` threads of this process (one: in order, on this thread)."""

    def run(fn: Callable[[U], bytes], units: Sequence[U]) -> list[bytes]:
        if workers <= 1 or len(units) <= 1:
            return [fn(u) for u in units]
        # the Rust reader and the writers release the GIL
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(fn, units))

    return run


def rewrite_units(
    group_count: int,
    units: Sequence[U],
    owner: Sequence[int],
    fn: Callable[[U], bytes],
    map_units: Callable[[Callable[[U], bytes], Sequence[U]], list[bytes]],
) -> list[list[pa.Table]]:
    """Runs ``fn`` on every unit through ``map_units`` and gathers the files each wrote (its
    data-file rows, Arrow IPC) per group: ``owner[i]`` is the group of ``units[i]``."""
    results = map_units(fn, units)
    new_files: list[list[pa.Table]] = [[] for _ in range(group_count)]
    for gi, payload in zip(owner, results, strict=True):
        new_files[gi].append(data_files_from_ipc(payload))
    return new_files


@dataclass
class CommitOutcome:
    """The snapshots committed, the groups they hold, and the batches that failed."""

    snapshot_ids: list[int] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    failed_commits: int = 0
    failed: list[int] = field(default_factory=list)


def commit_groups(
    plan: dict[str, Any], group_count: int, commit: Callable[[list[int]], int], action: str
) -> CommitOutcome:
    """Commits the groups (indices into the plan's groups) with ``commit(batch) ->
    snapshot id``: one batch of all groups, or with partial progress batches of
    ``ceil(total groups / max commits)`` groups, where a failure is logged and the next
    batch runs (Java's partial-progress commit service). A commit whose outcome is unknown
    always stops the action."""
    partial = bool(plan["partial_progress_enabled"])
    per_commit = -(-plan["total_group_count"] // plan["max_commits"]) if partial else group_count
    out = CommitOutcome()
    for start in range(0, group_count, max(1, per_commit)):
        batch = list(range(start, min(group_count, start + per_commit)))
        try:
            sid = commit(batch)
        except CommitStateUnknownError:
            raise
        except Exception as e:  # noqa: BLE001 - as Java: a failed commit of partial progress is logged
            if not partial:
                raise
            out.failed_commits += 1
            out.failed.extend(batch)
            log.warning("%s: a commit of %d file groups failed: %s", action, len(batch), e)
            continue
        out.snapshot_ids.append(sid)
        out.committed.extend(batch)
    return out
