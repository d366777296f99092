"""What the change builders need of the table they change. ``icefloe.table.Table`` is one; the
builders name this protocol rather than ``Table`` so that imports flow from the façade down to
them, never back."""

from __future__ import annotations

from typing import Any, Protocol

from .. import _native

__all__ = ["CatalogTable"]


class CatalogTable(Protocol):
    """A table's current metadata and where it came from; its catalog commits changes."""

    metadata: _native.TableMetadata
    metadata_location: str | None
    catalog: Any
    identifier: tuple[str, ...] | None
