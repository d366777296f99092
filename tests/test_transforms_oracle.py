"""icefloe's partition transforms against Java Iceberg's, value by value.

For each source type we generate a seeded batch (edge cases + random values + nulls), apply each
applicable transform in icefloe (vectorised, on a pyarrow array) and in Java (one py4j call per
batch, values as Appendix D single-value JSON), and compare canonical values (see oracle.py).

Integer/decimal truncation that overflows the source type (e.g. truncate[10] of the smallest int)
is kept out of the main comparison and checked on its own, so that a deliberate divergence there is
visible as one named test rather than noise in every truncate case.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid

import pytest

import oracle as o

pa = pytest.importorskip("pyarrow")

pytestmark = pytest.mark.java

N_RANDOM = 2000
SEED = 20240229
BUCKETS = [1, 2, 16, 1000, 2147483647]
INT_WIDTHS = [1, 2, 10, 1000]
DEC_WIDTHS = [1, 10, 100, 3]
STR_WIDTHS = [1, 3, 10]
BIN_WIDTHS = [1, 4, 16]
TIME_TRANSFORMS_DATE = ["year", "month", "day"]
TIME_TRANSFORMS_TS = ["year", "month", "day", "hour"]

I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
DAYS_MIN, DAYS_MAX = -719162, 2932896  # 0001-01-01 .. 9999-12-31
US_PER_DAY = 86_400_000_000
US_MIN, US_MAX = DAYS_MIN * US_PER_DAY, (DAYS_MAX + 1) * US_PER_DAY - 1
D_CTX = decimal.Context(prec=100)


# ---------------------------------------------------------------------------------------------
# value generation (canonical values, see oracle.py)
# ---------------------------------------------------------------------------------------------


def _days(y, m, d):
    return (dt.date(y, m, d) - o.EPOCH_DATE).days


def _mixed_ints(rng, lo, hi, edges):
    vals = [v for v in edges if lo <= v <= hi]
    for i in range(N_RANDOM):
        kind = i % 4
        if kind == 0:
            vals.append(rng.randint(lo, hi))
        elif kind == 1:
            vals.append(rng.randint(max(lo, -1000), min(hi, 1000)))
        elif kind == 2:  # random magnitude
            bits = rng.randint(0, hi.bit_length())
            vals.append(max(lo, min(hi, rng.choice([-1, 1]) * rng.getrandbits(bits) if bits else 0)))
        else:
            vals.append(rng.randint(max(lo, -(10**6)), min(hi, 10**6)))
    return vals


def _with_nulls(rng, vals):
    vals = list(vals)
    for _ in range(5):
        vals.insert(rng.randrange(len(vals) + 1), None)
    return vals


def gen_int(rng):
    return _mixed_ints(
        rng,
        *I32,
        [0, 1, -1, 2, -2, 34, 100, -100, 999, -999, 1000, -1001, I32[0], I32[1], I32[0] + 1, I32[1] - 1],
    )


def gen_long(rng):
    return _mixed_ints(
        rng,
        *I64,
        [
            0,
            1,
            -1,
            34,
            -34,
            10**15,
            -(10**15),
            I32[0],
            I32[1],
            I32[0] - 1,
            I32[1] + 1,
            I64[0],
            I64[1],
            I64[0] + 1,
            I64[1] - 1,
        ],
    )


def gen_decimal(precision, scale):
    def gen(rng):
        top = 10**precision - 1
        unscaled = [0, 1, -1, 10**scale, -(10**scale), top, -top, 5, -5, 14, -14, 1234, -1234]
        for _i in range(N_RANDOM):
            digits = rng.randint(1, precision)
            unscaled.append(rng.choice([-1, 1]) * rng.randint(0, 10**digits - 1))
        return [(D_CTX.scaleb(decimal.Decimal(u), -scale), -scale) for u in unscaled]

    return gen


def gen_date(rng):
    edges = [
        0,
        -1,
        1,
        58,
        59,
        -365,
        -366,
        365,
        DAYS_MIN,
        DAYS_MAX,
        _days(1969, 12, 31),
        _days(1969, 1, 1),
        _days(1968, 12, 31),
        _days(2000, 2, 29),
        _days(2024, 2, 29),
        _days(1900, 2, 28),
        _days(1900, 3, 1),
        _days(1600, 2, 29),
        _days(1, 12, 31),
        _days(9999, 1, 1),
    ]
    vals = edges + [rng.randint(DAYS_MIN, DAYS_MAX) for _ in range(N_RANDOM // 2)]
    vals += [rng.randint(-40000, 40000) for _ in range(N_RANDOM // 2)]
    return vals


def gen_time(rng):
    edges = [0, 1, 999_999, 1_000_000, 3_599_999_999, 3_600_000_000, US_PER_DAY - 1, 45_296_789_012]
    return edges + [rng.randint(0, US_PER_DAY - 1) for _ in range(N_RANDOM)]


def _ts_edges_us():
    hour = 3_600_000_000
    edges = [
        0,
        -1,
        1,
        -1_000_000,
        1_000_000,
        hour - 1,
        hour,
        -hour,
        -hour - 1,
        US_PER_DAY - 1,
        -US_PER_DAY,
        -US_PER_DAY - 1,
        US_MIN,
        US_MAX,
        1_709_164_800_000_000,
        1_709_164_800_000_000 - 1,
        951_782_400_000_000 - 1,
    ]
    for y, m, d in [
        (1969, 12, 31),
        (1969, 1, 1),
        (1968, 12, 31),
        (2000, 2, 29),
        (2000, 3, 1),
        (1900, 3, 1),
        (1600, 1, 1),
    ]:
        base = _days(y, m, d) * US_PER_DAY
        edges += [base - 1, base, base + 1]
    # Pre-epoch values just under a second past a unit boundary: where a truncating (not
    # flooring) division, or Java's own adjustment for negative values, would be off by one.
    for base in (
        -hour,
        -2 * hour,
        -US_PER_DAY,
        _days(1969, 12, 1) * US_PER_DAY,
        _days(1969, 1, 1) * US_PER_DAY,
    ):
        edges += [base + 999_999, base + 500_000, base + 1_000_000, base - 999_999, base - 1_000_001]
    return edges


def gen_ts_us(rng):
    vals = _ts_edges_us()
    vals += [rng.randint(US_MIN, US_MAX) for _ in range(N_RANDOM // 2)]
    vals += [rng.randint(-5 * US_PER_DAY, 5 * US_PER_DAY) for _ in range(N_RANDOM // 2)]
    return vals


def gen_ts_ns(rng):
    vals = [v * 1000 for v in _ts_edges_us() if I64[0] <= v * 1000 <= I64[1]]
    vals += [-1, 1, 999, -999, -1001, I64[0], I64[1], I64[0] + 1, I64[1] - 1]
    # pre-epoch values one nanosecond short of a second past a unit start
    for base_us in (
        -3_600_000_000,
        -US_PER_DAY,
        _days(1969, 12, 1) * US_PER_DAY,
        _days(1969, 1, 1) * US_PER_DAY,
    ):
        vals += [base_us * 1000 + 999_999_999, base_us * 1000 + 999_999_998, base_us * 1000 - 1]
    vals += [rng.randint(*I64) for _ in range(N_RANDOM // 2)]
    vals += [rng.randint(-5 * US_PER_DAY * 1000, 5 * US_PER_DAY * 1000) for _ in range(N_RANDOM // 2)]
    return vals


_ALPHABET = (
    [chr(c) for c in range(0x20, 0x7F)]
    + list(
        "\u00e9\u00df\u00f1\u00fc\u0142\u03b2\u0416\u05d0\u0627\u4e2d\u6587\u65e5\u672c\u00a0\u200b\u0301\ufeff"
    )
    + ["\U0001f600", "\U0001f9ca", "\U0001f468\u200d\U0001f469", "\U00010348", "\t", "\n", "\x00", "\x7f"]
)


def gen_string(rng):
    edges = [
        "",
        "a",
        "iceberg",
        "\U0001f600",
        "\U0001f600\U0001f600\U0001f600",
        "a\U0001f600b",
        "\u00e9t\u00e9",
        "\x00",
        "abcdefghij",
        "abcdefghijk",
        "\u4e2d\u6587\u5b57\u7b26\u4e32",
        "e\u0301",
        " ",
        "\n",
    ]
    vals = list(edges)
    for _ in range(N_RANDOM):
        vals.append("".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 20))))
    return vals


def gen_uuid(rng):
    edges = [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")]
    return [str(u) for u in edges] + [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(N_RANDOM)]


def gen_fixed(length):
    def gen(rng):
        edges = [bytes(length), b"\xff" * length, bytes(range(1, length + 1))]
        return edges + [bytes(rng.getrandbits(8) for _ in range(length)) for _ in range(N_RANDOM)]

    return gen


def gen_binary(rng):
    edges = [b"", b"\x00", b"\xff", bytes(range(16)), bytes(range(17)), b"\x00\x01\x02\x03"]
    return edges + [bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 32))) for _ in range(N_RANDOM)]


# ---------------------------------------------------------------------------------------------
# canonical values <-> pyarrow
# ---------------------------------------------------------------------------------------------

ARROW_TYPES = {
    "int": pa.int32(),
    "long": pa.int64(),
    "date": pa.date32(),
    "time": pa.time64("us"),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "timestamp_ns": pa.timestamp("ns"),
    "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
    "string": pa.string(),
    "uuid": pa.binary(16),
    "binary": pa.binary(),
}
_INT_STORAGE = {
    "date": pa.int32(),
    "time": pa.int64(),
    "timestamp": pa.int64(),
    "timestamptz": pa.int64(),
    "timestamp_ns": pa.int64(),
    "timestamptz_ns": pa.int64(),
}


def arrow_type(type_str):
    if type_str.startswith("decimal"):
        return pa.decimal128(*o.decimal_params(type_str))
    if type_str.startswith("fixed"):
        return pa.binary(int(type_str[6:-1]))
    return ARROW_TYPES[type_str]


def to_arrow(type_str, values, arrow_t=None):
    arrow_t = arrow_t or arrow_type(type_str)
    if type_str in _INT_STORAGE:
        return pa.array(values, _INT_STORAGE[type_str]).cast(arrow_t)
    if type_str.startswith("decimal"):
        return pa.array([None if v is None else v[0] for v in values], arrow_t)
    if type_str == "uuid":
        return pa.array([None if v is None else uuid.UUID(v).bytes for v in values], arrow_t)
    return pa.array(values, arrow_t)


def from_arrow(type_str, arr):
    """Canonical values of an icefloe result array whose Iceberg type is ``type_str``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if type_str in ("int", "long") or type_str in _INT_STORAGE:
        if pa.types.is_integer(arr.type):
            return arr.to_pylist()
        return arr.cast(_INT_STORAGE[type_str]).to_pylist()
    if type_str.startswith("decimal"):
        return [None if v is None else (v, v.as_tuple().exponent) for v in arr.to_pylist()]
    if type_str == "uuid":
        return [None if v is None else str(uuid.UUID(bytes=v)) for v in arr.to_pylist()]
    return arr.to_pylist()


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------


def _bucket(ns):
    return [f"bucket[{n}]" for n in ns]


def _trunc(ws):
    return [f"truncate[{w}]" for w in ws]


CASES = {
    "int": (gen_int, ["identity", *_bucket(BUCKETS), *_trunc(INT_WIDTHS)]),
    "long": (gen_long, ["identity", *_bucket(BUCKETS), *_trunc(INT_WIDTHS)]),
    "decimal(9,2)": (gen_decimal(9, 2), ["identity", *_bucket(BUCKETS), *_trunc(DEC_WIDTHS)]),
    "decimal(38,10)": (gen_decimal(38, 10), ["identity", *_bucket(BUCKETS), *_trunc(DEC_WIDTHS)]),
    "date": (gen_date, ["identity", *_bucket(BUCKETS), *TIME_TRANSFORMS_DATE]),
    "time": (gen_time, ["identity", *_bucket(BUCKETS)]),
    "timestamp": (gen_ts_us, ["identity", *_bucket(BUCKETS), *TIME_TRANSFORMS_TS]),
    "timestamptz": (gen_ts_us, ["identity", *_bucket(BUCKETS), *TIME_TRANSFORMS_TS]),
    "timestamp_ns": (gen_ts_ns, ["identity", *_bucket(BUCKETS), *TIME_TRANSFORMS_TS]),
    "timestamptz_ns": (gen_ts_ns, ["identity", *_bucket(BUCKETS), *TIME_TRANSFORMS_TS]),
    "string": (gen_string, ["identity", *_bucket(BUCKETS), *_trunc(STR_WIDTHS)]),
    "uuid": (gen_uuid, ["identity", *_bucket(BUCKETS)]),
    "fixed[5]": (gen_fixed(5), ["identity", *_bucket(BUCKETS)]),
    "binary": (gen_binary, ["identity", *_bucket(BUCKETS), *_trunc(BIN_WIDTHS)]),
}

# Types whose Arrow type does not say which Iceberg type it is.
NEEDS_SOURCE_TYPE = {"uuid", "fixed[5]"}


def _values(type_str):
    rng = random.Random(f"{SEED}:{type_str}")
    return _with_nulls(rng, CASES[type_str][0](rng))


_cache: dict = {}


def values_for(type_str):
    if type_str not in _cache:
        _cache[type_str] = _values(type_str)
    return _cache[type_str]


def _overflows(type_str, transform, value) -> bool:
    """True when truncating ``value`` leaves the source type's range (Java wraps or widens)."""
    if value is None or not transform.startswith("truncate"):
        return False
    w = int(transform[9:-1])
    if type_str in ("int", "long"):
        lo, hi = I32 if type_str == "int" else I64
        return not lo <= value - (value % w) <= hi
    if type_str.startswith("decimal"):
        p, s = o.decimal_params(type_str)
        unscaled = int(D_CTX.scaleb(value[0], s))
        return abs(unscaled - (unscaled % w)) >= 10**p
    return False


def java_results(oracle, transform, type_str, values):
    result_type = oracle.result_type(transform, type_str)
    raw = oracle.apply_transform(transform, type_str, [o.encode(type_str, v) for v in values])
    errors = [(v, r) for v, r in zip(values, raw, strict=True) if r.startswith("!error")]
    assert not errors, f"Java rejected inputs for {transform}({type_str}): {errors[:3]}"
    return result_type, [o.decode(result_type, r) for r in raw]


def icefloe_results(transform, type_str, values, arrow_t=None, pass_source_type=None):
    import icefloe

    arr = to_arrow(type_str, values, arrow_t)
    if pass_source_type is None:
        pass_source_type = type_str in NEEDS_SOURCE_TYPE
    kwargs = {"source_type": type_str} if pass_source_type else {}
    return icefloe.transforms.apply(transform, arr, **kwargs)


def _compare(type_str, transform, values, expected, result_type, got_arr):
    assert len(got_arr) == len(values)
    got = from_arrow(result_type, got_arr)
    bad = [(v, e, g) for v, e, g in zip(values, expected, got, strict=True) if e != g]
    assert not bad, (
        f"{transform}({type_str}): {len(bad)}/{len(values)} differ from Java; first: "
        + "; ".join(f"input={v!r} java={e!r} icefloe={g!r}" for v, e, g in bad[:5])
    )


def _all_cases():
    for type_str, (_, transforms) in CASES.items():
        yield pytest.param(type_str, transforms, id=type_str)


@pytest.mark.parametrize("type_str,transforms", list(_all_cases()))
def test_apply_matches_java(oracle, type_str, transforms):
    values = values_for(type_str)
    for transform in transforms:
        vals = [v for v in values if not _overflows(type_str, transform, v)]
        result_type, expected = java_results(oracle, transform, type_str, vals)
        got = icefloe_results(transform, type_str, vals)
        _compare(type_str, transform, vals, expected, result_type, got)


@pytest.mark.parametrize(
    "type_str,arrow_t",
    [
        ("string", pa.large_string()),
        ("binary", pa.large_binary()),
        ("int", None),
        ("date", None),
        ("timestamptz", None),
        ("decimal(38,10)", None),
    ],
    ids=[
        "large_string",
        "large_binary",
        "int+source_type",
        "date+source_type",
        "timestamptz+source_type",
        "decimal+source_type",
    ],
)
def test_apply_other_arrow_layouts_and_explicit_source_type(oracle, type_str, arrow_t):
    values = values_for(type_str)[:500]
    for transform in CASES[type_str][1]:
        vals = [v for v in values if not _overflows(type_str, transform, v)]
        result_type, expected = java_results(oracle, transform, type_str, vals)
        got = icefloe_results(transform, type_str, vals, arrow_t=arrow_t, pass_source_type=True)
        _compare(type_str, transform, vals, expected, result_type, got)


def test_truncate_overflow_matches_java(oracle):
    """Truncation whose result leaves the source type's range: Java's int/long arithmetic wraps
    and its BigDecimal result exceeds the declared precision. icefloe must either match Java's
    value or raise IcefloeError; silently returning a different value is a failure."""
    import icefloe

    checked = 0
    refused = []
    for type_str in ("int", "long", "decimal(9,2)", "decimal(38,10)"):
        for transform in CASES[type_str][1]:
            vals = [v for v in values_for(type_str) if _overflows(type_str, transform, v)]
            for v in vals:
                result_type, (expected,) = java_results(oracle, transform, type_str, [v])
                try:
                    got = from_arrow(result_type, icefloe_results(transform, type_str, [v]))[0]
                except icefloe.errors.IcefloeError:
                    refused.append((type_str, transform, v))
                    continue
                assert got == expected, f"{transform}({type_str}) of {v!r}: java={expected!r} icefloe={got!r}"
                checked += 1
    # int and long wrap like Java's arithmetic, so those must have been compared, not refused
    assert checked > 0
    assert not [r for r in refused if r[0] in ("int", "long")], refused


# ---------------------------------------------------------------------------------------------
# scalar path
# ---------------------------------------------------------------------------------------------


def to_native(type_str, v):
    if v is None:
        return None
    if type_str.startswith("decimal"):
        return v[0]
    if type_str == "date":
        return o.EPOCH_DATE + dt.timedelta(days=v)
    if type_str == "time":
        secs, us = divmod(v, 1_000_000)
        return dt.time(secs // 3600, secs // 60 % 60, secs % 60, us)
    if type_str == "timestamp":
        return o.EPOCH + dt.timedelta(microseconds=v)
    if type_str == "timestamptz":
        return (o.EPOCH + dt.timedelta(microseconds=v)).replace(tzinfo=dt.timezone.utc)
    if type_str == "uuid":
        return uuid.UUID(v)
    return v


def from_native(result_type, v):
    if v is None:
        return None
    if isinstance(v, bool):
        raise AssertionError(f"unexpected bool {v!r}")
    if isinstance(v, decimal.Decimal):
        return (v, v.as_tuple().exponent)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return (v - o.EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return (v - o.EPOCH_DATE).days
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


SCALAR_TYPES = [t for t in CASES if not t.endswith("_ns")]  # Python datetimes have no nanoseconds


@pytest.mark.parametrize("type_str", SCALAR_TYPES)
def test_apply_scalar_matches_java(oracle, type_str):
    import icefloe

    values = [v for v in values_for(type_str) if v is not None]
    sample = values[:20] + random.Random(SEED).sample(values[20:], 60) + [None]
    for transform in CASES[type_str][1]:
        vals = [v for v in sample if not _overflows(type_str, transform, v)]
        result_type, expected = java_results(oracle, transform, type_str, vals)
        for v, e in zip(vals, expected, strict=True):
            got = from_native(
                result_type, icefloe.transforms.apply_scalar(transform, type_str, to_native(type_str, v))
            )
            assert got == e, f"apply_scalar({transform!r}, {type_str!r}, {v!r}): java={e!r} icefloe={got!r}"
