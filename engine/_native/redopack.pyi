"""Types of the compiled row-change kernel (engine/_native/redopack.c); its pure-Python twin,
and the statement of what each does, is engine/source/redopack.py."""

from collections.abc import Sequence

from engine.source.bulkpack import TablePack, TxHead
from engine.source.redopack import Records, Stored, Txn

class Table:
    def __init__(self, pack: TablePack, kinds: str, encoders: Sequence[Stored]) -> None: ...
    def encode(self, values: Sequence[object]) -> tuple[bytes | None, ...]: ...
    def insert(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        row: Sequence[object],
    ) -> Records: ...
    def update(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        set_cols: Sequence[int],
        row: Sequence[object],
        new: Sequence[object],
    ) -> Records: ...
    def delete(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        row: Sequence[object],
    ) -> Records: ...

def commit(
    head: TxHead,
    logical: int,
    rec_ids: bytes,
    scn: int,
    ts: int,
    uba: tuple[int, int, int],
    rollback: bool,
) -> bytes: ...
def cut_blocks(data: bytes, start: int, sequence: int) -> bytes: ...
def crc32(data: bytes) -> int: ...
