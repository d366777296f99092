"""Files a failed write touches (no Java): a write whose commit fails deletes the data and
delete files it wrote, one whose outcome is unknown keeps them and says so; a purge or an
expiry deletes only files inside the table's location unless told otherwise."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors
from icefloe.update.transaction import Transaction

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("cat", pa.string())])


@pytest.fixture
def cat(tmp_path):
    c = icefloe.load_catalog("t", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=(tmp_path / "wh").as_uri())
    c.create_namespace("db")
    return c


def rows(ids, cat="a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "cat": [cat] * len(ids)})


def files_under(folder: Path, suffix: str) -> set[str]:
    return {str(p) for p in folder.rglob(f"*{suffix}")} if folder.exists() else set()


def no_retries(cat, name: str, version: int = 2):
    return cat.create_table(
        name, SCHEMA, properties={"commit.retry.num-retries": "0", "format-version": str(version)}
    )


def test_append_whose_commit_fails_deletes_its_data_files(cat, tmp_path):
    t = no_retries(cat, "db.t")
    t.append(rows([1, 2]))
    data = tmp_path / "wh" / "db" / "t" / "data"
    before = files_under(data, ".parquet")
    assert len(before) == 1
    stale = cat.load_table("db.t")
    t.append(rows([3]))  # another writer commits first
    after_other = files_under(data, ".parquet")
    # no retries: the catalog refuses the stale base
    with pytest.raises(errors.CommitFailedError):
        stale.append(rows([4, 5]))
    assert files_under(data, ".parquet") == after_other
    assert cat.load_table("db.t").current_snapshot().summary["total-records"] == "3"


def test_overwrite_that_fails_validation_deletes_its_data_files(cat, tmp_path):
    t = cat.create_table("db.t", SCHEMA)
    t.append(rows([1, 2]))
    start = t.current_snapshot().snapshot_id
    stale = cat.load_table("db.t")
    t.append(rows([3]))  # conflicting data, committed meanwhile
    data = tmp_path / "wh" / "db" / "t" / "data"
    files = files_under(data, ".parquet")
    with pytest.raises(errors.ValidationError):
        stale.overwrite(rows([9]), "id > 0", validate_from_snapshot=start, validate_no_conflicting_data=True)
    assert files_under(data, ".parquet") == files


def test_transaction_given_up_deletes_what_it_wrote(cat, tmp_path):
    t = cat.create_table("db.t", SCHEMA)
    data = tmp_path / "wh" / "db" / "t" / "data"
    with pytest.raises(RuntimeError, match="changed my mind"):
        with t.transaction() as tx:
            tx.append(rows([1, 2]))
            assert len(files_under(data, ".parquet")) == 1
            raise RuntimeError("changed my mind")
    assert files_under(data, ".parquet") == set()
    assert cat.load_table("db.t").current_snapshot() is None


def test_imported_files_are_never_deleted(cat, tmp_path):
    """Files handed to append_files existed before the transaction: a failed commit leaves
    them alone."""
    from icefloe.executor.write import write_data_files

    t = no_retries(cat, "db.t")
    stale = cat.load_table("db.t")
    t.append(rows([1]))
    imported = write_data_files(t.metadata, rows([7]), location_prefix=str(tmp_path / "import"))
    with pytest.raises(errors.CommitFailedError):
        stale.append_files(imported)
    assert all(Path(p.removeprefix("file://")).exists() for p in imported.column("file_path").to_pylist())


@pytest.mark.parametrize("version", [2, 3])
def test_row_delete_whose_commit_fails_deletes_its_delete_files(cat, tmp_path, version):
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": str(version)})
    t.append(rows(list(range(10))))
    stale = cat.load_table("db.t")
    cat.load_table("db.t").delete("id = 3")  # conflicting delete files, committed meanwhile
    suffix = ".puffin" if version >= 3 else "-deletes.parquet"
    data = tmp_path / "wh" / "db" / "t" / "data"
    files = files_under(data, suffix)
    assert len(files) == 1
    with pytest.raises(errors.ValidationError):
        stale.delete("id < 5")
    assert files_under(data, suffix) == files


def _unknown_outcome(monkeypatch):
    """Every commit from now on ends as if the catalog's answer was lost."""

    def commit(self):
        raise errors.CommitStateUnknownError("commit state unknown: the answer was lost")

    monkeypatch.setattr(Transaction, "commit_transaction", commit)


def test_row_delete_with_unknown_outcome_keeps_its_delete_files(cat, tmp_path, monkeypatch):
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": "3"})
    t.append(rows(list(range(10))))
    data = tmp_path / "wh" / "db" / "t" / "data"
    _unknown_outcome(monkeypatch)
    with pytest.raises(errors.CommitStateUnknownError):
        t.delete("id < 5")
    assert len(files_under(data, ".puffin")) == 1


def test_append_with_unknown_outcome_keeps_its_data_files(cat, tmp_path, monkeypatch):
    t = cat.create_table("db.t", SCHEMA)
    data = tmp_path / "wh" / "db" / "t" / "data"
    _unknown_outcome(monkeypatch)
    with pytest.raises(errors.CommitStateUnknownError):
        t.append(rows([1, 2]))
    assert len(files_under(data, ".parquet")) == 1


# ---------------------------------------------------------------------------------------------
# purge and expiry stay inside the table's location
# ---------------------------------------------------------------------------------------------


def _borrowing_table(cat, tmp_path):
    """``db.owner`` with its data, and ``db.borrower`` whose first snapshot appends the
    owner's data file and one written outside the warehouse, its second its own data file.
    Returns the borrower, the foreign paths and the borrower's own data file."""
    from icefloe.executor.write import write_data_files

    owner = cat.create_table("db.owner", SCHEMA)
    theirs = write_data_files(owner.metadata, rows([1, 2]))
    owner.append_files(theirs)
    borrower = cat.create_table("db.borrower", SCHEMA)
    outside = write_data_files(
        borrower.metadata, rows([3]), location_prefix=(tmp_path / "elsewhere").as_uri()
    )
    borrower.append_files(pa.concat_tables([theirs, outside]))
    borrower.append(rows([4]))
    foreign = theirs.column("file_path").to_pylist() + outside.column("file_path").to_pylist()
    own = [p for p in borrower.scan().plan_arrow().column("file_path").to_pylist() if p not in foreign]
    assert len(foreign) == 2 and len(own) == 1
    return borrower, sorted(foreign), own


def exists(location: str) -> bool:
    return Path(location.removeprefix("file://")).exists()


def test_purge_keeps_files_outside_the_table_location(cat, tmp_path, caplog):
    borrower, foreign, own = _borrowing_table(cat, tmp_path)
    # registered under another name: the catalog has no say over what its metadata names
    cat.register_table("db.registered", borrower.metadata_location)
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        result = cat.purge_table("db.registered")
    assert sorted(result.kept_outside_location) == foreign
    assert result.failed == [] and result.deleted_files > 0
    assert all(exists(p) for p in foreign) and not any(exists(p) for p in own)
    assert "kept 2 file(s) outside the table's location" in caplog.text
    assert cat.load_table("db.owner").scan().to_arrow().num_rows == 2


def test_purge_deletes_outside_the_location_when_asked(cat, tmp_path):
    borrower, foreign, own = _borrowing_table(cat, tmp_path)
    result = cat.purge_table("db.borrower", delete_outside_location=True)
    assert result.kept_outside_location == []
    assert not any(exists(p) for p in foreign + own)


@pytest.mark.parametrize("outside", [False, True])
def test_expiry_keeps_files_outside_the_table_location(cat, tmp_path, caplog, outside):
    borrower, foreign, own = _borrowing_table(cat, tmp_path)
    # drop every file, then expire the snapshots that reached them
    borrower.delete_files(foreign + own)
    borrower.append(rows([5]))
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        result = (
            borrower.expire_snapshots()
            .older_than(2**62)
            .retain_last(1)
            .delete_outside_location(outside)
            .commit()
        )
    assert len(result.removed_snapshot_ids) == 3
    assert sorted(result.data_files) == sorted(own + (foreign if outside else []))
    assert not any(exists(p) for p in own)
    if outside:
        assert result.kept_outside_location == []
        assert not any(exists(p) for p in foreign)
    else:
        assert sorted(result.kept_outside_location) == foreign
        assert all(exists(p) for p in foreign)
        assert "kept 2 file(s) outside the table's location" in caplog.text
