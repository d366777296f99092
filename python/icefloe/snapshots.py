"""Deprecated alias of :mod:`icefloe.update.snapshots`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .update.snapshots import *  # noqa: F403
from .update.snapshots import __all__  # noqa: F401

warnings.warn(
    "icefloe.snapshots is deprecated: use icefloe.update.snapshots", DeprecationWarning, stacklevel=2
)
