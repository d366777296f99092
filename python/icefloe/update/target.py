"""What the change builders need of the table they change. ``icefloe.table.Table`` is one; the
builders name this protocol rather than ``Table`` so that imports flow from the façade down to
them, never back."""

from __future__ import annotations

from typing import Any, Protocol

from .. import _native
from ..errors import InvalidArgumentError

__all__ = ["CatalogTable", "CatalogState", "catalog_state"]


class CatalogTable(Protocol):
    """A table's current metadata and where it came from; its catalog commits changes."""

    metadata: _native.TableMetadata
    metadata_location: str | None
    catalog: Any
    identifier: tuple[str, ...] | None

    def refresh(self) -> Any: ...

    @property
    def io(self) -> _native.FileIO:
        """The FileIO the table's files are written through."""
        ...


# (the catalog's native object, (namespace, name), (metadata location, metadata)): what the
# commit bindings take
CatalogState = tuple[Any, tuple[list[str], str], tuple[str, _native.TableMetadata]]


def catalog_state(table: CatalogTable) -> CatalogState:
    """The table's catalog, identifier and current metadata, for a commit; a table opened from
    a file has no catalog to commit to."""
    ident, location = table.identifier, table.metadata_location
    if table.catalog is None or ident is None or location is None:
        raise InvalidArgumentError("this table was opened from a file, not loaded from a catalog")
    return table.catalog.native, (list(ident[:-1]), ident[-1]), (location, table.metadata)
