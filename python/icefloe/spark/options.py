"""The options of the ``icefloe`` Spark data source.

Spark passes options with lower-cased keys (``.option("snapshot-id", ...)``); values are
strings. The table is the argument of ``load``/``save`` (Spark's ``path`` option), a
dotted identifier such as ``"db.events"``.

Catalogs can also be configured once in Spark conf, as Java's ``spark.sql.catalog.<name>.*``:
``spark.icefloe.catalog.<name>.<property>`` (for example ``...prod.type = rest``,
``...prod.uri``, ``...prod.s3.endpoint``) and ``spark.icefloe.default-catalog`` (the catalog
used when no ``catalog`` option is given; otherwise ``default``).
:func:`icefloe.spark.register` reads them when it registers the source; a property given as
an option wins over the same property from the conf.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog import load_catalog
from ..errors import InvalidArgumentError

__all__ = [
    "ReadOptions",
    "WriteOptions",
    "catalog_of",
    "catalogs_from_conf",
    "source_options",
    "with_conf_catalogs",
]

#: catalog properties given as options of their own
CATALOG_KEYS = ("type", "uri", "warehouse")
#: any other catalog property: ``.option("catalog.sqlite.busy-timeout-ms", "5000")``
CATALOG_PREFIX = "catalog."
SNAPSHOT_PROPERTY_PREFIX = "snapshot-property."
#: Spark conf keys ``spark.icefloe.catalog.<name>.<property>``
CONF_CATALOG_PREFIX = "spark.icefloe.catalog."
#: Spark conf key naming the catalog used when a read or write gives no ``catalog`` option
CONF_DEFAULT_CATALOG = "spark.icefloe.default-catalog"

#: catalog name -> its properties, as taken from Spark conf (sorted, hashable, picklable)
ConfCatalogs = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in dict(options).items()}


def _table_name(options: dict[str, str]) -> str:
    name = options.get("path") or options.get("table")
    if not name:
        raise InvalidArgumentError('no table given: use load("ns.table") / save("ns.table")', field="path")
    return name


def _int(options: dict[str, str], key: str) -> int | None:
    value = options.get(key)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidArgumentError(f"option {key} must be an integer, got {value!r}", field=key) from None


def _bool(options: dict[str, str], key: str, default: bool) -> bool:
    value = options.get(key)
    if value is None:
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise InvalidArgumentError(f"option {key} must be true or false, got {value!r}", field=key)


def _names(options: dict[str, str], key: str) -> list[str] | None:
    value = options.get(key)
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    return names


def catalogs_from_conf(conf: Mapping[str, str]) -> tuple[ConfCatalogs, str | None]:
    """The catalogs configured in Spark conf (``spark.icefloe.catalog.<name>.<property>``) and
    the default catalog's name (``spark.icefloe.default-catalog``), if any."""
    catalogs: dict[str, dict[str, str]] = {}
    for key, value in conf.items():
        if not key.startswith(CONF_CATALOG_PREFIX):
            continue
        name, dot, prop = key[len(CONF_CATALOG_PREFIX) :].partition(".")
        if not name or not dot or not prop:
            raise InvalidArgumentError(
                f"Spark conf {key} is not {CONF_CATALOG_PREFIX}<catalog name>.<property>", field=key
            )
        catalogs.setdefault(name, {})[prop] = str(value)
    default = conf.get(CONF_DEFAULT_CATALOG) or None
    return tuple(sorted((n, tuple(sorted(p.items()))) for n, p in catalogs.items())), default


def with_conf_catalogs(
    options: Mapping[str, str], catalogs: ConfCatalogs, default_catalog: str | None
) -> dict[str, str]:
    """``options`` (lower-cased) with the chosen catalog's properties from Spark conf added
    as ``catalog.<property>`` options, except those the options give themselves."""
    o = _lower(options)
    if "catalog" not in o and default_catalog:
        o["catalog"] = default_catalog
    name = o.get("catalog", "default")
    for n, props in catalogs:
        if n != name:
            continue
        for prop, value in props:
            given = CATALOG_PREFIX + prop in o or (prop in CATALOG_KEYS and prop in o)
            if not given:
                o[CATALOG_PREFIX + prop] = value
    return o


@dataclass(frozen=True)
class CatalogOptions:
    """Which catalog and table: picklable, opened wherever it is needed."""

    name: str
    properties: tuple[tuple[str, str], ...]
    table: str

    @staticmethod
    def of(options: dict[str, str]) -> CatalogOptions:
        props = {k: v for k, v in options.items() if k in CATALOG_KEYS}
        props.update(
            {k[len(CATALOG_PREFIX) :]: v for k, v in options.items() if k.startswith(CATALOG_PREFIX)}
        )
        return CatalogOptions(
            options.get("catalog", "default"), tuple(sorted(props.items())), _table_name(options)
        )

    def load_catalog(self) -> Any:
        return load_catalog(self.name, **dict(self.properties))

    def load_table(self) -> Any:
        return self.load_catalog().load_table(self.table)


def catalog_of(options: Mapping[str, str]) -> CatalogOptions:
    return CatalogOptions.of(_lower(options))


def source_options(name: str, properties: Mapping[str, str]) -> dict[str, str]:
    """The data-source options that reopen the catalog ``name`` with ``properties`` (the
    inverse of :meth:`CatalogOptions.of`): every property but ``type``, ``uri`` and
    ``warehouse`` needs the ``catalog.`` prefix, else the source drops it (a REST catalog on S3
    would lose its ``s3.endpoint``)."""
    options = {"catalog": name}
    for key, value in properties.items():
        options[key if key in CATALOG_KEYS else CATALOG_PREFIX + key] = value
    return options


@dataclass(frozen=True)
class ReadOptions:
    """``snapshot-id``, ``as-of-timestamp`` (milliseconds since the epoch), ``branch``,
    ``tag`` (at most one of them); ``columns`` (comma-separated column names to read, as
    Spark offers Python data sources no column pruning); ``metadata-columns`` (``_file``,
    ``_pos``, ``_spec_id``, ``_partition``, ``_deleted``, ``_row_id``,
    ``_last_updated_sequence_number``, appended after the columns); ``split-size`` (bytes,
    overrides ``read.split.target-size``); ``batch-size`` (rows per Arrow batch);
    ``pushdown`` (``true``: take filters over, pruning files in planning; off by default
    because Spark 4.1 reuses a DataFrame's last pushed-down read plan for a later query on
    the same DataFrame that pushes nothing, which would silently read too few rows; turn it
    on for a DataFrame that serves one query, see the README)."""

    catalog: CatalogOptions
    snapshot_id: int | None = None
    as_of_ms: int | None = None
    ref: str | None = None
    columns: tuple[str, ...] | None = None
    metadata_columns: tuple[str, ...] = ()
    split_size: int | None = None
    batch_size: int | None = None
    pushdown: bool = False

    @staticmethod
    def of(options: Mapping[str, str]) -> ReadOptions:
        o = _lower(options)
        branch, tag = o.get("branch"), o.get("tag")
        snapshot_id, as_of = _int(o, "snapshot-id"), _int(o, "as-of-timestamp")
        given = [
            k
            for k, v in (
                ("snapshot-id", snapshot_id),
                ("as-of-timestamp", as_of),
                ("branch", branch),
                ("tag", tag),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise InvalidArgumentError(
                f"give at most one of snapshot-id, as-of-timestamp, branch and tag (got {', '.join(given)})",
                field=given[1],
            )
        columns = _names(o, "columns")
        split = _int(o, "split-size")
        batch = _int(o, "batch-size")
        for key, value in (("split-size", split), ("batch-size", batch)):
            if value is not None and value <= 0:
                raise InvalidArgumentError(f"option {key} must be positive, got {value}", field=key)
        return ReadOptions(
            catalog=CatalogOptions.of(o),
            snapshot_id=snapshot_id,
            as_of_ms=as_of,
            ref=branch or tag,
            columns=None if columns is None else tuple(columns),
            metadata_columns=tuple(_names(o, "metadata-columns") or ()),
            split_size=split,
            batch_size=batch,
            pushdown=_bool(o, "pushdown", False),
        )


@dataclass(frozen=True)
class WriteOptions:
    """``branch`` (commit to a branch instead of ``main``), ``snapshot-property.<key>``
    (snapshot summary entries, as Java's Spark writer takes them) and table properties
    starting with ``write.`` that override the table's for this write (for example
    ``write.target-file-size-bytes``)."""

    catalog: CatalogOptions
    branch: str | None = None
    snapshot_properties: tuple[tuple[str, str], ...] = ()
    write_properties: tuple[tuple[str, str], ...] = field(default=())

    @staticmethod
    def of(options: Mapping[str, str]) -> WriteOptions:
        o = _lower(options)
        return WriteOptions(
            catalog=CatalogOptions.of(o),
            branch=o.get("branch") or None,
            snapshot_properties=tuple(
                sorted(
                    (k[len(SNAPSHOT_PROPERTY_PREFIX) :], v)
                    for k, v in o.items()
                    if k.startswith(SNAPSHOT_PROPERTY_PREFIX)
                )
            ),
            write_properties=tuple(sorted((k, v) for k, v in o.items() if k.startswith("write."))),
        )
