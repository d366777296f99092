"""File locations on the executor side: the one place that turns a location into a pyarrow
file system and path.

Which store a location is on, and how to reach it (endpoint, region, addressing, keys),
is decided in Rust from the table's Iceberg FileIO properties
(``_native.pyarrow_file_system``, the same parser and defaults as the Rust FileIOs); this
module only maps those settings onto ``pyarrow.fs`` constructors and keeps one file system
per settings in the process. ``io_properties`` are what ``FileIO.properties_for(location)``
returns (credentials included): they are never put in an error or a log."""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Mapping

import pyarrow.fs as pafs

from .. import _native
from ..errors import AccessDeniedError, IcefloeIOError, UnsupportedError

__all__ = ["local_path", "filesystem_for", "file_io_for", "scrub", "io_error"]

_CONSTRUCTORS = {
    "s3": lambda o: pafs.S3FileSystem(**_s3_options(o)),
    "azure": lambda o: pafs.AzureFileSystem(**o),
    "gcs": lambda o: pafs.GcsFileSystem(**_gcs_options(o)),
}


def _s3_options(options: dict) -> dict:
    """pyarrow's S3 constructor takes its retries as a strategy object (the settings give
    the number of attempts, from ``io.retry.num-retries``)."""
    out = dict(options)
    attempts = out.pop("retry_max_attempts", None)
    if attempts is not None:
        out["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=int(attempts))
    return out


def _gcs_options(options: dict) -> dict:
    """pyarrow's GCS constructor takes a timedelta and a datetime where the settings have
    seconds."""
    out = dict(options)
    if "retry_time_limit" in out:
        out["retry_time_limit"] = datetime.timedelta(seconds=out["retry_time_limit"])
    if "credential_token_expiration" in out:
        out["credential_token_expiration"] = datetime.datetime.fromtimestamp(
            out["credential_token_expiration"], tz=datetime.timezone.utc
        )
    return out


# the pyarrow options that hold credentials (removed from error messages by ``scrub``)
_SECRET_OPTIONS = ("access_key", "secret_key", "session_token", "account_key", "sas_token", "access_token")
# signatures in URLs an error may quote (SAS tokens, presigned S3 URLs)
_SIGNATURE = re.compile(r"((?:sig|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)=)[^&\s\"']+", re.I)
# how pyarrow's S3, Azure and GCS clients say the credentials were refused
_REFUSED = re.compile(
    r"ACCESS_DENIED|AccessDenied|INVALID_ACCESS_KEY_ID|InvalidAccessKeyId|SIGNATURE_DOES_NOT_MATCH|"
    r"SignatureDoesNotMatch|AuthenticationFailed|AuthorizationFailure|AuthorizationPermissionMismatch|"
    r"PERMISSION_DENIED|Permission denied|HTTP status 40[13]|\b40[13] (?:Forbidden|Unauthorized)"
)
_lock = threading.Lock()
_file_systems: dict[tuple, pafs.FileSystem] = {}
_file_ios: dict[tuple, _native.FileIO] = {}


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
            f"cannot read {location} as a local file: it is on {scheme.group(1)}://",
            file=location,
        )
    return location


def _key(io_properties: Mapping[str, str] | None) -> tuple:
    return tuple(sorted((str(k), str(v)) for k, v in (io_properties or {}).items()))


def filesystem_for(
    location: str, io_properties: Mapping[str, str] | None = None
) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system and path of a file location. ``file:`` URIs and plain paths
    are local files named without percent-decoding: Java (Hadoop) writes the ``%3D`` of an
    escaped partition value literally, and the location recorded in the manifest must be
    where the file is (pyarrow's ``from_uri`` would decode it). ``s3://`` (``s3a``,
    ``s3n``), ``abfs[s]://``/``wasb[s]://`` and ``gs://`` locations use the store's file
    system configured by ``io_properties``."""
    if location.startswith("file:") or "://" not in location:
        return pafs.LocalFileSystem(), local_path(location)
    kind, options, path = _native.pyarrow_file_system(location, dict(io_properties or {}))
    if kind == "local":
        return pafs.LocalFileSystem(), path
    key = (kind, tuple(sorted(options.items())))
    with _lock:
        fs = _file_systems.get(key)
        if fs is None:
            fs = _file_systems[key] = _CONSTRUCTORS[kind](options)
    return fs, path


def file_io_for(location: str, io_properties: Mapping[str, str] | None = None) -> _native.FileIO:
    """The Rust FileIO for ``location``'s scheme with ``io_properties`` (one per scheme and
    properties in the process), for the files Rust reads and writes on an executor
    (deletion vectors)."""
    scheme = location.split("://", 1)[0] if "://" in location else "file"
    key = (scheme, _key(io_properties))
    with _lock:
        io = _file_ios.get(key)
        if io is None:
            io = _file_ios[key] = _native.FileIO(location, dict(io_properties or {}))
    return io


def scrub(text: str, location: str, io_properties: Mapping[str, str] | None) -> str:
    """``text`` (a pyarrow error message about ``location``) without the credentials the
    file system was configured with, nor URL signatures."""
    if io_properties and "://" in location and not location.startswith("file:"):
        try:
            _, options, _ = _native.pyarrow_file_system(location, dict(io_properties))
        except Exception:  # noqa: BLE001 (bad properties: scrub every value instead)
            options = {f"v{i}": v for i, v in enumerate(io_properties.values())}
            secrets = [v for v in options.values() if isinstance(v, str) and len(v) >= 4]
        else:
            # as the Rust redactor: a value under 4 characters is no secret worth hiding,
            # and replacing it everywhere would garble the message ("buc***et")
            secrets = [options[k] for k in _SECRET_OPTIONS if len(options.get(k) or "") >= 4]
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
    return _SIGNATURE.sub(r"\1***", text)


def io_error(message: str, location: str) -> IcefloeIOError:
    """The error for a failed read or write of ``location`` (``message`` already scrubbed):
    an ``AccessDeniedError`` when the store refused the credentials, as the Rust FileIOs
    type it, else an ``IcefloeIOError``."""
    cls = AccessDeniedError if _REFUSED.search(message) else IcefloeIOError
    return cls(message, file=location)
