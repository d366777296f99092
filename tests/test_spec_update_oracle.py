"""icefloe's partition evolution (``UpdatePartitionSpec``) and sort order changes
(``ReplaceSortOrder``) against Java's ``BaseUpdatePartitionSpec`` and ``SortOrder.Builder``.

Random sequences of changes (adds with every transform, default or given names, identity
adds, removes by name and by term, renames; valid and invalid, case-sensitive or not) are
applied by both to v1, v2 and v3 tables with a few schemas and spec histories. Every change must be
accepted or refused alike (the next one is still tried, so the state a refusal leaves behind is
compared too), and the applied spec must have the same fields (source, id, name, transform)
and give the same ``last-partition-id``, or be refused by both. Sort orders likewise.
"""

from __future__ import annotations

import json
import random

import pytest

import icefloe
from icefloe import _native, errors

pytestmark = pytest.mark.java

_SCHEMAS = [
    {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "data", "required": False, "type": "string"},
            {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
            {"id": 4, "name": "d", "required": False, "type": "date"},
            {"id": 5, "name": "category", "required": False, "type": "string"},
            {
                "id": 6,
                "name": "s",
                "required": False,
                "type": {
                    "type": "struct",
                    "fields": [
                        {"id": 7, "name": "x", "required": False, "type": "int"},
                        {"id": 8, "name": "Name", "required": False, "type": "string"},
                    ],
                },
            },
            {
                "id": 9,
                "name": "l",
                "required": False,
                "type": {
                    "type": "list",
                    "element-id": 10,
                    "element-required": False,
                    "element": {
                        "type": "struct",
                        "fields": [{"id": 11, "name": "y", "required": False, "type": "int"}],
                    },
                },
            },
            {"id": 12, "name": "price", "required": False, "type": "decimal(9, 2)"},
            {"id": 13, "name": "flag", "required": False, "type": "boolean"},
        ],
    },
    {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "Ts", "required": True, "type": "timestamp"},
            {"id": 2, "name": "Region", "required": False, "type": "string"},
            {"id": 3, "name": "n", "required": False, "type": "int"},
            {"id": 4, "name": "bin", "required": False, "type": "binary"},
            {
                "id": 5,
                "name": "m",
                "required": False,
                "type": {
                    "type": "map",
                    "key-id": 6,
                    "key": "string",
                    "value-id": 7,
                    "value-required": False,
                    "value": "int",
                },
            },
        ],
    },
]

# (source, transform, name): the fields the spec histories are made of. Each (source,
# transform) appears once with one id and name: when several old fields match an add, Java
# re-uses whichever its hash set yields first, which no other implementation can reproduce.
_POOLS = [
    [
        ("category", "identity", "category"),
        ("ts", "day", "ts_day"),
        ("ts", "hour", "ts_hour"),
        ("id", "bucket[16]", "id_bucket_16"),
        ("id", "bucket[8]", "shard"),
        ("data", "truncate[4]", "data_trunc_4"),
        ("d", "month", "d_month"),
        ("s.x", "identity", "s.x"),
        ("price", "bucket[4]", "p"),
    ],
    [
        ("Region", "identity", "Region"),
        ("Ts", "day", "Ts_day"),
        ("n", "truncate[10]", "n10"),
        ("bin", "bucket[4]", "bin_bucket_4"),
        ("Ts", "year", "yr"),
    ],
]

_TRANSFORMS = [
    "identity",
    "identity",
    "bucket[16]",
    "bucket[8]",
    "truncate[4]",
    "year",
    "month",
    "day",
    "hour",
    "void",
    "zorder",
]
_NAMES = ["shard", "p", "ts_day", "category", "data", "id", "ts_hour", "x", "Region", "yr", "n10", "", "new"]


def _columns(schema: dict) -> list[str]:
    out = []

    def visit(t, prefix):
        if isinstance(t, dict) and t.get("type") == "struct":
            for f in t["fields"]:
                out.append(prefix + f["name"])
                visit(f["type"], prefix + f["name"] + ".")
        elif isinstance(t, dict) and t.get("type") == "list":
            out.append(prefix + "element")
            visit(t["element"], prefix + "element.")
        elif isinstance(t, dict) and t.get("type") == "map":
            out.extend([prefix + "key", prefix + "value"])

    visit(schema, "")
    return out


def _ids(schema: dict) -> dict[str, int]:
    s = icefloe.Schema.from_json(json.dumps(schema))
    return {name: i for i, name in s.column_names()}


def _metadata(rng: random.Random, b: int, version: int) -> dict:
    """Table metadata with a random spec history (v2: ids from the pool, kept across specs;
    v1: positional ids, removed fields as void) and a random last-partition-id."""
    schema = _SCHEMAS[b]
    ids = _ids(schema)
    pool = [(ids[src], t, n, 1000 + i) for i, (src, t, n) in enumerate(_POOLS[b])]
    specs = []
    if version == 1:
        chosen = rng.sample(pool, rng.randint(0, min(4, len(pool))))
        fields = []
        for pos, (sid, t, n, _) in enumerate(chosen):
            if rng.random() < 0.25:
                t = "void"
            fields.append({"source-id": sid, "field-id": 1000 + pos, "name": n, "transform": t})
        if fields and rng.random() < 0.04:
            # a transform Java and icefloe do not know: such a spec cannot be evolved
            fields[-1]["transform"] = "zorder"
        specs.append({"spec-id": 0, "fields": fields})
    else:
        for spec_id in range(rng.randint(1, 3)):
            chosen = rng.sample(pool, rng.randint(0, min(4, len(pool))))
            specs.append(
                {
                    "spec-id": spec_id,
                    "fields": [
                        {"source-id": sid, "field-id": fid, "name": n, "transform": t}
                        for sid, t, n, fid in chosen
                    ],
                }
            )
    current = rng.choice(specs)
    highest = max([999] + [f["field-id"] for s in specs for f in s["fields"]])
    md = {
        "format-version": version,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "file:/tmp/icefloe-oracle",
        "last-updated-ms": 1700000000000,
        "last-column-id": max(ids.values()),
        "current-schema-id": 0,
        "schemas": [schema],
        "default-spec-id": current["spec-id"],
        "partition-specs": specs,
        "last-partition-id": highest + rng.choice([0, 0, 1, 3]),
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": -1,
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
    }
    if version == 1:
        md["schema"] = schema
        md["partition-spec"] = current["fields"]
    else:
        md["last-sequence-number"] = 0
    if version >= 3:
        md["next-row-id"] = 0
    return md


def _random_ops(rng: random.Random, b: int, md: dict) -> list[dict]:
    columns = _columns(_SCHEMAS[b]) + ["nope"]
    field_names = [f["name"] for s in md["partition-specs"] for f in s["fields"]] + ["nope"]
    ops: list[dict] = []

    def column():
        c = rng.choice(columns)
        return c.upper() if rng.random() < 0.1 else c

    for _ in range(rng.randint(1, 6)):
        if rng.random() < 0.07:
            ops.append({"op": "case-sensitive", "value": rng.random() < 0.3})
        kind = rng.choice(
            [
                "add",
                "add",
                "add",
                "add-old",
                "add-old",
                "add-identity",
                "remove",
                "remove",
                "remove-term",
                "rename",
            ]
        )
        if kind == "add-old":
            # a field some spec of the history has: v2 re-uses it, v1 renames a void in its way
            src, t, n = rng.choice(_POOLS[b])
            name = rng.choice([None, None, n, "new"])
            ops.append({"op": "add", "source": src, "transform": t, "name": name})
        elif kind == "add":
            name = rng.choice(_NAMES + field_names) if rng.random() < 0.4 else None
            ops.append({"op": "add", "source": column(), "transform": rng.choice(_TRANSFORMS), "name": name})
        elif kind == "add-identity":
            ops.append({"op": "add-identity", "source": column()})
        elif kind == "remove":
            ops.append({"op": "remove", "name": rng.choice(field_names + ["ts_hour", "id_bucket_16"])})
        elif kind == "remove-term":
            src, t, _ = rng.choice(_POOLS[b])
            if rng.random() < 0.2:
                t = rng.choice(_TRANSFORMS)
            ops.append({"op": "remove-term", "source": src, "transform": t})
        else:
            ops.append(
                {
                    "op": "rename",
                    "name": rng.choice(field_names),
                    "new-name": rng.choice(_NAMES + field_names),
                }
            )
    return ops


def _error(e: Exception) -> str:
    return f"ERROR: {type(e).__name__}: {e}"


def _icefloe_partition(md_json: str, ops: list[dict]) -> dict:
    md = icefloe.TableMetadata.from_json(md_json)
    out: dict = {}
    try:
        u = _native.UpdatePartitionSpec(
            md.format_version, md.schema(), md.spec(), md.specs, md.last_partition_id
        )
        out["init"] = "ok"
    except errors.InvalidArgumentError as e:
        out["init"] = _error(e)
        return out
    results = out["results"] = []
    for o in ops:
        try:
            k = o["op"]
            if k == "case-sensitive":
                u.case_sensitive(o["value"])
            elif k == "add":
                u.add_field(o["source"], o["transform"], o["name"])
            elif k == "add-identity":
                u.add_identity(o["source"])
            elif k == "remove":
                u.remove_field(o["name"])
            elif k == "remove-term":
                u.remove_field_by_term(o["source"], o["transform"])
            elif k == "rename":
                u.rename_field(o["name"], o["new-name"])
            results.append("ok")
        except errors.InvalidArgumentError as e:
            results.append(_error(e))
    try:
        out["spec"] = json.loads(u.apply().to_json())
        out["last-partition-id"] = u.last_partition_id
    except errors.InvalidArgumentError as e:
        out["apply"] = _error(e)
    return out


def _fields(spec: dict) -> list[tuple]:
    return [(f["source-id"], f["field-id"], f["name"], f["transform"]) for f in spec["fields"]]


def _outcome(r: dict) -> tuple:
    """What must agree: acceptance of each change, and the applied spec or its refusal."""
    if r["init"] != "ok":
        return ("refused at start",)
    oks = tuple(x == "ok" for x in r["results"])
    if "apply" in r:
        return (oks, "refused")
    return (oks, _fields(r["spec"]), r["last-partition-id"])


PARTITION_CASES = []
for _b in range(len(_SCHEMAS)):
    for _v in (1, 2, 3):
        _rng = random.Random(5000 + 10 * _b + _v)
        for _i in range(100):
            _md = _metadata(_rng, _b, _v)
            PARTITION_CASES.append((_b, _v, json.dumps(_md), _random_ops(_rng, _b, _md)))


@pytest.fixture(scope="module")
def java_oracle(jvm):
    return jvm.org.apache.iceberg.IcefloeSpecUpdateOracle


def test_partition_spec_updates_equal_java(java_oracle):
    mismatches = []
    applied = refused = reused = voided = void_renamed = 0
    for b, v, md_json, ops in PARTITION_CASES:
        ours = _icefloe_partition(md_json, ops)
        theirs = json.loads(str(java_oracle.applyPartition(md_json, json.dumps(ops))))
        if _outcome(ours) != _outcome(theirs):
            mismatches.append((b, v, md_json, ops, ours, theirs))
            continue
        if "spec" not in ours:
            refused += 1
            continue
        applied += 1
        md = json.loads(md_json)
        current = next(s for s in md["partition-specs"] if s["spec-id"] == md["default-spec-id"])
        before = {f["field-id"]: f for f in current["fields"]}
        history = {f["field-id"] for s in md["partition-specs"] for f in s["fields"]}
        out = ours["spec"]["fields"]
        reused += any(f["field-id"] in history and f["field-id"] not in before for f in out)
        voided += any(
            f["transform"] == "void" and before.get(f["field-id"], f)["transform"] != "void" for f in out
        )
        void_renamed += any(f["transform"] == "void" and f["name"].endswith(f"_{f['field-id']}") for f in out)
    assert not mismatches, f"{len(mismatches)} of {len(PARTITION_CASES)} differ; first: {mismatches[0]}"
    # the generator must exercise both outcomes and each of Java's special rules
    n = len(PARTITION_CASES)
    assert 0.2 * n < applied < 0.9 * n, (applied, refused)
    assert reused > 10 and voided > 10 and void_renamed > 3, (reused, voided, void_renamed)


_SORT_TRANSFORMS = [
    "identity",
    "identity",
    "identity",
    "bucket[4]",
    "truncate[2]",
    "year",
    "day",
    "hour",
    "void",
    "zorder",
]


def _random_sort_ops(rng: random.Random, b: int) -> list[dict]:
    columns = _columns(_SCHEMAS[b]) + ["nope"]
    ops = []
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.1:
            ops.append({"op": "case-sensitive", "value": rng.random() < 0.3})
        c = rng.choice(columns)
        if rng.random() < 0.1:
            c = c.upper()
        ops.append(
            {
                "op": rng.choice(["asc", "desc"]),
                "source": c,
                "transform": rng.choice(_SORT_TRANSFORMS),
                "null-order": rng.choice(["nulls-first", "nulls-last"]),
            }
        )
    return ops


def _icefloe_sort(b: int, ops: list[dict]) -> dict:
    r = _native.ReplaceSortOrder(icefloe.Schema.from_json(json.dumps(_SCHEMAS[b])))
    out: dict = {"results": []}
    for o in ops:
        try:
            if o["op"] == "case-sensitive":
                r.case_sensitive(o["value"])
            elif o["op"] == "asc":
                r.asc(o["source"], o["transform"], o["null-order"])
            else:
                r.desc(o["source"], o["transform"], o["null-order"])
            out["results"].append("ok")
        except errors.InvalidArgumentError as e:
            out["results"].append(_error(e))
    try:
        out["order"] = json.loads(r.apply().to_json())
    except errors.InvalidArgumentError as e:
        out["apply"] = _error(e)
    return out


def _sort_outcome(r: dict) -> tuple:
    oks = tuple(x == "ok" for x in r["results"])
    if "apply" in r:
        return (oks, "refused")
    o = r["order"]
    return (
        oks,
        o["order-id"],
        [(f["source-id"], f["transform"], f["direction"], f["null-order"]) for f in o["fields"]],
    )


SORT_CASES = []
for _b in range(len(_SCHEMAS)):
    _rng = random.Random(7000 + _b)
    for _i in range(200):
        SORT_CASES.append((_b, _random_sort_ops(_rng, _b)))


def test_sort_order_replacements_equal_java(java_oracle):
    mismatches = []
    applied = 0
    for b, ops in SORT_CASES:
        ours = _icefloe_sort(b, ops)
        theirs = json.loads(str(java_oracle.applySort(json.dumps(_SCHEMAS[b]), json.dumps(ops))))
        if _sort_outcome(ours) != _sort_outcome(theirs):
            mismatches.append((b, ops, ours, theirs))
        elif "order" in ours and ours["order"]["fields"]:
            applied += 1
    assert not mismatches, f"{len(mismatches)} of {len(SORT_CASES)} differ; first: {mismatches[0]}"
    assert 0.2 * len(SORT_CASES) < applied < 0.9 * len(SORT_CASES), applied
