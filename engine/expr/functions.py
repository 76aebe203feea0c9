"""The column-conversion functions (``@STRCAT``, ``@DATE``, ``@GETENV`` ...), one
function each, registered by name in :data:`engine.expr.evaluate.FUNCTIONS`.

Each takes the call node and the Env: arguments are evaluated here, so that @IF, @CASE
and @EVAL evaluate only the branch they return. A NULL argument gives NULL, a missing
one MISSING, anything that cannot be computed INVALID (:mod:`engine.expr.values`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from engine.expr.evaluate import FUNCTIONS, Env
from engine.expr.evaluate import evaluate_tree as evaluate
from engine.expr.values import Status, Value, as_number, compare, text, truth
from params.expr import Call, Lit, Word

_EPOCH = datetime(1970, 1, 1)
#: Julian timestamp (microseconds since 4713 BC noon) of 1970-01-01 00:00.
JTS_EPOCH = 210_866_803_200_000_000


def _args(c: Call, env: Env) -> list[Value]:
    return [evaluate(a, env) for a in c.args]


def _blocked(values: list[Value]) -> Value | bool:
    """The first Status among the values, else None if one is NULL, else False."""
    for v in values:
        if isinstance(v, Status):
            return v
    return None if any(v is None for v in values) else False


#: The functions of text arguments, by name (:mod:`engine.expr.compiled` runs them too).
STRING_FUNCTIONS: dict[str, Callable[..., Value]] = {}


def _strings(name: str, fn: Callable[..., Value]) -> None:
    """Register a function of text arguments (NULL/MISSING/INVALID pass through)."""
    STRING_FUNCTIONS[name] = fn

    def run(c: Call, env: Env) -> Value:
        values = _args(c, env)
        blocked = _blocked(values)
        if blocked is not False:
            return blocked
        try:
            return fn(*[text(v) for v in values])
        except (ValueError, ArithmeticError, IndexError):
            return Status.INVALID

    FUNCTIONS[name] = run


def _int(v: object) -> int:
    n = as_number(v if isinstance(v, str | int | Decimal) else text(v))  # type: ignore[arg-type]
    if isinstance(n, int):
        return n
    if isinstance(n, Decimal):
        return int(n)
    raise ValueError(v)


def _strsub(s: str, *pairs: str) -> str:
    for i in range(0, len(pairs), 2):
        s = s.replace(pairs[i], pairs[i + 1])
    return s


def _strfind(s: str, what: str, begin: object = 1) -> int:
    return s.find(what, max(_int(begin) - 1, 0)) + 1


def _numstr(s: str) -> Value:
    n = as_number(s)
    return Status.INVALID if n is None else n


def _compute(v: object) -> Value:
    return _numstr(v if isinstance(v, str) else text(v))  # type: ignore[arg-type]


_strings("STRCAT", lambda *a: "".join(a))
_strings("STREXT", lambda s, b, e: s[max(_int(b) - 1, 0) : _int(e)])
_strings("STREXTRACT", lambda s, b, e: s[max(_int(b) - 1, 0) : _int(e)])
_strings("STRSUB", _strsub)
_strings("STRUP", lambda s: s.upper())
_strings("STRTRIM", lambda s: s.strip(" "))
_strings("STRLTRIM", lambda s: s.lstrip(" "))
_strings("STRRTRIM", lambda s: s.rstrip(" "))
_strings("STRLEN", lambda s: len(s))
_strings("STRFIND", _strfind)
_strings("STREQ", lambda a, b: a == b)
_strings("STRCMP", lambda a, b: (a > b) - (a < b))
_strings("STRNCMP", lambda a, b, n: (a[: _int(n)] > b[: _int(n)]) - (a[: _int(n)] < b[: _int(n)]))
_strings("NUMSTR", _numstr)
_strings("NUMBIN", _numstr)
_strings("COMPUTE", _compute)
_strings("BINARY", lambda s: s)


def _strnum(c: Call, env: Env) -> Value:
    v = evaluate(c.args[0], env)
    n = as_number(v)
    if n is None or isinstance(n, Status):
        return n
    how = c.args[1].name if len(c.args) > 1 and isinstance(c.args[1], Word) else "LEFT"
    s = text(n)
    if len(c.args) < 3:
        return s
    try:
        width = _int(evaluate(c.args[2], env))
    except ValueError:
        return Status.INVALID
    if how == "RIGHT":
        return s.rjust(width)
    if how in ("RIGHTZERO", "LEFTZERO"):
        sign, digits = ("-", s[1:]) if s.startswith("-") else ("", s)
        return sign + digits.rjust(width - len(sign), "0")
    return s.ljust(width)


def _if(c: Call, env: Env) -> Value:
    return evaluate(c.args[1] if truth(evaluate(c.args[0], env)) else c.args[2], env)


def _case(c: Call, env: Env) -> Value:
    value = evaluate(c.args[0], env)
    rest = c.args[1:]
    for i in range(0, len(rest) - 1, 2):
        if compare("=", value, evaluate(rest[i], env)):
            return evaluate(rest[i + 1], env)
    return evaluate(rest[-1], env) if len(rest) % 2 else Status.MISSING


def _eval(c: Call, env: Env) -> Value:
    for i in range(0, len(c.args) - 1, 2):
        if truth(evaluate(c.args[i], env)):
            return evaluate(c.args[i + 1], env)
    return evaluate(c.args[-1], env) if len(c.args) % 2 else Status.MISSING


def _valoneof(c: Call, env: Env) -> Value:
    value = evaluate(c.args[0], env)
    if value is None or isinstance(value, Status):
        return value
    return any(compare("=", value, evaluate(a, env)) for a in c.args[1:])


def _coltest(c: Call, env: Env) -> Value:
    v = evaluate(c.args[0], env)
    state = (
        "MISSING" if v is Status.MISSING
        else "INVALID" if v is Status.INVALID
        else "NULL" if v is None
        else "PRESENT"
    )  # fmt: skip
    return any(isinstance(w, Word) and w.name == state for w in c.args[1:])


def _colstat(c: Call, env: Env) -> Value:
    word = c.args[0].name if isinstance(c.args[0], Word) else "INVALID"
    return None if word == "NULL" else Status[word]


def _token(c: Call, env: Env) -> Value:
    name = evaluate(c.args[0], env)
    return env.token(name) if isinstance(name, str) else Status.INVALID


@lru_cache(maxsize=1024)
def _getenv_words(c: Call) -> tuple[str, str, str | None]:
    """(information type, key, table) of a @GETENV call (its arguments are literals)."""
    words = [str(a.value).upper() for a in c.args if isinstance(a, Lit)]
    if words[0] == "STATS" and len(words) == 4:
        return "STATS", words[3], words[2]
    return words[0], words[-1], None


def _getenv(c: Call, env: Env) -> Value:
    return env.getenv(*_getenv_words(c))


def _range(c: Call, env: Env) -> Value:
    try:
        n, total = _int(evaluate(c.args[0], env)), _int(evaluate(c.args[1], env))
    except ValueError:
        return Status.INVALID
    if total < 1 or not 1 <= n <= total:
        return Status.INVALID
    values = [evaluate(a, env) for a in c.args[2:]] if len(c.args) > 2 else env.key_values()
    data = "\x00".join("\x01" if v is None else text(v) for v in values)
    return zlib.crc32(data.encode("utf-8")) % total == n - 1


# ------------------------------------------------------------------------------ dates

_DESC = re.compile(r"YYYY|YY|MM|DD|HH|MI|SS|F+|.", re.DOTALL)
_FIELDS = {"YYYY": "year", "YY": "year2", "MM": "month", "DD": "day", "HH": "hour",
           "MI": "minute", "SS": "second"}  # fmt: skip


def _date_regex(desc: str) -> re.Pattern[str]:
    parts = []
    for m in _DESC.finditer(desc.upper()):
        tok = m.group(0)
        if tok in _FIELDS:
            width = 4 if tok == "YYYY" else 2
            parts.append(f"(?P<{_FIELDS[tok]}>\\d{{{width}}})")
        elif tok.startswith("F"):
            parts.append(f"(?P<fraction>\\d{{1,{len(tok)}}})")
        else:
            parts.append(re.escape(tok))
    return re.compile("".join(parts))


def parse_date(value: str, desc: str) -> datetime:
    d = desc.upper()
    if d in ("JTS", "JTSGMT", "JTSLCT"):
        return _EPOCH + timedelta(microseconds=int(value) - JTS_EPOCH)
    if d == "JUL":
        return _EPOCH + timedelta(days=int(value) - JTS_EPOCH // 86_400_000_000)
    m = _date_regex(desc).fullmatch(value.strip())
    if not m:
        raise ValueError(value)
    g = m.groupdict()
    year = int(g["year"]) if g.get("year") else 2000 + int(g.get("year2") or 0)
    frac = (g.get("fraction") or "0").ljust(6, "0")[:6]
    return datetime(
        year, int(g.get("month") or 1), int(g.get("day") or 1), int(g.get("hour") or 0),
        int(g.get("minute") or 0), int(g.get("second") or 0), int(frac),
    )  # fmt: skip


@lru_cache(maxsize=64)
def _desc_tokens(desc: str) -> tuple[tuple[str, str], ...]:
    """A date descriptor cut into (upper-case token, text) pairs."""
    return tuple((m.group(0).upper(), m.group(0)) for m in _DESC.finditer(desc))


def format_date(moment: datetime, desc: str) -> Value:
    d = desc.upper()
    delta = moment - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if d in ("JTS", "JTSGMT", "JTSLCT"):
        return micros + JTS_EPOCH
    if d == "JUL":
        return (micros + JTS_EPOCH) // 86_400_000_000
    out = []
    for tok, raw in _desc_tokens(desc):
        if tok == "YYYY":
            out.append(f"{moment.year:04d}")
        elif tok == "YY":
            out.append(f"{moment.year % 100:02d}")
        elif tok in _FIELDS:
            out.append(f"{getattr(moment, _FIELDS[tok]):02d}")
        elif tok.startswith("F"):
            out.append(f"{moment.microsecond:06d}"[: len(tok)].ljust(len(tok), "0"))
        else:
            out.append(raw)
    return "".join(out)


_DEFAULT_DESC = ("YYYY-MM-DD HH:MI:SS.FFFFFF", "YYYY-MM-DD:HH:MI:SS.FFFFFF",
                 "YYYY-MM-DD HH:MI:SS", "YYYY-MM-DD:HH:MI:SS", "YYYY-MM-DD")  # fmt: skip


def _any_date(v: Value) -> datetime:
    s = text(v)
    for desc in _DEFAULT_DESC:
        try:
            return parse_date(s, desc)
        except ValueError:
            continue
    raise ValueError(s)


def _date(c: Call, env: Env) -> Value:
    values = _args(c, env)
    blocked = _blocked(values)
    if blocked is not False:
        return blocked
    out_desc = text(values[0])
    moment = None
    try:
        for i in range(1, len(values) - 1, 2):
            moment = parse_date(text(values[i + 1]), text(values[i]))
        return Status.INVALID if moment is None else format_date(moment, out_desc)
    except (ValueError, OverflowError):
        return Status.INVALID


def _datediff(c: Call, env: Env) -> Value:
    values = _args(c, env)
    blocked = _blocked(values)
    if blocked is not False:
        return blocked
    try:
        delta = _any_date(values[2]) - _any_date(values[1])
    except (ValueError, OverflowError):
        return Status.INVALID
    unit = text(values[0]).upper()
    if unit == "DD":
        return delta.days
    if unit == "SS":
        return delta.days * 86_400 + delta.seconds
    return Status.INVALID


def _datenow(c: Call, env: Env) -> Value:
    return format_date(env.now(), "YYYY-MM-DD HH:MI:SS")


def _bare(c: Call, env: Env) -> Value:
    return Status.INVALID  # @PRESENT, @ABSENT, @NULL mean something only in a comparison


FUNCTIONS.update({
    "STRNUM": _strnum, "IF": _if, "CASE": _case, "EVAL": _eval, "VALONEOF": _valoneof,
    "COLTEST": _coltest, "COLSTAT": _colstat, "TOKEN": _token, "GETENV": _getenv,
    "RANGE": _range, "DATE": _date, "DATEDIFF": _datediff, "DATENOW": _datenow,
    "PRESENT": _bare, "ABSENT": _bare, "NULL": _bare,
})  # fmt: skip
