from typing import Any

def scan(
    data: bytes, reads: bytes, keep: bytes | None
) -> tuple[dict[int, str | None], bytes | None] | None: ...
def rows(
    rows: list[tuple[Any, ...]],
    table: str,
    slots: bytes,
    nslots: int,
    keep: bytes | None,
    missing: object,
) -> tuple[list[int], list[list[Any]], list[tuple[Any, ...]]] | None: ...
