"""Points in time as the API takes them: a timezone-aware datetime or epoch milliseconds."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = ["epoch_millis"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def epoch_millis(t: Any, what: str) -> int:
    """Milliseconds since the epoch of a timezone-aware datetime or an int; ``what`` names the
    argument in errors."""
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            raise InvalidArgumentError(f"{what} must be timezone-aware (or milliseconds since the epoch)")
        # exact integer arithmetic: `timestamp() * 1000` is a float product that can land a
        # millisecond short, and truncates before 1970 instead of flooring
        return (t - _EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(t, int) and not isinstance(t, bool):
        return t
    raise InvalidArgumentTypeError(f"{what} must be a datetime or milliseconds since the epoch")
