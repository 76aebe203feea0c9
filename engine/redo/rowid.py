"""Row pieces' flags and addresses: the fb byte in Oracle's eight-letter notation, and a row
piece's extended ROWID as text (:class:`engine.redo.ids.RowId` states the ROWID's layout)."""

from __future__ import annotations

from engine.redo.ids import RowId

# bit 7 .. bit 0: Cluster Key, Cluster member, Head, Deleted, First, Last, Prev, Next
FB_LETTERS = "KCHDFLPN"
FB_K, FB_C, FB_H, FB_D, FB_F, FB_L, FB_P, FB_N = 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01


def fb_text(fb: int) -> str:
    """``0x2C`` -> ``"--H-FL--"`` as Oracle's dumps print it."""
    return "".join(c if fb & (0x80 >> i) else "-" for i, c in enumerate(FB_LETTERS))


def fb_value(text: str) -> int:
    """``"--H-FL--"`` -> ``0x2C`` (the writer's hot path: the notations met are cached)."""
    got = _FB_VALUES.get(text)
    if got is None:
        got = _FB_VALUES[text] = _fb_value(text)
    return got


_FB_VALUES: dict[str, int] = {}


def _fb_value(text: str) -> int:
    if len(text) != 8 or any(c not in ("-", FB_LETTERS[i]) for i, c in enumerate(text)):
        raise ValueError(f"not a row flag notation: {text!r}")
    return sum(0x80 >> i for i, c in enumerate(text) if c != "-")


def next_piece(fb: int, bdba: int, slot: int) -> tuple[int, int] | None:
    """The next piece an IRP's or ORP's row piece names (its KDO's nrid field), or None: a
    piece names one only when it is not the last (no L flag; a whole row's field, or a
    cluster key row's, holds other pointers) and the field is set."""
    return (bdba, slot) if bdba and not fb & FB_L else None


def rowid(data_obj: int, dba: int, slot: int) -> str:
    """The extended ROWID ``OOOOOOFFFBBBBBBRRR`` of a row piece."""
    return str(RowId.from_dba(data_obj, dba, slot))


def parse_rowid(text: str) -> tuple[int, int, int, int]:
    """(data object, relative file, block, slot) of an extended ROWID."""
    r = RowId.parse(text)
    return r.dataobj, r.file_no, r.block, r.slot
