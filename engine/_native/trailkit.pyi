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
