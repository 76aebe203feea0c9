"""The fast path of an attached database's redo: a byte range mined by the Extract's task
miner (:mod:`engine.extract.tasks.miner`) and its C walk, strict, over the attached
dictionary's tables (by real object number, with their container), as
:class:`engine.extract.oracle_source.OracleMiner` gives it to the driver. A record the task
miner would not read as the redo miner (:class:`engine.redo.capture.Miner`) does is read by
the redo miner in place (:attr:`FastMiner.delegate`, set by OracleMiner); a range the redo
miner stops in goes to it whole (:class:`Fallback`). docs/extract.md "The fast path" says
exactly what takes which path.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from engine.extract.tasks.decode import BEFORES_COMPACT
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Event, MinePlan, TableInfo
from engine.redo import capture as C
from engine.redo import pieces as P
from engine.redo.dictionary import Dictionary, Table
from engine.redo.errors import RedoError
from engine.redo.framing import Rba, Record, parse_record
from engine.redo.model import Kdo, Undo
from engine.redo.scan import Scan
from engine.redo.values import CHARSETS
from engine.redo.vectors import KDO_FLAG_COMPRESSED, KDO_FLAG_ONE_FIELD, KDO_OP_MASK, undo_ids

#: Column types whose values the task miner turns into the same trail text as the redo miner
#: (engine.redo.values then decode.text_of) does, character data in these character sets.
FAST_TYPES: Final = frozenset(
    {"NUMBER", "INTEGER", "FLOAT", "DATE", "TIMESTAMP", "VARCHAR2", "CHAR"}
)
_TEXT_TYPES: Final = frozenset({"VARCHAR2", "CHAR"})
_UTF8: Final = frozenset(k for k, v in CHARSETS.items() if v == "utf-8")
_UNDO_APPLIED: Final = frozenset({(5, 6), (5, 11)})
_STRICT_OPS: Final = frozenset({2, 3, 5, 11, 12})  # the KDO ops the task miner reads


class Fallback(Exception):
    """The redo miner stops in (or cannot read) this range: it mines the range whole."""


class _Delegate(Exception):
    """The task miner would not read this record as the redo miner does."""


def _base(type_name: str) -> str:
    return type_name.upper().split("(")[0].strip()


def fast_table(t: Table, d: Dictionary, info: TableInfo) -> bool:
    """Whether the task miner decodes captured table ``t`` as the redo miner does: one data
    object (a ROWID's), columns 1..n of the row piece in order (no gap: the task miner
    takes the k-th column of a piece as the k-th of the table), types of :data:`FAST_TYPES`
    (character data in UTF-8), no UPDATERECORDFORMAT COMPACT (the redo miner leaves out of
    it a column set to its own value)."""
    if len(t.data_objs) != 1 or info.befores == BEFORES_COMPACT:
        return False
    for i, c in enumerate(t.columns):
        base = _base(c.type)
        if c.seg_col != i + 1 or base not in FAST_TYPES:
            return False
        if base in _TEXT_TYPES and d.charset(c).upper() not in _UTF8:
            return False
    return True


def fast_miner(plan: MinePlan, d: Dictionary) -> FastMiner | None:
    """The task miner for an attached database's plan (its tables are the driver's, numbered
    by :func:`engine.extract.alo.driver_dictionary`: the n-th table 2n + 1), keyed by the
    real object and data object numbers, with each table's container. A captured table the
    task miner cannot decode the same, the dictionary's own tables (SYS.COL$, ...: a
    structure change) and a number two containers' tables share stand in it as *slow*
    (hooked, no columns: the C walk leaves their records to Python, where
    :class:`FastMiner` has the redo miner read them). None when no captured table is fast."""
    tables: dict[int, TableInfo] = {}
    slow: set[int] = set()
    clash: set[int] = set()
    for n, t in enumerate(d.tables):
        info = plan.tables.get(2 * n + 1)
        is_dict = t.full_name in C.DICTIONARY_TABLES
        if not is_dict and (info is None or not info.captured):
            continue
        if is_dict or info is None or not fast_table(t, d, info):
            mine = replace(
                info or TableInfo(t.full_name, t.full_name.encode(), 0, (), (), True, False, False),
                types=(), key=(), captured=True, hooked=True, con_id=t.con_id,
            )  # fmt: skip
            objs = {t.obj, *t.data_objs}
            slow |= objs
            for o in objs:
                clash |= {o} if o in tables else set()
                tables[o] = replace(mine, dataobj=o)
            continue
        fast = replace(info, dataobj=t.data_objs[0], types=tuple(_base(c.type) for c in t.columns),
                       con_id=t.con_id)  # fmt: skip
        for o in {t.obj, t.data_objs[0]}:
            clash |= {o} if o in tables else set()
            tables[o] = fast
    if not any(i.captured and not i.hooked for i in tables.values()):
        return None
    for o in clash:  # two containers' objects of one number: any container, slow
        tables[o] = replace(tables[o], types=(), key=(), hooked=True, con_id=-1)
        slow.add(o)
    return FastMiner(replace(plan, tables=tables), frozenset(slow))


def _empty_null(convert: Callable[[bytes | None], Any]) -> Callable[[bytes | None], Any]:
    """An attached database's value: empty is NULL (engine.redo.values.decode_value)."""
    return lambda raw: convert(raw or None)


class FastMiner(Miner):
    """The task miner (and its C walk, strict: engine/_native/redomine.c ``rows``) over an
    attached database's redo. A record it would not read as the redo miner does is read by
    the redo miner (:attr:`delegate`, in place): one with a savepoint rollback (5.6 / 5.11:
    the redo miner binds it to its change), a DDL marker (24.1), a direct load (19.1) of a
    captured table, a row piece without both F and L flags (an IRP's or URP's row flags, the
    row a DRP's undo restores, the supplemental data's: engine/redo/pieces.py), a compressed
    or one-field row image, an ORP, an update whose supplemental columns are not all key
    columns, an update without its key, a row of a slow table (:func:`fast_miner`: a
    dictionary table's among them), a captured table's number in another container's 5.1
    (the C walk skips another container's row by itself), or a record the task miner cannot
    read."""

    def __init__(self, plan: MinePlan, slow: frozenset[int]) -> None:
        self.slow = slow
        #: reads a record with the redo miner, in place (set by OracleMiner for a range)
        self.delegate: Callable[..., None] | None = None
        super().__init__(plan)

    def helper(self, info: TableInfo) -> Any:
        fresh = info.qualified not in self._cols
        h = super().helper(info)
        if fresh:
            h.convert = tuple(_empty_null(c) for c in h.convert)
            h.entry = tuple(_empty_null(e) for e in h.entry)
        return h

    def record(
        self, buf: bytes, lo: int, size: int, scan: Scan, offset: int, stop: int,
        lwn_scn: int, lwn_time: int, out: list[Event],
    ) -> None:  # fmt: skip
        """A record the C walk left: read here when the task miner reads it as the redo
        miner does, else by the redo miner (:attr:`delegate`)."""
        n0 = len(out)
        rec: Record | None = None
        try:
            rec = parsed(buf, lo, size, scan, offset)
            if self._plain(rec):
                super().record(buf, lo, size, scan, offset, stop, lwn_scn, lwn_time, out)
                return
        except (_Delegate, RedoError, struct.error, IndexError, ValueError):
            del out[n0:]
        if self.delegate is None:
            raise Fallback("no redo miner to read the record with")
        self.delegate(scan, offset, stop, buf, lo, size, lwn_scn, lwn_time, out, rec)

    def _plain(self, rec: Record) -> bool:
        """Whether the record holds nothing the task miner would read otherwise than the
        redo miner (the class docstring; the C walk's rows() checks the same)."""
        tables = self.tables
        undo_obj = -1
        for v in rec.vectors:
            op = (v.layer, v.code)
            if op in _UNDO_APPLIED or op == (24, 1):
                return False
            if op == (5, 1):
                undo_obj = undo_ids(v)[1]
                info = tables.get(undo_obj)
                if not _contains(info, v.con_id):
                    return False
                if info is not None and info.captured and not P.undo_whole(v):
                    return False  # a row piece (engine/redo/pieces.py binds it)
            elif v.layer in (11, 19):
                info = tables.get(undo_obj if v.layer == 11 else -1) or tables.get(v.obj)
                undo_obj = -1
                if info is None or not info.captured:
                    continue
                if op == (19, 1) or not _contains(info, v.con_id):
                    return False
                kdo = v.fields[1] if v.layer == 11 and len(v.fields) > 1 else b""
                if len(kdo) > 16:  # the KDO (field 1)
                    kop = kdo[10] & KDO_OP_MASK
                    if not P.kdo_whole(kdo) or (  # a row piece; a one-field or compressed image
                        kop in _STRICT_OPS and kdo[11] & (KDO_FLAG_ONE_FIELD | KDO_FLAG_COMPRESSED)
                    ):
                        return False
        return True

    def _rows(
        self, obj: int, cseq: int, kdo: Kdo, undo: Undo | None, xid: str,
        head: tuple[int, int, int, int, int, int], seq: int, out: list[Event],
    ) -> None:  # fmt: skip
        found = obj if undo is None or undo.objn not in self.tables else undo.objn
        info = self.tables.get(found) or self.tables.get(obj)
        if info is None or not info.captured:
            return
        if found in self.slow or obj in self.slow:
            raise _Delegate(info.qualified)  # (a dictionary table's row among them)
        if kdo.name == "URP" and undo is not None:
            key = set(info.key)
            if any(c.no not in key for c in undo.supplemental):
                raise _Delegate("supplemental columns beyond the key")
        super()._rows(obj, cseq, kdo, undo, xid, head, seq, out)

    def _emit(self, out: list[Event], cols: Any, xid: str, io_type: int, rowid: str,
              image: Any, full: bool, before: Any, ref: str,
              head: tuple[int, int, int, int, int, int], seq: int,
              keyless: bool = False) -> None:  # fmt: skip
        if keyless:  # (the redo miner writes it without the key: no database to fetch it)
            raise _Delegate("an update without its key")
        super()._emit(out, cols, xid, io_type, rowid, image, full, before, ref, head, seq)


def parsed(buf: bytes, lo: int, size: int, scan: Scan, offset: int) -> Record:
    """The record at ``buf[lo:lo + size]`` (file offset ``offset``), with its RBA and thread
    (the redo miner names its changes by them)."""
    h = scan.header
    assert h is not None
    bs = h.block_size
    return parse_record(
        bytes(buf[lo : lo + size]), h.order, h.layout,
        Rba(h.sequence, offset // bs, offset % bs), h.thread,
    )  # fmt: skip


def _contains(info: TableInfo | None, con_id: int) -> bool:
    """Whether a vector of container ``con_id`` naming ``info``'s number is of its table
    (or of no captured one)."""
    return info is None or not info.captured or info.con_id in (None, con_id)
