"""The embedded database's saved state (``_gg_state``): counters and open sessions, as data.

Both values are :mod:`engine.home.datafile` frames of tagged values, written and read by the
explicit functions below, every field checked against its table. A value saved by the old
versions (a pickle) is refused with one message telling the user to recreate the database:
it is never unpickled, since unpickling a file runs whatever code it names.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

from engine.embedded import redogen as rg
from engine.embedded.session import Session, Txn, UndoEntry
from engine.home import datafile as df
from engine.redo.ids import Uba, Xid

STATE_MAGIC: Final = b"GGSCI-DB-STATE\x01"
SESSIONS_MAGIC: Final = b"GGSCI-DB-SESSIONS\x01"
_PICKLE: Final = b"\x80"  # every pickle of protocol 2 and later starts with PROTO

_int, _str, _bool = df.is_(int), df.is_(str), df.is_(bool)
_triple = df.tuple_of(_int, _int, _int)

STATE_FIELDS: Final[dict[str, df.Check]] = {
    "threads": _int,
    "log_bytes": _int,
    "scn": _int,
    "next_obj": _int,
    "next_usn": _int,
    "sqn": df.dict_of(_str, _int),
    "next_sid": _int,
    "audit": _int,
    "last_time": _str,
    "ahead_us": _int,
    "space": df.dict_of(_str, df.list_of(_int)),
    "next_block": _int,
    "crashed": df.list_of(_int),
    "next_thread": _int,
    "dirty": df.dict_of(_int, df.list_of(_triple)),
}
_VALUE = df.one_of(type(None), int, float, str, Decimal, datetime)
_KEY = df.tuple_of(_int, _str, df.tuple_all(df.one_of(type(None), bytes)))
_ENTRY_FIELDS: Final[dict[str, df.Check]] = {
    "kind": _str,
    "table": _str,
    "rids": df.tuple_all(_int),
    "uba": _triple,
    "before": df.tuple_all(_VALUE),
    "cols": df.tuple_all(_int),
}
#: an undo entry's fields for a chained row's change written per piece (state.UndoEntry),
#: absent from entries saved before them (a change written whole)
_ENTRY_PIECE_FIELDS: Final[dict[str, df.Check]] = {
    "pieces": df.tuple_all(df.tuple_of(_int, _int, _int, _int, _int)),
    "undos": df.tuple_all(df.tuple_of(_int, _triple)),
    "moved": df.tuple_all(df.tuple_of(_int, _int, _int, _int, _int)),
}
_IDS_FIELDS: Final[dict[str, df.Check]] = {
    "xid": _triple,
    "undo_seq": _int,
    "rec": _int,
    "logon_user": _int,
    "started": _bool,
    "blocks": df.set_of(_int),
    "last_uba": df.optional(_triple),
}
_TXN_FIELDS: Final[dict[str, df.Check]] = {
    "ids": df.is_(dict),
    "start_scn": _int,
    "start_time": df.is_(datetime),
    "entries": df.list_of(df.is_(dict)),
    "savepoints": df.dict_of(_str, _int),
    "locked": df.set_of(df.tuple_of(_int, _int)),
    "keys": df.dict_of(_KEY, _int),
    "direct_tables": df.set_of(_int),
    "info_written": _bool,
}
_SESSION_FIELDS: Final[dict[str, df.Check]] = {
    "name": _str,
    "thread": _int,
    "sid": _int,
    "serial": _int,
    "username": _str,
    "audit": _int,
    "txn": df.optional(df.is_(dict)),
    "txn_name": _str,
    "pending_savepoints": df.dict_of(_str, _int),
}


class OldFormatError(df.DataError):
    """The value was written by an older version as a pickle (refused, never loaded)."""


# -- writing -----------------------------------------------------------------------------


def encode_state(state: Any) -> bytes:
    """``state`` (an :class:`engine.embedded.database.State`) as one frame."""
    return df.seal(STATE_MAGIC, df.pack({f.name: getattr(state, f.name) for f in fields(state)}))


def encode_sessions(sessions: dict[str, Session]) -> bytes:
    return df.seal(SESSIONS_MAGIC, df.pack({n: _session(s) for n, s in sessions.items()}))


def _uba(u: Uba | None) -> tuple[int, int, int] | None:
    return None if u is None else (u.dba, u.seq, u.rec)


def _session(s: Session) -> dict[str, object]:
    return {
        "name": s.name,
        "thread": s.thread,
        "sid": s.sid,
        "serial": s.serial,
        "username": s.username,
        "audit": s.audit,
        "txn": None if s.txn is None else _txn(s.txn),
        "txn_name": s.txn_name,
        "pending_savepoints": dict(s.pending_savepoints),
    }


def _txn(t: Txn) -> dict[str, object]:
    ids = t.ids
    return {
        "ids": {
            "xid": (ids.xid.usn, ids.xid.slot, ids.xid.sqn),
            "undo_seq": ids.undo_seq,
            "rec": ids.rec,
            "logon_user": ids.logon_user,
            "started": ids.started,
            "blocks": set(ids.blocks),
            "last_uba": _uba(ids.last_uba),
        },
        "start_scn": t.start_scn,
        "start_time": t.start_time,
        "entries": [
            {
                "kind": e.kind,
                "table": e.table,
                "rids": tuple(e.rids),
                "uba": _uba(e.uba),
                "before": tuple(e.before),
                "cols": tuple(e.cols),
                "pieces": tuple(e.pieces),
                "undos": tuple((n, _uba(u)) for n, u in e.undos),
                "moved": tuple(e.moved),
            }
            for e in t.entries
        ],
        "savepoints": dict(t.savepoints),
        "locked": set(t.locked),
        "keys": dict(t.keys),
        "direct_tables": set(t.direct_tables),
        "info_written": t.info_written,
    }


# -- reading -----------------------------------------------------------------------------


def _payload(magic: bytes, raw: bytes, what: str) -> bytes:
    if raw.startswith(_PICKLE):
        raise OldFormatError(f"{what} was saved by an older version of ggsci (as a pickle)")
    try:
        return df.unseal(magic, raw)
    except df.DataError as exc:
        raise df.DataError(f"{what}: {exc}") from exc


def decode_state_fields(raw: bytes) -> dict[str, object]:
    """The saved counters, checked field by field (fields a version did not save are absent:
    they take their defaults)."""
    d = df.record(df.unpack(_payload(STATE_MAGIC, raw, "the saved state")), "the saved state")
    return df.fields_from(d, STATE_FIELDS)


def decode_sessions(raw: bytes) -> dict[str, Session]:
    saved = df.unpack(_payload(SESSIONS_MAGIC, raw, "the saved sessions"))
    return {
        df.expect(name, str, "session name"): _session_from(df.record(v, "session"))
        for name, v in df.record(saved, "the saved sessions").items()
    }


def _need(d: dict[object, object], table: dict[str, df.Check], what: str) -> dict[str, Any]:
    missing = sorted(set(table) - {k for k in d if isinstance(k, str)})
    if missing:
        raise df.DataError(f"{what}: missing {', '.join(missing)}")
    return df.fields_from(d, table)


def _session_from(d: dict[object, object]) -> Session:
    f = _need(d, _SESSION_FIELDS, "session")
    txn = f.pop("txn")
    return Session(**f, txn=None if txn is None else _txn_from(txn))


def _txn_from(d: dict[object, object]) -> Txn:
    f = _need(d, _TXN_FIELDS, "transaction")
    ids = _need(f.pop("ids"), _IDS_FIELDS, "transaction ids")
    last = ids.pop("last_uba")
    tids = rg.TxnIds(
        **{**ids, "xid": Xid(*ids["xid"]), "last_uba": None if last is None else Uba(*last)}
    )
    entries = []
    for e in f.pop("entries"):
        fe = _need(e, _ENTRY_FIELDS, "undo entry")
        more = df.fields_from(e, _ENTRY_PIECE_FIELDS)
        undos = tuple((n, Uba(*u)) for n, u in more.get("undos", ()))  # type: ignore[attr-defined]
        pieces, moved = more.get("pieces", ()), more.get("moved", ())
        kept = {"pieces": pieces, "undos": undos, "moved": moved}
        entries.append(UndoEntry(**{**fe, "uba": Uba(*fe["uba"])}, **kept))  # type: ignore[arg-type]
    return Txn(tids, **f, entries=entries)
