"""Deprecated alias of :mod:`icefloe.update.row_deletes`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .update.row_deletes import *  # noqa: F403
from .update.row_deletes import __all__  # noqa: F401

warnings.warn(
    "icefloe.row_deletes is deprecated: use icefloe.update.row_deletes", DeprecationWarning, stacklevel=2
)
