"""Row pieces' flags and addresses: the fb byte in Oracle's eight-letter notation, DBAs,
extended ROWIDs (data object, relative file, block, slot in Oracle's base-64)."""

from __future__ import annotations

# bit 7 .. bit 0: Cluster Key, Cluster member, Head, Deleted, First, Last, Prev, Next
FB_LETTERS = "KCHDFLPN"
FB_K, FB_C, FB_H, FB_D, FB_F, FB_L, FB_P, FB_N = 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


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


def dba_file(dba: int) -> int:
    return dba >> 22


def dba_block(dba: int) -> int:
    return dba & 0x3FFFFF


def _b64(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_B64[value & 63])
        value >>= 6
    return "".join(reversed(out))


def rowid(data_obj: int, dba: int, slot: int) -> str:
    """The extended ROWID ``OOOOOOFFFBBBBBBRRR`` of a row piece."""
    return _b64(data_obj, 6) + _b64(dba_file(dba), 3) + _b64(dba_block(dba), 6) + _b64(slot, 3)


def parse_rowid(text: str) -> tuple[int, int, int, int]:
    """(data object, relative file, block, slot) of an extended ROWID."""
    if len(text) != 18 or any(c not in _B64 for c in text):
        raise ValueError(f"not an extended ROWID: {text!r}")

    def num(s: str) -> int:
        v = 0
        for c in s:
            v = v * 64 + _B64.index(c)
        return v

    return num(text[:6]), num(text[6:9]), num(text[9:15]), num(text[15:])
