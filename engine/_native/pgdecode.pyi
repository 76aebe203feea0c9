from typing import Any

def scan(
    rows: list[tuple[int, str]], start: int, tables: dict[str, Any]
) -> tuple[list[tuple[Any, ...]], int]: ...
