"""File locations on the executor side: the one place that turns a location into a pyarrow
file system and path."""

from __future__ import annotations

import re

import pyarrow.fs as pafs

from ..errors import UnsupportedError

__all__ = ["local_path", "filesystem_for"]


def local_path(location: str) -> str:
    """A local file system path for a file location: a plain path, or a ``file:`` URI with
    its scheme stripped as the Rust ``LocalFileIO`` does (no percent-decoding: Java's Hadoop
    file system writes ``%3D`` in partition folder names literally)."""
    if location.startswith("file://"):
        return location[len("file://") :]
    if location.startswith("file:"):
        return location[len("file:") :]
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", location)
    if scheme:
        raise UnsupportedError(
            f"cannot read {location}: only local files (paths and file: URIs) are supported "
            f"by the reader so far, not {scheme.group(1)}://",
            file=location,
        )
    return location


def filesystem_for(location: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system and path of a file location. ``file:`` URIs and plain paths
    are local files named without percent-decoding: Java (Hadoop) writes the ``%3D`` of an
    escaped partition value literally, and the location recorded in the manifest must be
    where the file is (pyarrow's ``from_uri`` would decode it)."""
    if location.startswith("file:") or "://" not in location:
        return pafs.LocalFileSystem(), local_path(location)
    return pafs.FileSystem.from_uri(location)
