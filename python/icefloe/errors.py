"""Exceptions raised by icefloe.

Every error from the Rust core arrives as one of these classes, chosen by its kind.
Errors about bad input carry ``file`` (the file that was read, or ``None`` for input
given as a string) and ``field`` (the JSON path of the bad field, e.g.
``schemas[0].fields[2].type``).
"""

from __future__ import annotations


class IcefloeError(Exception):
    """Base class of all icefloe errors."""

    def __init__(self, message: str, file: str | None = None, field: str | None = None):
        super().__init__(message)
        self.file = file or None
        self.field = field or None


class InvalidInputError(IcefloeError):
    """Input that breaks the Iceberg spec (base of the metadata errors below).

    Raised as itself for a compressed part of a file (an Avro block of a manifest or
    manifest list, a Puffin blob or footer, gzip metadata JSON) that decompresses, or says it
    decompresses, to more than it can hold or than the limit allows: one file may
    decompress to at most 256 MiB unless the environment variable
    ``ICEFLOE_MAX_DECOMPRESSED_BYTES`` says otherwise. ``field`` names the block or blob.
    """


class InvalidJsonError(InvalidInputError):
    """The bytes are not valid JSON (or not valid gzip around JSON)."""


class InvalidMetadataError(InvalidInputError):
    """Well-formed JSON that breaks the spec: a missing or mistyped field, a bad reference."""


class UnknownTypeError(InvalidMetadataError):
    """A type string that is not an Iceberg type."""


class FieldIdClashError(InvalidMetadataError):
    """Two fields of one schema share an id."""


class UnsupportedFormatVersionError(InvalidInputError):
    """A format version this version of icefloe cannot read."""


class IcefloeIOError(IcefloeError, OSError):
    """Reading or writing a file failed."""


class InvalidArgumentError(IcefloeError, ValueError):
    """An argument that cannot be used (a bad transform, a value of the wrong type)."""


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of a type the call does not take (also a ``TypeError``, what Python
    raises for a wrong type)."""


class NotFoundError(IcefloeError, LookupError):
    """A lookup found nothing (a field, a snapshot, a ref)."""


class UnsupportedError(IcefloeError, NotImplementedError):
    """Valid input that this version of icefloe does not handle."""


__all__ = [
    "IcefloeError",
    "InvalidInputError",
    "InvalidJsonError",
    "InvalidMetadataError",
    "UnknownTypeError",
    "FieldIdClashError",
    "UnsupportedFormatVersionError",
    "IcefloeIOError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "NotFoundError",
    "UnsupportedError",
    "InvalidIdentifierError",
    "PreconditionFailedError",
    "NoSuchNamespaceError",
    "NoSuchTableError",
    "NoSuchViewError",
    "AlreadyExistsError",
    "NamespaceNotEmptyError",
    "CommitFailedError",
    "CommitStateUnknownError",
    "ValidationError",
    "NotAuthorizedError",
    "AccessDeniedError",
    "ServiceFailureError",
]


class InvalidIdentifierError(InvalidArgumentError):
    """A namespace level or table name that cannot name a place in the warehouse (``..``,
    ``/``, ``\\``, NUL, empty), refused where the catalog derives a location from it."""


class NoSuchNamespaceError(NotFoundError):
    """The catalog has no such namespace."""


class NoSuchTableError(NotFoundError):
    """The catalog has no such table."""


class NoSuchViewError(NotFoundError):
    """The catalog has no such view."""


class AlreadyExistsError(IcefloeError):
    """A namespace, table or view of that name already exists."""


class NamespaceNotEmptyError(IcefloeError):
    """A namespace cannot be dropped while it holds tables, views or namespaces."""


class CommitFailedError(IcefloeError):
    """The table changed since the commit's base; nothing was applied. Refresh and retry."""


class CommitStateUnknownError(IcefloeError):
    """The commit may or may not have been applied; its files are kept."""


class ValidationError(IcefloeError):
    """An operation's validation against the table failed; retrying cannot succeed."""


class PreconditionFailedError(IcefloeIOError):
    """A conditional write found the file changed (another writer replaced or deleted it
    since its version was read). Re-read and retry."""


class NotAuthorizedError(IcefloeError, PermissionError):
    """A catalog service refused the credentials (HTTP 401, 403 or 419, or a refused token
    request). The message never holds the credentials."""


class AccessDeniedError(IcefloeIOError, NotAuthorizedError):
    """An object store refused the credentials for a file (wrong or expired keys, or keys
    not allowed there): both an I/O error on ``file`` (the location) and an authorization
    error, so ``except NotAuthorizedError`` catches a refusal by the catalog or the store.
    The message never holds the credentials."""


class ServiceFailureError(IcefloeError):
    """A catalog service failed (a 5xx outside a commit) or answered something that is not
    its protocol (a body that is not the expected JSON, an answer over the size limit)."""
