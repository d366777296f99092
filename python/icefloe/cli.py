"""The ``icefloe`` command: inspect table and view metadata, try transforms.

    icefloe show PATH            summary: format, location, schema, specs, snapshots, refs
    icefloe schema PATH [--all]  the current schema (or every schema)
    icefloe specs PATH           partition specs and sort orders
    icefloe snapshots PATH       snapshots, oldest first
    icefloe refs PATH            branches and tags
    icefloe json PATH            the metadata as icefloe writes it (Appendix C JSON)
    icefloe view PATH            a view's versions and SQL
    icefloe transform TRANSFORM TYPE VALUE...   e.g. ``bucket[16] long 1 2 3``

PATH is a metadata file (``.metadata.json``, gzip or not) or a table directory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence

from . import errors
from ._native import TableMetadata, ViewMetadata, transform_json


def _ts(ms: int) -> str:
    return (
        dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    )


def _print_schema(schema, out) -> None:
    ids = f", identifier fields {list(schema.identifier_field_ids)}" if schema.identifier_field_ids else ""
    print(f"schema {schema.schema_id}{ids}", file=out)
    for line in str(schema).splitlines()[1:-1]:
        print(line, file=out)


def _print_specs(md, out) -> None:
    for spec in md.specs:
        mark = " (default)" if spec.spec_id == md.default_spec_id else ""
        print(f"partition spec {spec.spec_id}{mark}:", file=out)
        if not spec.fields:
            print("  unpartitioned", file=out)
        schema = md.schema()
        for f in spec.fields:
            src = ", ".join(schema.name_by_id(i) or f"<dropped column {i}>" for i in f.source_ids)
            print(f"  {f.field_id}: {f.name} = {f.transform}({src})", file=out)
    for order in md.sort_orders:
        mark = " (default)" if order.order_id == md.default_sort_order_id else ""
        print(f"sort order {order.order_id}{mark}:", file=out)
        if not order.fields:
            print("  unsorted", file=out)
        for f in order.fields:
            src = ", ".join(md.schema().name_by_id(i) or str(i) for i in f.source_ids)
            print(f"  {f.transform}({src}) {f.direction} {f.null_order}", file=out)


def _print_snapshots(md, out) -> None:
    if not md.snapshots:
        print("no snapshots", file=out)
    for s in md.snapshots:
        current = " (current)" if s.snapshot_id == md.current_snapshot_id else ""
        summary = dict(s.summary)
        counts = ", ".join(
            f"{k}={summary[k]}"
            for k in ("added-data-files", "added-records", "total-records", "total-data-files")
            if k in summary
        )
        parent = s.parent_snapshot_id if s.parent_snapshot_id is not None else "-"
        print(
            f"{s.snapshot_id}{current}  seq {s.sequence_number}  {_ts(s.timestamp_ms)}  {s.operation or '?'}"
            f"  parent {parent}  {counts}",
            file=out,
        )


def _print_refs(md, out) -> None:
    for name, ref in sorted(md.refs.items()):
        extra = []
        if ref.min_snapshots_to_keep is not None:
            extra.append(f"min-snapshots-to-keep={ref.min_snapshots_to_keep}")
        if ref.max_snapshot_age_ms is not None:
            extra.append(f"max-snapshot-age-ms={ref.max_snapshot_age_ms}")
        if ref.max_ref_age_ms is not None:
            extra.append(f"max-ref-age-ms={ref.max_ref_age_ms}")
        print(f"{ref.type:6} {name}: {ref.snapshot_id} {' '.join(extra)}".rstrip(), file=out)


def _show(md, out) -> None:
    print(f"format version {md.format_version}  uuid {md.table_uuid}", file=out)
    print(f"location {md.location}", file=out)
    print(f"last updated {_ts(md.last_updated_ms)}  last sequence number {md.last_sequence_number}", file=out)
    if md.format_version >= 3:
        print(f"next row id {md.next_row_id}", file=out)
    print(f"current snapshot {md.current_snapshot_id}", file=out)
    if md.properties:
        print("properties:", file=out)
        for k, v in sorted(md.properties.items()):
            print(f"  {k} = {v}", file=out)
    _print_schema(md.schema(), out)
    _print_specs(md, out)
    print("snapshots:", file=out)
    _print_snapshots(md, out)
    print("refs:", file=out)
    _print_refs(md, out)


def _view(path: str, out) -> None:
    vm = ViewMetadata.from_path(path)
    print(f"view {vm.view_uuid}  location {vm.location}  current version {vm.current_version_id}", file=out)
    for v in vm.versions:
        mark = " (current)" if v.version_id == vm.current_version_id else ""
        print(f"version {v.version_id}{mark}  schema {v.schema_id}  {_ts(v.timestamp_ms)}", file=out)
        for dialect, sql in v.sql.items():
            print(f"  [{dialect}] {sql}", file=out)


def _parse_value(text: str, source_type: str):
    """Reads a command-line value as the JSON single-value form of its type."""
    if source_type in ("int", "long", "boolean", "float", "double"):
        return json.loads(text)
    return text


def _transform(transform: str, source_type: str, values: Sequence[str], out) -> None:
    results = transform_json(
        transform, source_type, [json.dumps(_parse_value(v, source_type)) for v in values]
    )
    for v, r in zip(values, results, strict=True):
        print(f"{transform}({v}) = {json.loads(r)}", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icefloe", description="Inspect Apache Iceberg metadata.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in [
        ("show", "summary of a table"),
        ("schema", "the current schema"),
        ("specs", "partition specs and sort orders"),
        ("snapshots", "snapshots, oldest first"),
        ("refs", "branches and tags"),
        ("json", "the metadata as Appendix C JSON"),
        ("view", "a view's versions and SQL"),
    ]:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("path", help="metadata file or table directory")
        if name == "schema":
            p.add_argument("--all", action="store_true", help="every schema, not only the current one")
    p = sub.add_parser("transform", help="apply a partition transform to values")
    p.add_argument("transform", help="identity, bucket[N], truncate[W], year, month, day, hour, void")
    p.add_argument("type", help="Iceberg source type, e.g. long, string, timestamp, decimal(9, 2)")
    p.add_argument(
        "values", nargs="+", help="values as in Appendix D JSON, unquoted: 34, 2017-11-16, iceberg"
    )
    args = parser.parse_args(argv)
    out = sys.stdout
    try:
        if args.command == "transform":
            _transform(args.transform, args.type, args.values, out)
            return 0
        if args.command == "view":
            _view(args.path, out)
            return 0
        md = TableMetadata.from_path(args.path)
        if args.command == "show":
            _show(md, out)
        elif args.command == "schema":
            for schema in md.schemas if args.all else [md.schema()]:
                _print_schema(schema, out)
        elif args.command == "specs":
            _print_specs(md, out)
        elif args.command == "snapshots":
            _print_snapshots(md, out)
        elif args.command == "refs":
            _print_refs(md, out)
        elif args.command == "json":
            print(md.to_json(pretty=True), file=out)
        return 0
    except errors.IcefloeError as e:
        print(f"icefloe: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
