"""Deprecated alias of :mod:`icefloe.executor.position_deletes`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .executor.position_deletes import *  # noqa: F403
from .executor.position_deletes import __all__  # noqa: F401

warnings.warn(
    "icefloe.deletes is deprecated: use icefloe.executor.position_deletes", DeprecationWarning, stacklevel=2
)
