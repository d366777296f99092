"""Deprecated alias of :mod:`icefloe.executor.read`, where this module moved when the package was
layered by where code runs. It will be removed in a later release."""

import warnings

from .executor.read import *  # noqa: F403
from .executor.read import __all__  # noqa: F401

warnings.warn("icefloe.reader is deprecated: use icefloe.executor.read", DeprecationWarning, stacklevel=2)
