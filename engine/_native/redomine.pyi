from typing import Any

# qualified name, name bytes, data object, column kinds, key, captured, hooked, converters,
# befores (engine.extract.tasks.decode.BEFORES_*, | 16 NOCOMPRESSDELETES, | 32 GETTRUNCATES)
TableSpec = tuple[str, bytes, int, bytes, tuple[int, ...], bool, bool, tuple[Any, ...], int]

class Walker:
    def __init__(
        self,
        tables: dict[int, TableSpec],
        kinds: tuple[int, int, int, int, int, int, int],
        io_types: tuple[int, int, int, int, int, int, int, int],
    ) -> None: ...
    def walk(
        self,
        buf: bytes,
        pos: int,
        hi: int,
        base: int,
        first_block: int,
        block_size: int,
        start: int,
        end: int,
        lwn_scn: int,
        micros: int,
        thread: int,
        vector_header_size: int,
        big_endian: bool,
        out: list[tuple[Any, ...]],
    ) -> tuple[int, int, int, int]: ...

def number_text(raw: bytes) -> str | None: ...
def crc32(data: bytes) -> int: ...
def ora_payloads(
    data: bytes, block: int, sequence: int, block_size: int, big_endian: bool
) -> tuple[bytes, int]: ...
