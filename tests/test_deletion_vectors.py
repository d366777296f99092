"""Deletion vectors (v3) from Python: construction from Python, numpy and pyarrow inputs,
Arrow outputs, the blob bytes, Puffin files, and the error classes."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pyarrow as pa
import pytest

import icefloe
from icefloe import DeletionVector, write_deletion_vectors
from icefloe.errors import IcefloeIOError, InvalidArgumentError, InvalidMetadataError

TWO32 = 1 << 32


def test_from_python_ints():
    dv = DeletionVector.from_positions([5, 1, TWO32 + 5, 0, 1])
    assert dv.cardinality == 4
    assert len(dv) == 4
    assert 5 in dv and dv.contains(TWO32 + 5)
    assert 2 not in dv and -1 not in dv and "x" not in dv
    assert dv.positions().to_pylist() == [0, 1, 5, TWO32 + 5]
    assert dv.positions().type == pa.int64()
    assert DeletionVector.from_positions(range(3)).positions().to_pylist() == [0, 1, 2]
    assert DeletionVector.from_positions(x for x in [3, 4]).cardinality == 2
    assert DeletionVector().cardinality == 0
    assert DeletionVector([7]) == DeletionVector.from_positions([7])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.uint16])
def test_from_numpy(dtype):
    arr = np.array([9, 3, 3, 1000], dtype=dtype)
    dv = DeletionVector.from_positions(arr)
    assert dv.positions().to_pylist() == [3, 9, 1000]


def test_from_pyarrow_array_and_chunked_array():
    dv = DeletionVector.from_positions(pa.array([4, 2, TWO32], type=pa.int64()))
    assert dv.positions().to_pylist() == [2, 4, TWO32]
    dv = DeletionVector.from_positions(pa.array([4, 2], type=pa.uint32()))
    assert dv.positions().to_pylist() == [2, 4]
    chunked = pa.chunked_array([pa.array([1, 2]), pa.array([3, 70000])])
    assert DeletionVector.from_positions(chunked).positions().to_pylist() == [1, 2, 3, 70000]
    # a slice (non-zero offset) is honoured
    sliced = pa.array([100, 200, 300, 400]).slice(1, 2)
    assert DeletionVector.from_positions(sliced).positions().to_pylist() == [200, 300]


def test_bad_positions():
    with pytest.raises(InvalidArgumentError):
        DeletionVector.from_positions([1, -1])
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        DeletionVector.from_positions(np.array([-5], dtype=np.int64))
    with pytest.raises(InvalidArgumentError):
        DeletionVector.from_positions(pa.array([1, None]))
    with pytest.raises(InvalidArgumentError):
        DeletionVector.from_positions(np.array([1.5]))
    with pytest.raises(InvalidArgumentError):
        DeletionVector.from_positions(pa.array([2**64 - 1], type=pa.uint64()))
    with pytest.raises(TypeError):
        DeletionVector.from_positions(["a"])


def test_blob_bytes_layout():
    dv = DeletionVector.from_positions([0, 1, TWO32 + 5])
    blob = dv.to_bytes()
    (length,) = struct.unpack(">I", blob[:4])
    assert length == len(blob) - 8
    assert blob[4:8] == bytes([0xD1, 0xD3, 0x39, 0x64])
    assert struct.unpack(">I", blob[-4:])[0] == zlib.crc32(blob[4:-4])
    assert struct.unpack("<Q", blob[8:16])[0] == 2  # two 32-bit bitmaps
    assert DeletionVector.from_bytes(blob) == dv


def test_corrupt_blobs_raise_typed_errors():
    blob = bytearray(DeletionVector.from_positions([1, 2, 3]).to_bytes())
    bad_crc = bytearray(blob)
    bad_crc[-1] ^= 1
    with pytest.raises(InvalidMetadataError) as e:
        DeletionVector.from_bytes(bytes(bad_crc))
    assert e.value.field == "deletion-vector.crc"
    bad_magic = bytearray(blob)
    bad_magic[4] = 0
    with pytest.raises(InvalidMetadataError) as e:
        DeletionVector.from_bytes(bytes(bad_magic))
    assert e.value.field == "deletion-vector.magic"
    with pytest.raises(InvalidMetadataError) as e:
        DeletionVector.from_bytes(bytes(blob[:-2]))
    assert e.value.field == "deletion-vector.length"
    for n in range(len(blob)):
        with pytest.raises(InvalidMetadataError):
            DeletionVector.from_bytes(bytes(blob[:n]))


def test_keep_mask():
    dv = DeletionVector.from_positions([0, 65535, 65536, TWO32])
    mask = dv.keep_mask(65534, 4)
    assert mask.type == pa.bool_()
    assert mask.to_pylist() == [True, False, False, True]
    assert dv.keep_mask(TWO32 - 1, 2).to_pylist() == [True, False]
    assert len(dv.keep_mask(0, 0)) == 0
    # filter a batch with it
    batch = pa.table({"x": list(range(65530, 65540))})
    kept = batch.filter(dv.keep_mask(65530, 10))
    assert kept["x"].to_pylist() == [65530, 65531, 65532, 65533, 65534, 65537, 65538, 65539]


def test_large_random_round_trip():
    rng = np.random.default_rng(7)
    positions = np.unique(rng.integers(0, 10_000_000, size=200_000, dtype=np.int64))
    dv = DeletionVector.from_positions(positions)
    assert dv.cardinality == len(positions)
    assert np.array_equal(dv.positions().to_numpy(), positions)
    mask = dv.keep_mask(0, 10_000_000).to_numpy(zero_copy_only=False)
    assert (~mask).sum() == len(positions)
    assert DeletionVector.from_bytes(dv.to_bytes()) == dv


def test_merge():
    a = DeletionVector.from_positions([1, 2])
    b = DeletionVector.from_positions([2, TWO32])
    m = a.merge(b)
    assert m.positions().to_pylist() == [1, 2, TWO32]
    assert a.cardinality == 2  # unchanged


def test_repr():
    assert repr(DeletionVector.from_positions([3, 1])) == "DeletionVector(cardinality=2, positions=[1, 3])"
    assert repr(DeletionVector.from_positions(range(10))).endswith("positions=[0, 1, 2, 3, 4, ...])")


def _footer(path):
    data = open(path, "rb").read()
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1"
    (size,) = struct.unpack("<i", data[-12:-8])
    assert data[-8:-4] == b"\0\0\0\0"
    assert data[-16 - size : -12 - size] == b"PFA1"
    return json.loads(data[-12 - size : -12])


def test_write_and_read_puffin(tmp_path):
    a = DeletionVector.from_positions([3, 4, 5])
    b = DeletionVector.from_positions(np.arange(0, 70_000, 7))
    path = str(tmp_path / "dvs.puffin")
    refs = write_deletion_vectors(path, {"s3://b/a.parquet": a, "s3://b/b.parquet": b})
    assert [r["referenced_data_file"] for r in refs] == ["s3://b/a.parquet", "s3://b/b.parquet"]
    assert refs[0]["offset"] == 4 and refs[0]["cardinality"] == 3
    assert refs[1]["offset"] == 4 + refs[0]["length"] and refs[1]["cardinality"] == 10_000
    for ref, dv in zip(refs, [a, b], strict=True):
        assert DeletionVector.read(path, ref["offset"], ref["length"]) == dv

    footer = _footer(path)
    assert footer["properties"]["created-by"].startswith("icefloe")
    blob = footer["blobs"][1]
    assert blob["type"] == "deletion-vector-v1"
    assert blob["fields"] == [] and blob["snapshot-id"] == -1 and blob["sequence-number"] == -1
    assert blob["offset"] == refs[1]["offset"] and blob["length"] == refs[1]["length"]
    assert "compression-codec" not in blob
    assert blob["properties"] == {"referenced-data-file": "s3://b/b.parquet", "cardinality": "10000"}

    # Puffin files are never overwritten
    with pytest.raises(IcefloeIOError):
        write_deletion_vectors(path, {"x": a})
    # a wrong range is caught by the framing checks
    with pytest.raises(InvalidMetadataError) as e:
        DeletionVector.read(path, refs[0]["offset"] + 1, refs[0]["length"])
    assert e.value.file == path
    with pytest.raises(IcefloeIOError):
        DeletionVector.read(path, 0, 10**9)
    with pytest.raises(IcefloeIOError):
        DeletionVector.read(str(tmp_path / "missing.puffin"), 4, 10)
    with pytest.raises(TypeError):
        write_deletion_vectors(str(tmp_path / "y.puffin"), {"x": [1, 2]})


def test_exported_from_package():
    assert icefloe.DeletionVector is DeletionVector
    assert "write_deletion_vectors" in icefloe.__all__
