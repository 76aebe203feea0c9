from collections.abc import Container, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

def group(
    events: Sequence[tuple[Any, ...]],
    compact: bool,
    fine_xids: AbstractSet[str],
    rules: Container[str],
    horizon: int | None,
    kinds: tuple[int, int, int, int, int, int],
) -> list[tuple[Any, ...]]: ...
