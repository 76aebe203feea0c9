"""Types of the compiled row-change kernel (engine/_native/redopack.c): the API of its
pure-Python twins, which state what each does (tests/source/test_source_redopack.py holds
the two to the same bytes)."""

from engine.embedded.redopack import Table as Table
from engine.embedded.redopack import commit as commit
from engine.embedded.redopack import row_pieces as row_pieces

def cut(
    stream: bytes | bytearray,
    starts: list[int],
    first_block: int,
    sequence: int,
    block_size: int,
    big_endian: bool,
) -> bytes: ...
def gather(
    stream: bytearray,
    starts: list[int],
    vectors: bytes,
    scn: int,
    subscn: int,
    vld: int,
    big_endian: bool,
) -> None: ...
