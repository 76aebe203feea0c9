"""Lexical layer: physical lines to logical statements, each with a position map.

GoldenGate's reading rules (GG_REFERENCE §1): ``--`` starts a comment anywhere outside
quotes; a line whose first word is ``COMMENT`` is a comment; a line ending in ``&`` is
continued on the next; ``TABLE``/``MAP``/``SEQUENCE``/... statements end with ``;`` and may
span lines without ``&``; ``MACRO ... BEGIN ... END;`` blocks span lines. CRLF, CR and LF
line ends, tabs and a missing final newline are all accepted.

A :class:`Statement` keeps, for every character of its joined text, where it came from, so
that errors found by the grammar later point at the exact file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from params.errors import Diagnostic, Origin, Severity

#: Statements that run until ``;`` rather than to the end of the line.
SEMICOLON_STATEMENTS = frozenset(
    {"TABLE", "MAP", "SEQUENCE", "FILE", "QUERY", "TABLEEXCLUDE", "MAPEXCLUDE", "SEQUENCEEXCLUDE"}
)
#: Of those, the ones whose ``;`` is optional (GoldenGate documents none for them).
SEMICOLON_OPTIONAL = frozenset({"TABLEEXCLUDE", "MAPEXCLUDE", "SEQUENCEEXCLUDE"})

_WORD = re.compile(r"[A-Za-z_#?][A-Za-z0-9_$#]*")
_MACRO_END = re.compile(r"\bEND\s*;", re.IGNORECASE)


@dataclass(frozen=True)
class Segment:
    """A run of statement text that starts at ``start`` and came from ``origin``.

    A ``synthetic`` segment (text produced by a macro or a substitution) maps every one of
    its characters to the origin itself: the invocation site.
    """

    start: int
    origin: Origin
    synthetic: bool = False


@dataclass(frozen=True)
class Statement:
    """One logical statement. ``tainted`` marks one whose text could not be completed (an
    undefined ``?VAR``): it is still read, for the model's sake, but its own errors would
    only echo the one already reported, so they are not."""

    text: str
    segments: tuple[Segment, ...]
    tainted: bool = False

    def locate(self, index: int) -> Origin:
        """The origin of character ``index`` (clamped to the text)."""
        index = max(0, min(index, max(len(self.text) - 1, 0)))
        seg = self.segments[0]
        for s in self.segments:
            if s.start <= index:
                seg = s
            else:
                break
        if seg.synthetic:
            return seg.origin
        return seg.origin.shifted(index - seg.start)

    @property
    def origin(self) -> Origin:
        return self.locate(self._first_nonblank())

    def _first_nonblank(self) -> int:
        m = re.search(r"\S", self.text)
        return m.start() if m else 0

    @property
    def keyword(self) -> str:
        m = _WORD.match(self.text.lstrip())
        return m.group(0).upper() if m else ""

    def sub(self, start: int, end: int) -> Statement:
        """The statement made of ``text[start:end]``, positions kept."""
        return _slice(self, start, end)


def _slice(stmt: Statement, start: int, end: int) -> Statement:
    segs: list[Segment] = []
    for i, s in enumerate(stmt.segments):
        s_end = stmt.segments[i + 1].start if i + 1 < len(stmt.segments) else len(stmt.text)
        lo, hi = max(s.start, start), min(s_end, end)
        if lo >= hi and not (lo == hi == start and not segs and s.start <= start < s_end):
            continue
        origin = s.origin if s.synthetic else s.origin.shifted(lo - s.start)
        segs.append(Segment(lo - start, origin, s.synthetic))
    if not segs:
        segs = [Segment(0, stmt.locate(start), True)]
    return Statement(stmt.text[start:end], tuple(segs))


def splice(stmt: Statement, start: int, end: int, new: str, origin: Origin | None) -> Statement:
    """Replace ``text[start:end]`` with ``new``; the new text maps to ``origin`` (synthetic)."""
    at = origin or stmt.locate(start)
    before = _slice(stmt, 0, start) if start > 0 else None
    after = _slice(stmt, end, len(stmt.text)) if end < len(stmt.text) else None
    segs: list[Segment] = list(before.segments) if before else []
    if new:
        segs.append(Segment(start, at, True))
    if after:
        shift = start + len(new)
        segs.extend(Segment(s.start + shift, s.origin, s.synthetic) for s in after.segments)
    if not segs:
        segs = [Segment(0, at, True)]
    return Statement(stmt.text[:start] + new + stmt.text[end:], tuple(segs))


@dataclass(frozen=True)
class MacroText:
    """A ``MACRO`` definition as read: its whole text (header and body) with positions."""

    statement: Statement


@dataclass
class LexResult:
    items: list[Statement | MacroText] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def split_lines(text: str) -> list[str]:
    """Physical lines; CRLF, CR and LF all end a line; a missing final newline is fine."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def strip_comment(line: str) -> str:
    """The line without a trailing ``--`` comment (quotes respected)."""
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "-" and line.startswith("--", i):
            return line[:i]
        i += 1
    return line


def _top_level_semicolon(text: str) -> int:
    """Index of the first ``;`` outside quotes and parentheses, or -1."""
    quote = ""
    depth = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            return i
        i += 1
    return -1


class _Builder:
    """Accumulates the pieces of one logical statement."""

    def __init__(self) -> None:
        self.text = ""
        self.segments: list[Segment] = []

    def add(self, piece: str, origin: Origin) -> None:
        if self.text and piece:
            self.text += " "
        if piece:
            self.segments.append(Segment(len(self.text), origin))
            self.text += piece

    def build(self) -> Statement:
        return Statement(self.text, tuple(self.segments))

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def lex(
    text: str,
    path: str,
    *,
    parameters: frozenset[str] = frozenset(),
    table_options: frozenset[str] = frozenset(),
) -> LexResult:
    """Split a file's text into statements and macro definitions.

    Inside an unterminated ``TABLE``/``MAP`` statement a line may start with one of the
    statement's options (``table_options``); a line that starts with any other known
    parameter name (``parameters``) closes the statement with an "unterminated" error
    instead of being swallowed. The caller passes both sets: this module holds no
    parameter catalogue.
    """
    result = LexResult()
    lines = split_lines(text)
    pending: _Builder | None = None
    pending_kind = ""  # "", "semi", "amp", "macro"
    macro_lines: _Builder | None = None

    def close(b: _Builder) -> None:
        if not b.empty:
            result.items.append(b.build())

    for lineno, raw in enumerate(lines, start=1):
        if macro_lines is not None:
            code = strip_comment(raw)
            m = _MACRO_END.search(code)
            if m:
                macro_lines.text += "\n" + code[: m.end()]
                macro_lines.segments.append(
                    Segment(len(macro_lines.text) - m.end(), Origin(path, lineno, 1, raw))
                )
                result.items.append(MacroText(macro_lines.build()))
                macro_lines = None
                rest = code[m.end() :]
                if rest.strip():
                    col = m.end() + 1
                    _lex_code(rest, lineno, col, raw, path, result)
            else:
                start = len(macro_lines.text) + 1
                macro_lines.text += "\n" + code
                macro_lines.segments.append(Segment(start, Origin(path, lineno, 1, raw)))
            continue

        code = strip_comment(raw)
        stripped = code.strip()
        first = _first_word(stripped)

        if pending is not None and pending_kind == "semi":
            if not stripped:
                continue
            if (
                first in parameters
                and first not in table_options
                and not pending.text.rstrip().endswith(",")
            ):
                _unterminated(pending, result)
                pending = None
                pending_kind = ""
            else:
                lead = len(code) - len(code.lstrip())
                pending, pending_kind = _feed_semi(
                    pending, code[lead:], lineno, lead + 1, raw, path, result
                )
                continue

        if pending is None and first == "COMMENT":
            continue
        if pending is None and first == "MACRO":
            lead = len(code) - len(code.lstrip())
            m = _MACRO_END.search(code)
            b = _Builder()
            b.segments.append(Segment(0, Origin(path, lineno, lead + 1, raw)))
            if m:
                b.text = code[lead : m.end()]
                result.items.append(MacroText(b.build()))
                rest = code[m.end() :]
                if rest.strip():
                    _lex_code(rest, lineno, m.end() + 1, raw, path, result)
            else:
                b.text = code[lead:]
                macro_lines = b
            continue
        if not stripped and pending is None:
            continue

        lead = len(code) - len(code.lstrip())
        body = code.rstrip()[lead:]
        continued = body.endswith("&")
        if continued:
            body = body[:-1].rstrip()
        if pending is None:
            pending = _Builder()
        pending.add(body, Origin(path, lineno, lead + 1, raw))
        if continued:
            pending_kind = "amp"
            continue
        kw = _first_word(pending.text)
        if kw in SEMICOLON_STATEMENTS:
            full = pending
            pending = None
            pending, pending_kind = _resplit_semi(full, result)
            continue
        _finish_plain(pending, result)
        pending = None
        pending_kind = ""

    if macro_lines is not None:
        st = macro_lines.build()
        result.diagnostics.append(
            Diagnostic(Severity.ERROR, "unterminated", "MACRO definition has no END;", st.origin)
        )
    if pending is not None:
        if pending_kind == "semi" and not pending.empty:
            _unterminated(pending, result)
        elif not pending.empty:
            if pending_kind == "amp":
                st = pending.build()
                result.diagnostics.append(
                    Diagnostic(
                        Severity.ERROR,
                        "unterminated",
                        "line continued with '&' but the file ends",
                        st.locate(len(st.text)),
                    )
                )
            close(pending)
    return result


def _first_word(text: str) -> str:
    m = _WORD.match(text.lstrip())
    return m.group(0).upper() if m else ""


def _finish_plain(b: _Builder, result: LexResult) -> None:
    """A non-``;`` statement: a trailing ``;`` is tolerated and dropped."""
    st = b.build()
    t = st.text.rstrip()
    if t.endswith(";") and _first_word(t) not in SEMICOLON_STATEMENTS:
        st = _slice(st, 0, len(t) - 1)
    if st.text.strip():
        result.items.append(st)


def _resplit_semi(b: _Builder, result: LexResult) -> tuple[_Builder | None, str]:
    """Cut complete ``...;`` statements off ``b``; return what remains open."""
    st = b.build()
    while True:
        idx = _top_level_semicolon(st.text)
        if idx < 0:
            break
        head = _slice(st, 0, idx + 1)
        if head.text.strip():
            result.items.append(head)
        rest_start = idx + 1
        if rest_start >= len(st.text) or not st.text[rest_start:].strip():
            return None, ""
        while st.text[rest_start].isspace():
            rest_start += 1
        st = _slice(st, rest_start, len(st.text))
        if _first_word(st.text) not in SEMICOLON_STATEMENTS:
            result.items.append(st)
            return None, ""
    nb = _Builder()
    nb.text = st.text
    nb.segments = list(st.segments)
    return nb, "semi"


def _feed_semi(
    b: _Builder, piece: str, lineno: int, col: int, raw: str, path: str, result: LexResult
) -> tuple[_Builder | None, str]:
    body = piece.rstrip()
    continued = body.endswith("&")
    if continued:
        body = body[:-1].rstrip()
    b.add(body, Origin(path, lineno, col, raw))
    return _resplit_semi(b, result)


def _lex_code(code: str, lineno: int, col: int, raw: str, path: str, result: LexResult) -> None:
    """Lex the rest of a line (after a one-line ``MACRO ... END;``) as ordinary text."""
    sub = lex(" " * (col - 1) + code, path)  # one physical line: no catalogue needed
    for item in sub.items:
        if isinstance(item, Statement):
            segs = tuple(
                Segment(s.start, Origin(path, lineno, s.origin.col, raw), s.synthetic)
                for s in item.segments
            )
            result.items.append(Statement(item.text, segs))
        else:
            result.items.append(item)
    result.diagnostics.extend(sub.diagnostics)


def _unterminated(b: _Builder, result: LexResult) -> None:
    st = b.build()
    end = len(st.text.rstrip())
    kw = _first_word(st.text)
    if kw in SEMICOLON_OPTIONAL:
        result.items.append(st)
        return
    where = st.locate(end - 1)
    result.diagnostics.append(
        Diagnostic(
            Severity.ERROR,
            "unterminated",
            f"{kw} statement is not terminated by ';'",
            where.shifted(1),
        )
    )
    result.items.append(st)


def iter_statements(items: list[Statement | MacroText]) -> Iterator[Statement]:
    for it in items:
        if isinstance(it, Statement):
            yield it
