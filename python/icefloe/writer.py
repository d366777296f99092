"""Deprecated alias of :mod:`icefloe.executor.write`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .executor.write import *  # noqa: F403
from .executor.write import __all__  # noqa: F401

warnings.warn("icefloe.writer is deprecated: use icefloe.executor.write", DeprecationWarning, stacklevel=2)
