"""Identifiers of Oracle redo: SCN, XID, UBA, DBA and the extended ROWID (the RBA is
:class:`engine.redo.framing.Rba`).

All are small frozen values with a ``parse``/``dump`` pair for the dump-text form and
plain ints inside. ``Xid.parse("0x0004.00b.00000356")`` is 4.11.854;
``RowId.parse("AAASrPAAEAAAAQ2AAK")`` is data object 76495, file 4, block 0x436, slot 10.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from engine.redo.errors import CodecError

SCN_MAX: Final = (1 << 48) - 1
_HEX = r"0x([0-9a-fA-F]+)"


def parse_scn(text: str) -> int:
    """``0x0000.0018bcdf`` (wrap.base) or ``0xffff.ffffffff`` or a plain hex/decimal."""
    m = re.fullmatch(rf"{_HEX}\.([0-9a-fA-F]+)", text.strip())
    if m:
        return (int(m.group(1), 16) << 32) | int(m.group(2), 16)
    try:
        return int(text, 0)
    except ValueError as exc:
        raise CodecError(f"bad SCN {text!r}") from exc


def dump_scn(scn: int) -> str:
    return f"0x{scn >> 32:04x}.{scn & 0xFFFFFFFF:08x}"


def dump_nrid(dba: int, slot: int) -> str:
    """A row piece's next piece in Oracle's dump notation (``nrid:  0x01000437.0``)."""
    return f"nrid:  0x{dba:08x}.{slot:x}"


def scn_display(scn: int) -> str:
    """GoldenGate's ``wrap.base (n)`` form, e.g. ``0.1621215 (1621215)``."""
    return f"{scn >> 32}.{scn & 0xFFFFFFFF} ({scn})"


@dataclass(frozen=True, slots=True, order=True)
class Xid:
    """Transaction id: undo segment number, slot, wrap sequence."""

    usn: int
    slot: int
    sqn: int

    @classmethod
    def parse(cls, text: str) -> Xid:
        t = text.strip()
        m = re.fullmatch(r"0x([0-9a-fA-F]{1,4})\.([0-9a-fA-F]{1,3})\.([0-9a-fA-F]{1,8})", t)
        if m:
            return cls(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))
        m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", t)
        if m:
            return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        raise CodecError(f"bad transaction id {text!r}")

    def dump(self) -> str:
        return f"0x{self.usn:04x}.{self.slot:03x}.{self.sqn:08x}"

    def __str__(self) -> str:
        return f"{self.usn}.{self.slot}.{self.sqn}"

    @property
    def is_null(self) -> bool:
        return self.usn == 0 and self.slot == 0 and self.sqn == 0


NULL_XID: Final = Xid(0, 0, 0)


@dataclass(frozen=True, slots=True)
class Uba:
    """Undo block address: undo block DBA, block sequence, record number."""

    dba: int
    seq: int
    rec: int

    @classmethod
    def parse(cls, text: str) -> Uba:
        m = re.fullmatch(r"0x([0-9a-fA-F]+)\.([0-9a-fA-F]+)\.([0-9a-fA-F]+)", text.strip())
        if not m:
            raise CodecError(f"bad undo block address {text!r}")
        return cls(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))

    def dump(self) -> str:
        return f"0x{self.dba:08x}.{self.seq:04x}.{self.rec:02x}"


NULL_UBA: Final = Uba(0, 0, 0)


def make_dba(file_no: int, block: int) -> int:
    """Data block address: relative file number in the top 10 bits, block in the low 22."""
    return (file_no << 22) | block


def dba_file(dba: int) -> int:
    return dba >> 22


def dba_block(dba: int) -> int:
    return dba & 0x3FFFFF


_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_INDEX: Final = {c: i for i, c in enumerate(_ALPHABET)}


def _b64(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, rem = divmod(value, 64)
        chars.append(_ALPHABET[rem])
    if value:
        raise CodecError("ROWID component too large")
    return "".join(reversed(chars))


def _unb64(text: str) -> int:
    value = 0
    for ch in text:
        try:
            value = value * 64 + _INDEX[ch]
        except KeyError as exc:
            raise CodecError(f"bad ROWID character {ch!r}") from exc
    return value


@dataclass(frozen=True, slots=True, order=True)
class RowId:
    """Extended ROWID ``OOOOOOFFFBBBBBBRRR`` (object 32 bits, file 10, block 22, slot 16)."""

    dataobj: int
    file_no: int
    block: int
    slot: int

    @classmethod
    def parse(cls, text: str) -> RowId:
        t = text.strip()
        if len(t) != 18:
            raise CodecError(f"ROWID must have 18 characters: {text!r}")
        return cls(_unb64(t[:6]), _unb64(t[6:9]), _unb64(t[9:15]), _unb64(t[15:]))

    def __str__(self) -> str:
        return (
            _b64(self.dataobj, 6) + _b64(self.file_no, 3) + _b64(self.block, 6) + _b64(self.slot, 3)
        )

    @classmethod
    def from_dba(cls, dataobj: int, dba: int, slot: int) -> RowId:
        return cls(dataobj, dba_file(dba), dba_block(dba), slot)
