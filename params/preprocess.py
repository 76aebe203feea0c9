"""Preprocessing: OBEY, INCLUDE, MACRO definitions and invocations, ``?VAR`` substitution.

Input: a file's text. Output: the effective statements, each still mapped to the file,
line and column it came from (text produced by a macro or a substitution maps to the
invocation site), plus diagnostics. File reading and the environment are injected.

Rules (GG_REFERENCE §1):
- ``OBEY file`` reads parameters from another file; OBEY inside an OBEY-ed file is an error.
- ``INCLUDE file`` reads a macro library (it may hold parameters too, and INCLUDE others).
- ``MACRO #name [PARAMS (#p, ...)] BEGIN ... END;`` defines; ``#name (a, b)`` invokes. Every
  declared parameter must be given. Macros may invoke macros. ``MACROCHAR c`` changes ``#``.
- ``?NAME`` at the start of a word or name part, followed by a letter or underscore, is
  replaced by environment variable ``NAME`` (case-sensitive); an undefined one is an error.
  Elsewhere ``?`` is the one-character wildcard (``hr.emp?``), and ``\\?`` is a literal.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from params import textfile
from params.errors import Diagnostic, Origin, Severity
from params.grammar import GrammarError, MacroDef, parse_macro
from params.text import MacroText, Statement, lex, splice

Reader = Callable[[Path], str]

MAX_MACRO_DEPTH = 16
MAX_INCLUDE_DEPTH = 8


def read_text(path: Path) -> str:
    """Read a parameter file as GoldenGate would: bytes as UTF-8, bad bytes replaced; at most
    :data:`params.textfile.MAX_TEXT_FILE_BYTES` (``OSError`` only)."""
    return textfile.read_text(path)


@dataclass
class Context:
    env: Mapping[str, str]
    reader: Reader
    search_dirs: Sequence[Path]
    parameters: frozenset[str]
    table_options: frozenset[str]
    macros: dict[str, MacroDef] = field(default_factory=dict)
    macro_char: str = "#"
    out: list[Statement] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stack: list[Path] = field(default_factory=list)

    def error(self, code: str, message: str, origin: Origin) -> None:
        self.diagnostics.append(Diagnostic(Severity.ERROR, code, message, origin))


def preprocess(
    text: str,
    path: str,
    *,
    env: Mapping[str, str] | None = None,
    reader: Reader = read_text,
    search_dirs: Sequence[Path] = (),
    parameters: frozenset[str] = frozenset(),
    table_options: frozenset[str] = frozenset(),
) -> tuple[list[Statement], list[Diagnostic]]:
    ctx = Context(
        env=os.environ if env is None else env,
        reader=reader,
        search_dirs=search_dirs,
        parameters=parameters,
        table_options=table_options,
    )
    top = Path(path)
    if textfile.is_file(top):  # a file that INCLUDEs or OBEYs itself is a cycle, not read twice
        ctx.stack.append(top.resolve())
    _process_text(ctx, text, path, obey_depth=0, include_depth=0)
    return ctx.out, ctx.diagnostics


def _process_text(
    ctx: Context, text: str, path: str, *, obey_depth: int, include_depth: int
) -> None:
    lexed = lex(text, path, parameters=ctx.parameters, table_options=ctx.table_options)
    ctx.diagnostics.extend(lexed.diagnostics)
    _process_items(ctx, lexed.items, obey_depth=obey_depth, include_depth=include_depth)


def _process_items(
    ctx: Context, items: list[Statement | MacroText], *, obey_depth: int, include_depth: int
) -> None:
    for item in items:
        if isinstance(item, MacroText):
            _define(ctx, item.statement)
            continue
        kw = item.keyword
        if kw == "MACROCHAR":
            _macrochar(ctx, item)
            ctx.out.append(item)
        elif kw == "OBEY":
            if obey_depth > 0:
                ctx.error(
                    "obey-nested",
                    "OBEY is not allowed inside a file that was itself read by OBEY",
                    item.origin,
                )
                continue
            _read_into(ctx, item, obey_depth=obey_depth + 1, include_depth=include_depth)
        elif kw == "INCLUDE":
            if include_depth >= MAX_INCLUDE_DEPTH:
                ctx.error("include-depth", "INCLUDE files nested too deeply", item.origin)
                continue
            _read_into(ctx, item, obey_depth=obey_depth, include_depth=include_depth + 1)
        else:
            _emit(ctx, item, depth=0)


def _argument(item: Statement) -> tuple[str, int]:
    """The single argument of OBEY/INCLUDE/MACROCHAR and its offset."""
    m = re.match(r"\s*\S+\s+(\S.*?)\s*;?\s*$", item.text, re.DOTALL)
    if not m:
        return "", len(item.text)
    arg = m.group(1)
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        return arg[1:-1], m.start(1) + 1
    return arg, m.start(1)


def _macrochar(ctx: Context, item: Statement) -> None:
    arg, loc = _argument(item)
    if len(arg) != 1 or arg.isalnum() or arg.isspace():
        ctx.error("value", "MACROCHAR takes one non-alphanumeric character", item.locate(loc))
        return
    ctx.macro_char = arg


def _resolve(ctx: Context, name: str, including: str) -> Path | None:
    p = Path(os.path.expandvars(os.path.expanduser(name)))
    if p.is_absolute():
        return p if textfile.is_file(p) else None
    own = Path(including).parent
    for base in [*ctx.search_dirs, own]:
        cand = base / p
        if textfile.is_file(cand):
            return cand
    return None


def _read_into(ctx: Context, item: Statement, *, obey_depth: int, include_depth: int) -> None:
    kw = item.keyword
    name, loc = _argument(item)
    where = item.locate(loc)
    if not name:
        ctx.error("syntax", f"{kw} needs a file name", item.locate(len(item.text)))
        return
    path = _resolve(ctx, name, item.origin.path)
    if path is None:
        tried = list(dict.fromkeys([*ctx.search_dirs, Path(item.origin.path).parent.resolve()]))
        dirs = ", ".join(str(d) for d in tried)
        ctx.error("missing-file", f"{kw} file {name!r} not found (looked in {dirs})", where)
        return
    resolved = path.resolve()
    if resolved in ctx.stack:
        ctx.error("include-cycle", f"{kw} of {name!r} would read it again (a cycle)", where)
        return
    try:
        text = ctx.reader(path)
    except OSError as exc:
        ctx.error("missing-file", f"{kw} file {name!r} cannot be read: {exc.strerror}", where)
        return
    ctx.stack.append(resolved)
    try:
        _process_text(ctx, text, str(path), obey_depth=obey_depth, include_depth=include_depth)
    finally:
        ctx.stack.pop()


def _define(ctx: Context, st: Statement) -> None:
    try:
        mdef = parse_macro(st.text, ctx.macro_char)
    except GrammarError as exc:
        ctx.error("macro", exc.message, st.locate(exc.loc))
        return
    if mdef.name in ctx.macros:
        ctx.error("macro", f"macro {mdef.name} is already defined", st.origin)
        return
    ctx.macros[mdef.name] = mdef


def _emit(ctx: Context, st: Statement, depth: int) -> None:
    expanded = _expand_macros(ctx, st, depth)
    if expanded is None:
        return
    if "\n" in expanded.text:
        _relex(ctx, expanded, depth)
        return
    subst = _substitute(ctx, expanded)
    if subst is not None and subst.text.strip():
        ctx.out.append(subst)


def _relex(ctx: Context, st: Statement, depth: int) -> None:
    """Statements produced by a macro body: lexed again, all mapped to the invocation."""
    at = st.origin
    lexed = lex(st.text, at.path, parameters=ctx.parameters, table_options=ctx.table_options)
    for d in lexed.diagnostics:
        ctx.diagnostics.append(Diagnostic(d.severity, d.code, d.message, at))
    for item in lexed.items:
        if isinstance(item, MacroText):
            _define(ctx, _pin(item.statement, at))
            continue
        pinned = _pin(item, at)
        if depth + 1 > MAX_MACRO_DEPTH:
            ctx.error("macro", "macros nested too deeply (a macro invoking itself?)", at)
            return
        if _macro_re(ctx.macro_char).search(pinned.text):
            _emit(ctx, pinned, depth + 1)
        else:
            subst = _substitute(ctx, pinned)
            if subst is not None and subst.text.strip():
                ctx.out.append(subst)


def _pin(st: Statement, at: Origin) -> Statement:
    return splice(Statement("", ()), 0, 0, st.text, at) if st.text else st


def _macro_re(char: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_$#])" + re.escape(char) + r"([A-Za-z_][A-Za-z0-9_]*)")


def _expand_macros(ctx: Context, st: Statement, depth: int) -> Statement | None:
    pattern = _macro_re(ctx.macro_char)
    pos = 0
    while True:
        m = _next_outside_quotes(pattern, st.text, pos)
        if m is None:
            return st
        name = (ctx.macro_char + m.group(1)).upper()
        mdef = ctx.macros.get(name)
        after = m.end()
        j = after
        while j < len(st.text) and st.text[j] in " \t":
            j += 1
        has_args = j < len(st.text) and st.text[j] == "("
        if mdef is None:
            if has_args:
                ctx.error(
                    "macro",
                    f"macro {ctx.macro_char}{m.group(1)} is not defined "
                    "(define it with MACRO, or INCLUDE the library that does)",
                    st.locate(m.start()),
                )
                return None
            pos = m.end()
            continue
        args: list[str] = []
        end = after
        if has_args:
            close = _matching_paren(st.text, j)
            if close < 0:
                ctx.error("macro", f"unclosed '(' in call of {name}", st.locate(j))
                return None
            args = _split_args(st.text[j + 1 : close])
            end = close + 1
        if len(args) != len(mdef.params):
            ctx.error(
                "macro",
                f"macro {name} takes {len(mdef.params)} argument(s), {len(args)} given",
                st.locate(m.start()),
            )
            return None
        if depth > MAX_MACRO_DEPTH:
            ctx.error(
                "macro", "macros nested too deeply (a macro invoking itself?)", st.locate(m.start())
            )
            return None
        body = _bind(mdef, args, ctx.macro_char)
        st = splice(st, m.start(), end, body.strip(), st.locate(m.start()))
        depth += 1
        pos = m.start()


def _bind(mdef: MacroDef, args: list[str], char: str) -> str:
    if not mdef.params:
        return mdef.body
    table = dict(zip(mdef.params, args, strict=True))
    names = "|".join(re.escape(p[1:]) for p in sorted(mdef.params, key=len, reverse=True))
    rx = re.compile(re.escape(char) + "(" + names + r")(?![A-Za-z0-9_])", re.IGNORECASE)
    return rx.sub(lambda m: table[(char + m.group(1)).upper()], mdef.body)


def _matching_paren(text: str, open_at: int) -> int:
    depth = 0
    quote = ""
    for i in range(open_at, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_args(inner: str) -> list[str]:
    if not inner.strip():
        return []
    out: list[str] = []
    depth = 0
    quote = ""
    cur = ""
    for ch in inner:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    out.append(cur.strip())
    return out


def _next_outside_quotes(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
    for m in pattern.finditer(text, pos):
        if not _inside_quotes(text, m.start()):
            return m
    return None


def _inside_quotes(text: str, index: int) -> bool:
    quote = ""
    i = 0
    while i < index:
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        i += 1
    return bool(quote)


_VAR = re.compile(r"(?:(?<=^)|(?<=[\s,(.=]))\?([A-Za-z_][A-Za-z0-9_]*)")


def _substitute(ctx: Context, st: Statement) -> Statement | None:
    pos = 0
    tainted = False
    while True:
        m = _next_outside_quotes(_VAR, st.text, pos)
        if m is None:
            break
        name = m.group(1)
        if name not in ctx.env:
            ctx.error(
                "undefined-variable",
                f"environment variable {name} is not defined (needed for ?{name})",
                st.locate(m.start()),
            )
            tainted = True
            pos = m.end()
            continue
        value = ctx.env[name]
        st = splice(st, m.start(), m.end(), value, st.locate(m.start()))
        pos = m.start() + len(value)
    return dataclasses.replace(st, tainted=True) if tainted else st
