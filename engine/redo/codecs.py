"""Oracle internal value encodings, as they appear in redo column vectors.

- NUMBER: base-100 "varnum" without length byte. Byte 0 is the exponent (``0xC1 + E``
  for positive numbers, ``0x3E - E`` for negative ones, ``0x80`` for zero); then up to 20
  base-100 digits stored as ``d + 1`` (positive) or ``101 - d`` (negative); negative numbers
  with fewer than 20 digits end with ``0x66``. ``c2 0b 0c`` is 1011.
- DATE: 7 bytes: century+100, year-of-century+100, month, day, hour+1, minute+1, second+1.
- TIMESTAMP: the 7 DATE bytes plus nanoseconds as a big-endian u32 (omitted when zero, as
  Oracle does). Python ``datetime`` keeps microseconds, so precision is microseconds.
- VARCHAR2 / CHAR: the character bytes in the database character set (AL32UTF8 here);
  CHAR values are blank-padded to their declared length on the way in.
- NULL: ``None`` (a zero-length value; Oracle's empty string is NULL too).

Encoders and decoders are looked up by type name in :data:`CODECS` (table dispatch).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from datetime import datetime
from decimal import Context, Decimal, InvalidOperation
from typing import Final

from engine.redo.errors import CodecError

Value = Decimal | int | float | str | datetime | None

MAX_NUMBER_DIGITS: Final = 20  # base-100 mantissa digits (38-40 decimal digits)
_MIN_EXP: Final = -65  # 0xC1 - 65 = 0x80: a lone 0x80 byte is zero, 0x80 + digits is not
_MAX_EXP: Final = 62
_ZERO: Final = b"\x80"
_CTX: Final = Context(prec=60)  # wider than NUMBER: normalize() must never round
_INT_CTX: Final = Context(prec=200)  # room for every integer digit up to 1E+126
_NEG_TERMINATOR: Final = 0x66


# bytes.fromhex reads two decimal digits as one BCD byte (0x42 for "42"); these tables
# translate it to Oracle's digit byte (d + 1 for positive numbers, 101 - d for negative)
_BCD_POS: Final = bytes((b >> 4) * 10 + (b & 15) + 1 & 0xFF for b in range(256))
_BCD_NEG: Final = bytes(101 - (b >> 4) * 10 - (b & 15) & 0xFF for b in range(256))
_BYTE: Final = tuple(bytes((i,)) for i in range(256))
_FAST_LIMIT: Final = 10 ** (2 * MAX_NUMBER_DIGITS)  # below it: at most 20 base-100 digits


def encode_scaled(n: int, scale100: int = 0) -> bytes:
    """Encode ``n * 100**-scale100`` (fast path for integers and fixed-point cents)."""
    if 0 < n < _FAST_LIMIT and 0 <= scale100 <= MAX_NUMBER_DIGITS:  # nothing out of range
        digits = str(n)
        if len(digits) & 1:
            digits = "0" + digits
        head = _BYTE[0xC0 + (len(digits) >> 1) - scale100]
        digits = digits.rstrip("0")
        if len(digits) & 1:
            digits += "0"
        return head + bytes.fromhex(digits).translate(_BCD_POS)
    if n == 0:
        return _ZERO
    digits = str(-n if n < 0 else n)
    if len(digits) % 2:
        digits = "0" + digits
    exp = len(digits) // 2 - 1 - scale100
    digits = digits.rstrip("0")
    if len(digits) % 2:
        digits += "0"
    npairs = len(digits) // 2
    if npairs > MAX_NUMBER_DIGITS or not _MIN_EXP <= exp <= _MAX_EXP:
        return encode_number(Decimal(n).scaleb(-2 * scale100, _CTX))
    if n > 0:
        return _BYTE[0xC1 + exp] + bytes.fromhex(digits).translate(_BCD_POS)
    body = _BYTE[0x3E - exp] + bytes.fromhex(digits).translate(_BCD_NEG)
    return body + _BYTE[_NEG_TERMINATOR] if npairs < MAX_NUMBER_DIGITS else body


def encode_number(value: Decimal | int | float) -> bytes:
    """Encode a number; raises :class:`CodecError` outside Oracle's NUMBER range."""
    if type(value) is int and -(10**38) < value < 10**38:
        return encode_scaled(value)
    try:
        dec = (
            value
            if isinstance(value, Decimal)
            else Decimal(repr(value) if isinstance(value, float) else value)
        )
    except (InvalidOperation, ValueError) as exc:
        raise CodecError(f"not a number: {value!r}") from exc
    if not dec.is_finite():
        raise CodecError(f"NUMBER cannot hold {value!r}")
    if dec.is_zero():
        return _ZERO
    sign, digits_t, exp10 = dec.normalize(_CTX).as_tuple()
    assert isinstance(exp10, int)
    digits = "".join(map(str, digits_t))
    point = len(digits) + exp10  # value = 0.digits * 10**point
    if point % 2:
        digits = "0" + digits
        point += 1
    if len(digits) % 2:
        digits += "0"
    pairs = [int(digits[i : i + 2]) for i in range(0, len(digits), 2)]
    while pairs and pairs[-1] == 0:
        pairs.pop()
    if len(pairs) > MAX_NUMBER_DIGITS:
        raise CodecError(f"NUMBER precision exceeded (more than 40 digits): {value!r}")
    exp = point // 2 - 1
    if not _MIN_EXP <= exp <= _MAX_EXP:
        raise CodecError(f"NUMBER exponent out of range: {value!r}")
    if not sign:
        return bytes([0xC1 + exp, *(d + 1 for d in pairs)])
    body = bytes([0x3E - exp, *(101 - d for d in pairs)])
    return body + bytes([_NEG_TERMINATOR]) if len(pairs) < MAX_NUMBER_DIGITS else body


def decode_number(raw: bytes) -> Decimal:
    if not raw:
        raise CodecError("empty NUMBER")
    head = raw[0]
    if raw == _ZERO:
        return Decimal(0)
    if head >= 0x80:
        exp = head - 0xC1
        digits = [b - 1 for b in raw[1:]]
        negative = False
    else:
        body = raw[1:-1] if raw[-1] == _NEG_TERMINATOR else raw[1:]
        exp = 0x3E - head
        digits = [101 - b for b in body]
        negative = True
    if not digits or len(digits) > MAX_NUMBER_DIGITS or any(not 0 <= d <= 99 for d in digits):
        raise CodecError(f"bad NUMBER bytes: {raw.hex(' ')}")
    text = "".join(f"{d:02d}" for d in digits)
    result = Decimal(int(text)).scaleb(2 * (exp + 1) - len(text), _CTX)
    value = (result.copy_negate() if negative else result).normalize(_CTX)
    exp10 = value.as_tuple().exponent
    if isinstance(exp10, int) and exp10 > 0:  # 9E+3 -> 9000: integers print as integers
        value = value.quantize(Decimal(1), context=_INT_CTX)
    return value


def encode_date(value: datetime) -> bytes:
    if not isinstance(value, datetime):
        raise CodecError(f"not a date: {value!r}")
    century, year = divmod(value.year, 100)
    return bytes(
        [
            century + 100,
            year + 100,
            value.month,
            value.day,
            value.hour + 1,
            value.minute + 1,
            value.second + 1,
        ]
    )


def decode_date(raw: bytes) -> datetime:
    if len(raw) != 7 and len(raw) != 11:
        raise CodecError(f"DATE needs 7 bytes, got {len(raw)}: {raw.hex(' ')}")
    cc, yy, mon, day, hh, mi, ss = raw[:7]
    try:
        return datetime((cc - 100) * 100 + yy - 100, mon, day, hh - 1, mi - 1, ss - 1)
    except ValueError as exc:
        raise CodecError(f"bad DATE bytes: {raw.hex(' ')}") from exc


def encode_timestamp(value: datetime) -> bytes:
    head = encode_date(value)
    if value.microsecond == 0:
        return head
    return head + struct.pack(">I", value.microsecond * 1000)


def decode_timestamp(raw: bytes) -> datetime:
    base = decode_date(raw)
    if len(raw) == 7:
        return base
    (nanos,) = struct.unpack(">I", raw[7:11])
    if nanos >= 1_000_000_000:
        raise CodecError(f"bad TIMESTAMP fraction: {raw.hex(' ')}")
    return base.replace(microsecond=nanos // 1000)


def encode_text(value: str) -> bytes:
    if not isinstance(value, str):
        raise CodecError(f"not a string: {value!r}")
    return value.encode("utf-8")


def decode_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodecError(f"bad character data: {raw.hex(' ')}") from exc


def most_bytes(type_name: str, length: int | None = None) -> int | None:
    """The most bytes a value of a column of ``type_name`` (declared ``length``) encodes to
    (the encoders above): a NUMBER its exponent byte and :data:`MAX_NUMBER_DIGITS` digit
    bytes (a shorter negative one its terminator), a DATE 7, a TIMESTAMP 11 (its
    nanoseconds), a text its declared length (the embedded database checks the UTF-8
    bytes against it: ``ORA-12899``); None: no bound (a text of no declared length, a type
    not listed)."""
    if type_name in ("NUMBER", "INTEGER", "FLOAT"):
        return 1 + MAX_NUMBER_DIGITS
    if type_name == "DATE":
        return 7
    if type_name == "TIMESTAMP":
        return 11
    if CODECS.get(type_name, (None,))[0] is encode_text and length:
        return length
    return None


Encoder = Callable[[object], bytes]
Decoder = Callable[[bytes], Value]

CODECS: Final[dict[str, tuple[Callable[..., bytes], Callable[[bytes], Value]]]] = {
    "NUMBER": (encode_number, decode_number),
    "INTEGER": (encode_number, decode_number),
    "FLOAT": (encode_number, decode_number),
    "DATE": (encode_date, decode_date),
    "TIMESTAMP": (encode_timestamp, decode_timestamp),
    "VARCHAR2": (encode_text, decode_text),
    "VARCHAR": (encode_text, decode_text),
    "NVARCHAR2": (encode_text, decode_text),
    "CHAR": (encode_text, decode_text),
    "NCHAR": (encode_text, decode_text),
}


def encode_value(type_name: str, value: object) -> bytes | None:
    """Encode one column value; ``None`` (and ``''``) is NULL."""
    if value is None or value == "":
        return None
    try:
        encoder = CODECS[type_name][0]
    except KeyError as exc:
        raise CodecError(f"unsupported type {type_name}") from exc
    return encoder(value)


def decode_value(type_name: str, raw: bytes | None) -> Value:
    if raw is None:
        return None
    try:
        decoder = CODECS[type_name][1]
    except KeyError as exc:
        raise CodecError(f"unsupported type {type_name}") from exc
    return decoder(raw)
