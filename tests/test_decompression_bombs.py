"""Decompression bombs through the public Python API: small files whose compressed parts
decompress, or say they decompress, to gigabytes. Each must raise ``InvalidInputError``
naming the file (and the Avro block), fast, in a process whose address space is capped, and
the process must go on: no abort, no ``MemoryError``.

Each bomb is read in a child process with ``RLIMIT_AS`` set after ``icefloe`` and
``pyarrow`` are imported, to what they take plus 1.5 GiB: far more than the 256 MiB a file may
decompress to (``icefloe.limits`` in the Rust core), far less than what the bombs claim.
Puffin blobs are only decompressed inside the Rust core (Python reads deletion vectors,
which are never compressed); their bombs are tested there (``crates/icefloe/src/limits_tests.rs``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors

MIB = 1 << 20
FIXTURES = Path(__file__).resolve().parent.parent / "crates" / "icefloe" / "tests" / "fixtures"

# --------------------------------------------------------------------------------------------
# Bomb builders
# --------------------------------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _long(n: int) -> bytes:
    """An Avro long: zigzag, then a varint."""
    return _varint((n << 1) ^ (n >> 63))


def deflate_zeros(mib: int) -> bytes:
    """Raw deflate of ``mib`` MiB of zeros in about 1 KB per MiB: one MiB compressed and
    flushed to a byte boundary, repeated (each copy refers back only to zeros), then an
    empty final block."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = c.compress(b"\0" * MIB) + c.flush(zlib.Z_SYNC_FLUSH)
    return chunk * mib + b"\x03\x00"


def gzip_zeros(mib: int) -> bytes:
    """A gzip member of ``mib`` MiB of zeros whose trailer claims 100 bytes."""
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        + deflate_zeros(mib)
        + (0).to_bytes(4, "little")
        + (100).to_bytes(4, "little")
    )


def snappy_declaring(declared: int, length: int = 1500) -> bytes:
    """An Avro snappy block that declares ``declared`` bytes and holds one literal."""
    return (
        _varint(declared)
        + bytes([61 << 2])
        + (length - 1).to_bytes(2, "little")
        + b"x" * length
        + b"\0\0\0\0"
    )


def zstd_rle(blocks: int, declared: int | None = None) -> bytes:
    """A zstd frame of ``blocks`` RLE blocks of 128 KiB of zeros (4 bytes each)."""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    if declared is None:
        out += b"\x00\x38"  # no content size, a 128 KiB window
    else:
        out += b"\xc0\x38" + declared.to_bytes(8, "little")
    for i in range(blocks):
        header = ((128 << 10) << 3) | (1 << 1) | int(i + 1 == blocks)
        out += header.to_bytes(3, "little") + b"\0"
    return bytes(out)


def _with_block(header: bytes, block: bytes) -> bytes:
    """An Avro file without blocks (a whole file, ending with its sync marker) plus one block
    of one object."""
    return header + _long(1) + _long(len(block)) + block + header[-16:]


def _list_header(tmp_path: Path, codec: str) -> bytes:
    path = tmp_path / f"empty-list-{codec}.avro"
    icefloe.write_manifest_list(
        str(path),
        pa.Table.from_pylist([], schema=icefloe.manifest.manifest_list_schema()),
        format_version=2,
        snapshot_id=1,
        parent_snapshot_id=None,
        sequence_number=1,
        compression=codec,
    )
    return path.read_bytes()


def _manifest_header(tmp_path: Path, codec: str) -> bytes:
    md = icefloe.TableMetadata.from_path(str(FIXTURES / "metadata" / "v2-full.metadata.json"))
    schema, spec = md.schema(), md.spec_by_id(1)
    path = tmp_path / f"empty-manifest-{codec}.avro"
    icefloe.write_manifest(
        str(path),
        pa.Table.from_pylist([], schema=icefloe.manifest.entries_schema(schema, spec)),
        schema=schema,
        spec=spec,
        format_version=2,
        snapshot_id=1,
        compression=codec,
    )
    return path.read_bytes()


# --------------------------------------------------------------------------------------------
# Reading in a capped child process
# --------------------------------------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import pyarrow, icefloe
    from icefloe import errors

    # the address space taken after the imports, plus 1.5 GiB
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    cap = vm + (3 << 29)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    call, path = sys.argv[1], sys.argv[2]
    start = time.monotonic()
    try:
        if call == "read_manifest_list":
            icefloe.read_manifest_list(path)
        elif call == "read_manifest":
            icefloe.read_manifest(path)
        elif call == "TableMetadata.from_path":
            icefloe.TableMetadata.from_path(path)
        elif call == "DeletionVector.read":
            icefloe.DeletionVector.read(path, 4, int(sys.argv[3]))
        out = {"raised": None}
    except Exception as e:  # noqa: BLE001 - reported to the parent, which asserts on it
        out = {"raised": type(e).__name__, "message": str(e), "file": getattr(e, "file", None), "field": getattr(e, "field", None)}
    out["seconds"] = time.monotonic() - start
    out["cap_gib"] = cap / (1 << 30)
    print(json.dumps(out))
    """
)


def _read_capped(call: str, path: Path, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, call, str(path), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # a clean exit: not killed by SIGABRT (an allocation failure in Rust aborts)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_refused(out: dict, path: Path, field: str | None) -> None:
    assert out["raised"] == "InvalidInputError", out
    assert out["file"] == str(path), out
    assert out["field"] == field, out
    assert "decompress" in out["message"], out
    assert out["seconds"] < 20, out


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _default_limit(monkeypatch):
    # the bombs are refused at the default limit, whatever the environment says
    monkeypatch.delenv("ICEFLOE_MAX_DECOMPRESSED_BYTES", raising=False)


def test_errors_all_names_every_error_class():
    # bombs raise InvalidInputError itself (no class of their own): every class, that one
    # included, is importable with `from icefloe.errors import *`
    classes = {
        name for name, v in vars(errors).items() if isinstance(v, type) and issubclass(v, errors.IcefloeError)
    }
    assert set(errors.__all__) == classes


@pytest.mark.parametrize("call", ["read_manifest_list", "read_manifest"])
def test_snappy_block_declaring_4_gib(tmp_path, call):
    header = (
        _list_header(tmp_path, "snappy")
        if call == "read_manifest_list"
        else _manifest_header(tmp_path, "snappy")
    )
    path = tmp_path / "snap-bomb.avro"
    path.write_bytes(_with_block(header, snappy_declaring(0xFFFF_FFFF)))
    assert path.stat().st_size < 8000
    out = _read_capped(call, path)
    _assert_refused(out, path, "block 0")
    assert "4294967295" in out["message"]


@pytest.mark.parametrize("call", ["read_manifest_list", "read_manifest"])
def test_deflate_block_of_3_gib(tmp_path, call):
    header = (
        _list_header(tmp_path, "deflate")
        if call == "read_manifest_list"
        else _manifest_header(tmp_path, "deflate")
    )
    path = tmp_path / "deflate-bomb.avro"
    path.write_bytes(_with_block(header, deflate_zeros(3 * 1024)))
    assert path.stat().st_size < 4 * MIB
    out = _read_capped(call, path)
    _assert_refused(out, path, "block 0")
    assert "ICEFLOE_MAX_DECOMPRESSED_BYTES" in out["message"]


@pytest.mark.parametrize(
    "block",
    [zstd_rle(1, declared=1 << 40), zstd_rle(32 * 1024)],
    ids=["declares-1-TiB", "4-GiB-of-runs"],
)
def test_zstd_block(tmp_path, block):
    path = tmp_path / "zstd-bomb.avro"
    path.write_bytes(_with_block(_list_header(tmp_path, "zstd"), block))
    _assert_refused(_read_capped("read_manifest_list", path), path, "block 0")


def test_gzip_metadata_of_3_gib(tmp_path):
    path = tmp_path / "00001-bomb.gz.metadata.json"
    path.write_bytes(gzip_zeros(3 * 1024))
    _assert_refused(_read_capped("TableMetadata.from_path", path), path, None)


def test_the_limit_is_set_by_the_environment(tmp_path, monkeypatch):
    # 2 MiB of zeros, gzipped: read (and found not to be JSON) under the default limit,
    # refused under a limit of 1 MiB
    path = tmp_path / "00001-small.gz.metadata.json"
    path.write_bytes(gzip_zeros(2))
    with pytest.raises(errors.InvalidJsonError):
        icefloe.TableMetadata.from_path(str(path))
    monkeypatch.setenv("ICEFLOE_MAX_DECOMPRESSED_BYTES", str(MIB))
    with pytest.raises(errors.InvalidInputError) as e:
        icefloe.TableMetadata.from_path(str(path))
    assert type(e.value) is errors.InvalidInputError
    assert e.value.file == str(path) and "1048576" in str(e.value)
    monkeypatch.setenv("ICEFLOE_MAX_DECOMPRESSED_BYTES", "lots")
    with pytest.raises(errors.InvalidArgumentError, match="ICEFLOE_MAX_DECOMPRESSED_BYTES"):
        icefloe.TableMetadata.from_path(str(path))


def test_deletion_vector_with_lying_sizes(tmp_path):
    """Deletion vectors are not compressed, but their framing declares sizes: a length
    prefix of 4 GiB and a bitmap count of 2^63 are refused without allocating them (this
    held before decompression was bounded; kept here with the other hostile sizes)."""
    path = tmp_path / "dv-bomb.puffin"
    body = b"\xd1\xd3\x39\x64" + (1 << 63).to_bytes(8, "little")
    blob = (0xFFFF_FFFF).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    path.write_bytes(b"PFA1" + blob)
    out = _read_capped("DeletionVector.read", path, str(len(blob)))
    assert out["raised"] == "InvalidMetadataError", out
    assert out["file"] == str(path), out
    # with the right length, the count is the lie
    blob = (len(body)).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    path.write_bytes(b"PFA1" + blob)
    out = _read_capped("DeletionVector.read", path, str(len(blob)))
    assert out["raised"] == "InvalidMetadataError", out
    assert "bitmap" in out["message"], out
