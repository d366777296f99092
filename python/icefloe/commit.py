"""Deprecated alias of :mod:`icefloe.update.transaction`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .update.transaction import *  # noqa: F403
from .update.transaction import __all__  # noqa: F401

warnings.warn(
    "icefloe.commit is deprecated: use icefloe.update.transaction", DeprecationWarning, stacklevel=2
)
