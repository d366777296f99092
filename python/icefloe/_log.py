"""The package's logger and the short form of a list of paths in its lines (shared by the
catalog and the update code, below both in the import order)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

log = logging.getLogger("icefloe")


def some_paths(paths: Sequence[str], limit: int = 10) -> str:
    """The first paths of a list, for a log line."""
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
