"""engine.storage: one API over a local path, file:// and s3:// (a local moto server)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import storage
from engine.storage import PathMap, StorageError

DATA = bytes(range(256)) * 40


@pytest.fixture(params=["plain", "file", "s3"])
def base(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same tests on each kind of location."""
    if request.param == "plain":
        return str(tmp_path / "arch")
    if request.param == "file":
        return f"file://{tmp_path}/arch"
    s3: str = request.getfixturevalue("s3_server")
    return storage.join(s3, f"{request.node.name.replace('[', '-').rstrip(']')}", "arch")


def test_put_read_list(base: str, tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    src.write_bytes(DATA)
    loc = storage.join(base, "t1", "000000001.log")
    assert not storage.exists(loc)
    storage.put_file(src, loc)
    assert storage.exists(loc) and storage.size(loc) == len(DATA)
    assert storage.read_range(loc, 300, 10) == DATA[300:310]
    assert storage.read_range(loc, len(DATA) - 4, 100) == DATA[-4:]  # short at the end
    with storage.open_input(loc) as f:
        assert f.size == len(DATA)
        assert f.read_at(0, 512) == DATA[:512]
    storage.put_file(src, storage.join(base, "t2", "000000007.log"))
    entries = storage.list_files(base, ".log")
    assert [(e.location, e.size) for e in entries] == [
        (storage.join(base, "t1", "000000001.log"), len(DATA)),
        (storage.join(base, "t2", "000000007.log"), len(DATA)),
    ]
    assert storage.list_files(storage.join(base, "none")) == []


def test_missing_file_is_one_line(base: str) -> None:
    with pytest.raises(StorageError) as err:
        storage.read_range(storage.join(base, "nope.log"), 0, 1)
    assert err.value.missing
    assert str(err.value).startswith("GGS-SRC-0500: ") and "\n" not in str(err.value)


def test_local_copy_is_atomic(tmp_path: Path) -> None:
    """The copy is written beside the target and renamed: no partial file under the final
    name, no leftover part file."""
    src = tmp_path / "src.bin"
    src.write_bytes(DATA)
    target = tmp_path / "arch" / "t1" / "000000001.log"
    storage.put_file(src, str(target))
    assert os.listdir(target.parent) == ["000000001.log"]
    assert target.read_bytes() == DATA


def test_credentials_masked(s3_server: str) -> None:
    assert "test:test" in s3_server
    shown = storage.describe(storage.join(s3_server, "x.log"))
    assert "test:test" not in shown and "***@ggsci/x.log" in shown
    with pytest.raises(StorageError) as err:
        storage.size(storage.join(s3_server, "x.log"))
    assert "test:test" not in str(err.value)


def test_hdfs_without_libhdfs_says_so() -> None:
    with pytest.raises(StorageError) as err:
        storage.size("hdfs://namenode:8020/arch/t1/000000001.log")
    text = str(err.value)
    assert "libhdfs" in text and "\n" not in text


def test_path_map() -> None:
    m = PathMap((("/mnt/driver/arch", "/mnt/exec/arch/"),))
    assert m.for_task("/mnt/driver/arch/t1/000000001.log") == "/mnt/exec/arch/t1/000000001.log"
    assert m.for_task("/mnt/driver/archive/x") == "/mnt/driver/archive/x"  # not a prefix dir
    assert m.for_task("s3://b/x") == "s3://b/x"
