from typing import Any

def records(
    rows: list[tuple[Any, ...]],
    tokens: bytes,
    sequence: int,
    io_time_us: int,
    trans_inds: tuple[int, int, int, int],
    delete_io: int,
    user: list[bytes] | None = None,
) -> bytes | None: ...
def count_records(buf: bytes) -> int: ...
def seal(buf: bytes) -> bytes | None: ...
def finish(
    blobs: list[bytes],
    tokens: bytes,
    io_time_us: int,
    trans_inds: tuple[int, int, int, int],
    first: int,
    total: int,
    user: list[bytes] | None = None,
) -> bytes | None: ...
