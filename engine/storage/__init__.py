"""Redo storage: one filesystem layer for the Extract's readers and the database's archiver.

Every place is named by a *location*, a string: a plain path (``/data/arch``), or a URI
that pyarrow.fs understands::

    file:///mnt/shared/arch                      a POSIX path (a shared mount, say)
    s3://bucket/prefix?region=eu-west-1          an object store; a local S3-protocol server:
    s3://bucket/p?endpoint_override=127.0.0.1:9000&scheme=http&region=us-east-1
    hdfs://namenode:8020/arch                    where pyarrow has libhdfs (not everywhere)

S3 credentials come from the AWS environment variables (``AWS_ACCESS_KEY_ID``, ...; on a
cluster give them to the executors too, e.g. ``spark.executorEnv.*``) or from the URI's user
part (``s3://KEY:SECRET@bucket/...``), which every message masks (:func:`describe`).

The API (all functions take and return locations; errors are :class:`StorageError`, one line)::

    join(base, "t1", "000000001.log")      the location of a file under ``base``
    exists(loc), size(loc)
    read_range(loc, start, length)          bytes (fewer at the end of the file)
    with open_input(loc) as f:              random access: f.size, f.read_at(offset, n)
    list_files(base, suffix=".log")         [Entry(location, size)], recursive, sorted
    put_file(local_path, loc)               copy a whole file; readers never see a part of it
    PathMap(((driver_prefix, task_prefix),)).for_task(loc)
                                            a shared mount seen at another path by the tasks

Plain paths and ``file://`` go through the operating system directly (``os.pread``: the
local case costs what it did before this layer); everything else through the pyarrow
filesystem of the URI, made once per process and reused (a Spark task opens many splits).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

#: The error code of every storage failure (engine/embedded/errors.py's GGS-SRC family).
CODE: Final = "GGS-SRC-0600"
_LOCAL_SCHEMES: Final = ("", "file")
#: Schemes whose first URI part is a bucket (part of the path inside the filesystem).
_BUCKETED: Final = ("s3", "gs", "gcs")
_COPY_CHUNK: Final = 8 << 20


class StorageError(OSError):
    """A location cannot be used; ``str()`` is one line with the location masked."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = CODE
        self.missing = missing

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class Entry:
    location: str
    size: int


class Input(Protocol):
    """A file open for random access."""

    size: int

    def read_at(self, offset: int, n: int) -> bytes: ...

    def close(self) -> None: ...

    def __enter__(self) -> Input: ...

    def __exit__(self, *exc: object) -> None: ...


def is_local(location: str | Path) -> bool:
    return isinstance(location, Path) or urlsplit(location).scheme in _LOCAL_SCHEMES


def local_path(location: str | Path) -> Path:
    """The OS path of a local location (a plain path or ``file://``)."""
    if isinstance(location, Path):
        return location
    parts = urlsplit(location)
    if parts.scheme == "file":
        return Path(unquote(parts.path))
    return Path(location)


#: A URI's user part with a secret whose ``/`` is not percent-encoded (AWS secret keys hold
#: ``/``): the authority then ends at that ``/``, and the secret reads as a path.
_RAW_USERINFO: Final = re.compile(r"^([a-z][a-z0-9+.\-]*://)[^@?#\s/]*:[^@?#\s]*@", re.I)
#: Any URI's user part in a library's message (pyarrow's quote the URI whole).
_ANY_USERINFO: Final = re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^@?#\s/'\"]*:[^@?#\s'\"]*@", re.I)


def _scrubbed(detail: str) -> str:
    """A library's message with every URI's credentials masked."""
    return _ANY_USERINFO.sub(r"\1***@", detail)


def describe(location: str | Path) -> str:
    """The location as messages show it: credentials in the URI masked (a secret with an
    unencoded ``/`` too)."""
    text = str(location)
    parts = urlsplit(text)
    if parts.scheme in _LOCAL_SCHEMES:
        return text
    if "@" not in parts.netloc:
        return _RAW_USERINFO.sub(r"\1***@", text)
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


def join(base: str | Path, *names: str) -> str:
    """The location of ``names`` under ``base`` (a URI keeps its query)."""
    if is_local(base) and not str(base).startswith("file:"):
        return str(Path(base, *names))
    parts = urlsplit(str(base))
    path = "/".join([parts.path.rstrip("/"), *names])
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


# -- pyarrow filesystems, one per URI root and process ---------------------------------------
_FILESYSTEMS: dict[tuple[str, str, str], Any] = {}


def _arrow(location: str) -> tuple[Any, str]:
    """The pyarrow filesystem of a URI and the path inside it."""
    parts = urlsplit(location)
    key = (parts.scheme, parts.netloc, parts.query)
    path = unquote(parts.path)
    if parts.scheme in _BUCKETED:
        path = parts.netloc.rsplit("@", 1)[-1] + path
    fs = _FILESYSTEMS.get(key)
    if fs is None:
        try:
            from pyarrow import fs as pafs

            fs, path = pafs.FileSystem.from_uri(location)
        except Exception as exc:
            raise StorageError(_unusable(location, exc)) from None
        _FILESYSTEMS[key] = fs
    return fs, path.rstrip("/") if len(path) > 1 else path


def _unusable(location: str, exc: Exception) -> str:
    scheme = urlsplit(location).scheme
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    first = _scrubbed(first)
    if scheme in ("hdfs", "viewfs"):
        return (
            f"{describe(location)}: hdfs:// needs pyarrow's HadoopFileSystem and Hadoop's "
            f"libhdfs (set HADOOP_HOME, CLASSPATH and ARROW_LIBHDFS_DIR): {first}"
        )
    return f"{describe(location)}: unusable storage location: {first}"


def _fail(location: str | Path, exc: BaseException, what: str) -> StorageError:
    missing = isinstance(exc, FileNotFoundError)
    detail = "no such file" if missing else _scrubbed((str(exc).strip().splitlines() or [""])[0])
    return StorageError(f"{describe(location)}: cannot {what}: {detail}", missing=missing)


# -- reading ---------------------------------------------------------------------------------
class _LocalInput:
    def __init__(self, path: Path) -> None:
        # never waits on a FIFO (O_NONBLOCK: a regular file ignores it), reads no device
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        st = os.fstat(self.fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(self.fd)
            raise OSError("not a regular file")
        self.size = st.st_size

    def read_at(self, offset: int, n: int) -> bytes:
        data = os.pread(self.fd, n, offset)
        while len(data) < n:  # a very large read may come back in pieces
            more = os.pread(self.fd, n - len(data), offset + len(data))
            if not more:
                break
            data += more
        return data

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> _LocalInput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ArrowInput:
    def __init__(self, location: str) -> None:
        fs, path = _arrow(location)
        self.location = location
        try:
            self.fh = fs.open_input_file(path)
            self.size = int(self.fh.size())
        except Exception as exc:
            raise _fail(location, exc, "open") from None

    def read_at(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if n == 0:
            return b""
        try:
            data: bytes = self.fh.read_at(n, offset)
        except Exception as exc:
            raise _fail(self.location, exc, f"read {n} bytes at {offset}") from None
        return data

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> _ArrowInput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_input(location: str | Path) -> Input:
    """The file at ``location`` open for random access (``StorageError`` when it cannot be;
    ``.missing`` tells a file that is not there)."""
    if is_local(location):
        try:
            return _LocalInput(local_path(location))
        except OSError as exc:
            raise _fail(location, exc, "open") from None
    return _ArrowInput(str(location))


def read_range(location: str | Path, start: int, length: int) -> bytes:
    with open_input(location) as f:
        return f.read_at(start, length)


def size(location: str | Path) -> int:
    if is_local(location):
        try:
            return os.stat(local_path(location)).st_size
        except OSError as exc:
            raise _fail(location, exc, "stat") from None
    fs, path = _arrow(str(location))
    from pyarrow import fs as pafs

    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        raise StorageError(f"{describe(location)}: cannot stat: no such file", missing=True)
    return int(info.size)


def exists(location: str | Path) -> bool:
    try:
        size(location)
    except StorageError as exc:
        if exc.missing:
            return False
        raise
    return True


def list_files(base: str | Path, suffix: str = "") -> list[Entry]:
    """Every file under ``base`` (recursively) whose name ends with ``suffix``, sorted by
    location; none when ``base`` does not exist."""
    out: list[Entry] = []
    if is_local(base):
        root = local_path(base)
        if not root.is_dir():
            return out
        prefix = str(base).rstrip("/")
        for d, _dirs, files in os.walk(root):
            rel = os.path.relpath(d, root)
            for name in files:
                if name.endswith(suffix):
                    try:
                        st = os.stat(os.path.join(d, name))
                    except FileNotFoundError:
                        continue  # removed while listing
                    if not stat.S_ISREG(st.st_mode):
                        continue  # a FIFO, a socket, a device: never a log (never opened)
                    n = st.st_size
                    parts = () if rel == "." else tuple(rel.split(os.sep))
                    out.append(Entry(join(prefix, *parts, name), n))
    else:
        from pyarrow import fs as pafs

        fs, path = _arrow(str(base))
        try:
            infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        except Exception as exc:
            raise _fail(base, exc, "list") from None
        for info in infos:
            if info.type == pafs.FileType.File and info.base_name.endswith(suffix):
                rel = info.path[len(path) :].lstrip("/")
                out.append(Entry(join(str(base), *rel.split("/")), int(info.size)))
    out.sort(key=lambda e: e.location)
    return out


# -- writing ---------------------------------------------------------------------------------
def put_file(source: Path, location: str | Path, *, fsync: bool = True) -> None:
    """Copy the local file ``source`` whole to ``location``. Readers never see a part of
    it: a POSIX or HDFS copy is written beside the target and renamed over it; an S3 object
    appears only when its upload completes."""
    if is_local(location):
        target = local_path(location)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(source, "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, _COPY_CHUNK)
                dst.flush()
                if fsync:
                    os.fsync(dst.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise _fail(location, exc, f"copy {source} to") from None
        return
    fs, path = _arrow(str(location))
    direct = urlsplit(str(location)).scheme in _BUCKETED
    dest = path if direct else f"{path}.{os.getpid()}.part"
    try:
        parent = path.rsplit("/", 1)[0]
        if not direct and parent:
            fs.create_dir(parent, recursive=True)
        with open(source, "rb") as src, fs.open_output_stream(dest) as out:
            while chunk := src.read(_COPY_CHUNK):
                out.write(chunk)
        if not direct:
            fs.move(dest, path)
    except Exception as exc:
        raise _fail(location, exc, f"copy {source} to") from None


# -- a shared mount seen at another path by the Spark tasks -----------------------------------
@dataclass(frozen=True, slots=True)
class PathMap:
    """``(prefix the driver sees, prefix the tasks see)`` pairs: TRANLOGOPTIONS PATHMAP."""

    pairs: tuple[tuple[str, str], ...] = ()

    def for_task(self, location: str) -> str:
        for driver, task in self.pairs:
            d = driver.rstrip("/")
            if location == d or location.startswith(d + "/"):
                return task.rstrip("/") + location[len(d) :]
        return location
