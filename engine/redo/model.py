"""The redo model: redo records and their change vectors, after Oracle's structures.

A :class:`RedoRecord` is what one redo write holds: its position (thread, RBA), its SCN
and SUBSCN, a timestamp, and an ordered tuple of :class:`ChangeVector`. A change vector has
Oracle's header (opcode ``layer.code``, class, file, DBA, object, SCN, sequence) and an
opcode-specific body. The opcodes we produce and understand (:data:`OPCODES`):

======  ==============================================  ===================
op      meaning                                         body
======  ==============================================  ===================
4.1     block cleanout                                  :class:`Cleanout`
5.1     undo record (+ supplemental key columns)        :class:`Undo`
5.2     transaction slot allocation (begin)             :class:`SlotAlloc`
5.4     commit, or rollback when ``rollback`` is set    :class:`Commit`
5.6     undo applied (a compensation follows)           :class:`UndoApplied`
5.20    session info (user, transaction name)           :class:`SessionInfo`
10.2    index leaf insert                               :class:`IndexOp`
10.4    index leaf delete                               :class:`IndexOp`
11.2    insert row piece (IRP)                          :class:`Kdo`
11.3    delete row piece (DRP)                          :class:`Kdo`
11.5    update row piece (URP)                          :class:`Kdo`
11.11   multi-row insert (QMI, array insert)            :class:`Kdo`
11.12   multi-row delete (QMD)                          :class:`Kdo`
19.1    direct-loader block                             :class:`DirectLoad`
24.1    DDL                                             :class:`Ddl`
24.4    media recovery markers (no body)                ``None``
======  ==============================================  ===================

Other opcodes read from Oracle dumps keep their text lines in :class:`Opaque`.
All classes are frozen, slotted and picklable (they travel to Spark executors).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from engine.redo.framing import Rba
from engine.redo.ids import NULL_UBA, NULL_XID, Uba, Xid

OBJ_UNDO: Final = 4294967295  # OBJ of undo-segment change vectors


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a row image: its position (0-based) and Oracle bytes (None = NULL)."""

    no: int
    data: bytes | None


@dataclass(frozen=True, slots=True)
class RowImage:
    """A row in a multi-row op (QMI) or a direct-load block: slot, flag bytes, columns."""

    slot: int
    columns: tuple[Column, ...]
    fb: str = "--H-FL--"
    lb: int = 0
    cc: int = -1  # column count as written; -1 = len(columns)

    @property
    def column_count(self) -> int:
        return len(self.columns) if self.cc < 0 else self.cc


@dataclass(frozen=True, slots=True)
class Ktb:
    """KTB redo: the transaction-layer part of a data/index block change.

    ``kind`` is Oracle's op letter: ``F`` (first change of the txn in the block: xid, uba),
    ``C`` (continuation: uba), ``Z`` (nothing), ``L`` (itl copy, in undo)."""

    op: int = 0x01
    kind: str = "F"
    xid: Xid = NULL_XID
    uba: Uba = NULL_UBA
    itl_flg: str = "C---"
    itl_lkc: int = 0
    itl_scn: int = 0
    cleanout_scn: int = -1  # -1 = no "Block cleanout record" section
    cleanout: tuple[tuple[int, int, int], ...] = ()  # (itli, flg, scn)


@dataclass(frozen=True, slots=True)
class Kdo:
    """A KDO row operation (layer 11 redo, and the row part of 11.1 undo).

    ``name``: IRP, DRP, URP, QMI, QMD, LKR... ``columns`` are the changed/inserted columns
    (URP: changed only; IRP: all), ``rows`` the rows of a QMI, ``slots`` those of a QMD."""

    name: str
    ktb: Ktb
    bdba: int
    hdba: int
    itli: int = 2
    slot: int = 0
    flag: int = 0x2C
    lock: int = 0
    size: int = 0
    fb: str = "--H-FL--"
    lb: int = 0
    cc: int = 0
    nnew: int = 0
    columns: tuple[Column, ...] = ()
    rows: tuple[RowImage, ...] = ()
    slots: tuple[int, ...] = ()
    # IRP of a row piece that is not the last (fb without L): the next piece's (dba, slot)
    nrid: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class IndexOp:
    """Index leaf change (10.2 insert / 10.4 delete redo, 10.22 undo).

    ``keys`` is the concatenated key bytes (each key: length-prefixed columns); keydata holds
    the ROWID bytes of each key (``01 00 04 36 00 0a`` = file/block + slot)."""

    action: str
    ktb: Ktb
    array: bool = False
    itl: int = 2
    sno: int = 0
    row_size: int = 0
    keys: bytes = b""
    key_sizes: tuple[int, ...] = ()
    slots: tuple[int, ...] = ()
    keydata: bytes = b""
    indexid: int = 0
    block: int = 0
    kdxlkflg: int = 0x1


@dataclass(frozen=True, slots=True)
class SlotAlloc:
    """5.2 ``ktudh``: a transaction takes slot ``slt`` (sequence ``sqn``) of an undo header."""

    slt: int
    sqn: int
    flg: int = 0x12
    siz: int = 0
    fbi: int = 0
    uba: Uba = NULL_UBA
    pxid: Xid = NULL_XID


@dataclass(frozen=True, slots=True)
class Undo:
    """5.1: an undo record of transaction ``xid``.

    ``opc`` is the undone layer (``(11, 1)`` rows, ``(10, 22)`` index, ``(5, 7)`` begin only);
    ``kdo``/``index`` the undo operation; ``supplemental`` the before image of the key
    columns (our supplemental logging; empty in Oracle dumps that did not show it)."""

    xid: Xid
    opc: tuple[int, int]
    objn: int
    objd: int
    slt: int = 0
    rci: int = 0
    tsn: int = 4
    siz: int = 0
    spc: int = 0
    flg: int = 0x22
    seq: int = 0
    rec: int = 0
    begin: bool = False
    logon_user: int = 0
    kdo: Kdo | None = None
    index: IndexOp | None = None
    supplemental: tuple[Column, ...] = ()
    # the supplemental header's flags when they are not the undo row's (a row piece's
    # record: docs/redo_format.md "Rows in pieces"), and its before / after fields: the
    # table column (from 1) of the undo / redo image's first column (0: not given)
    supp_fb: str | None = None
    supp_before: int = 0
    supp_after: int = 0


@dataclass(frozen=True, slots=True)
class Commit:
    """5.4 ``ktucm``: end of transaction slot ``slt``/``sqn``; ``rollback`` for a rollback."""

    slt: int
    sqn: int
    srt: int = 0
    sta: int = 9
    flg: int = 0x2
    uba: Uba = NULL_UBA
    ext: int = 0
    spc: int = 0
    fbi: int = 0

    @property
    def rollback(self) -> bool:
        return bool(self.flg & ROLLBACK_FLAG)


ROLLBACK_FLAG: Final = 0x04


@dataclass(frozen=True, slots=True)
class UndoApplied:
    """5.6: undo record ``uba`` of ``xid`` was applied (rollback / rollback to savepoint);
    the change vectors that follow in the same record are the compensation."""

    xid: Xid
    uba: Uba
    # the object whose change is undone (ktubu objn/objd, as Oracle's 5.6 names it; 0: not
    # known, e.g. imported from dump text, which does not show it)
    objn: int = 0
    objd: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """5.20, once per transaction: who ran it."""

    session: int
    serial: int
    username: str
    txn_name: str = ""
    version: int = 186647296
    audit_sid: int = 0
    client_id: str = ""


@dataclass(frozen=True, slots=True)
class Cleanout:
    """4.1 block cleanout: ITL entries cleaned at ``scn``."""

    scn: int
    entries: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class DirectLoad:
    """19.1: a whole formatted data block written by a direct-path load."""

    xid: Xid
    seg_obj: int
    csc: int
    bdba: int
    rows: tuple[RowImage, ...]
    itc: int = 3


@dataclass(frozen=True, slots=True)
class Ddl:
    """24.1: a DDL statement, with the object's dictionary entry after it (JSON) if any."""

    xid: Xid
    owner: str
    name: str
    obj: int
    text: str
    definition: str = ""


@dataclass(frozen=True, slots=True)
class Opaque:
    """A change vector of an opcode we do not model: its dump lines, kept verbatim."""

    lines: tuple[str, ...]


Body = (
    Kdo
    | IndexOp
    | SlotAlloc
    | Undo
    | Commit
    | UndoApplied
    | SessionInfo
    | Cleanout
    | DirectLoad
    | Ddl
    | Opaque
    | None
)


@dataclass(frozen=True, slots=True)
class ChangeVector:
    """One change vector: Oracle's CHANGE header plus its body.

    ``marker`` selects the ``MEDIA RECOVERY MARKER`` header form (5.20, 24.x)."""

    layer: int
    code: int
    body: Body
    typ: int = 0
    cls: int = 1
    afn: int = 4
    dba: int = 0
    obj: int = OBJ_UNDO
    scn: int = 0
    seq: int = 1
    marker: bool = False

    @property
    def op(self) -> str:
        return f"{self.layer}.{self.code}"


@dataclass(frozen=True, slots=True)
class RedoRecord:
    """One redo record.

    ``rba`` is the record's declared position (for native records, where it is in our log;
    for imported dumps, where Oracle wrote it). ``lwn`` is set on the first record of a log
    write (Oracle's ``LWN RBA`` line): ``(count, nst, scn)``. ``length``/``vld`` are Oracle's
    LEN/VLD as declared (native records: encoded size, 0x01)."""

    thread: int
    rba: Rba
    scn: int
    subscn: int
    timestamp: datetime
    changes: tuple[ChangeVector, ...]
    length: int = 0
    vld: int = 0x01
    lwn: tuple[int, int, int] | None = None

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(cv.op for cv in self.changes)


@dataclass(frozen=True, slots=True)
class LocatedRecord:
    """A record as read from one of our log files: the record plus where it physically is
    (``sequence`` of the file, ``offset`` = byte offset of its first byte, ``end`` = byte
    offset just past it). A reader resumes from ``end``."""

    record: RedoRecord
    sequence: int
    offset: int
    end: int


KDO_OPS: Final[dict[int, str]] = {2: "IRP", 3: "DRP", 4: "LKR", 5: "URP", 11: "QMI", 12: "QMD"}

OPCODES: Final[dict[tuple[int, int], str]] = {
    (4, 1): "Block cleanout",
    (5, 1): "Undo record",
    (5, 2): "Allocate transaction slot",
    (5, 4): "Commit / rollback",
    (5, 6): "Undo applied",
    (5, 20): "Session information",
    (10, 2): "Insert leaf row",
    (10, 4): "Delete leaf row",
    (11, 2): "Insert row piece",
    (11, 3): "Delete row piece",
    (11, 4): "Lock row piece",
    (11, 5): "Update row piece",
    (11, 11): "Insert multiple rows",
    (11, 12): "Delete multiple rows",
    (19, 1): "Direct loader block",
    (24, 1): "DDL",
    (24, 4): "Media recovery marker",
    (24, 6): "Media recovery marker",
}
