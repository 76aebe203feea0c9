"""GoldenGate column-conversion expressions and row conditions (pyparsing).

Pure: no I/O, no engine. The text inside ``WHERE (...)``, ``FILTER (...)``,
``TOKENS (...)`` and ``COLMAP (...)`` is parsed into a typed frozen model (:data:`Expr`
and the clause models below); :mod:`engine.expr` evaluates that model over one record.
Every node keeps ``pos``, its offset in the text given to the parser (the caller adds the
offset of the text in its statement). A mistake is returned as an :class:`ExprIssue`
(message and position), never raised: unknown functions, wrong argument counts, bad
keyword arguments and unknown ``GGS_*`` header elements are found here; unknown columns
only against a table's columns (:func:`columns_of` lists them with their positions).

``docs/grammar.md`` has this grammar as BNF: keep the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pyparsing as pp

from params.catalog import did_you_mean
from params.grammar import GrammarError

Scalar = str | int | float | None


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal: a quoted string, a number or NULL (``None``)."""

    value: Scalar
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Col:
    """A column of the record; ``image`` is ``BEFORE`` or ``AFTER`` for ``BEFORE.col``
    (``""``: the record's own image). ``name`` is upper case unless it was quoted."""

    name: str
    image: str = ""
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Header:
    """A record header element such as ``GGS_OP_TYPE`` (see :data:`HEADER_ELEMENTS`)."""

    name: str
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Word:
    """A keyword argument of a function (``@COLTEST (c, NULL)``, ``@STRNUM (n, RIGHT)``)."""

    name: str
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    """``@NAME (args)``; ``@PRESENT``, ``@ABSENT``, ``@NULL`` and ``@DATENOW`` may omit
    the parentheses."""

    name: str
    args: tuple[Expr, ...] = ()
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "-" or "NOT"
    operand: Expr
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic (``+ - * /``), comparison (``= <> < > <= >=``) or ``AND``/``OR``."""

    op: str
    left: Expr
    right: Expr
    pos: int = 0


Expr = Lit | Col | Header | Word | Call | Unary | Binary


@dataclass(frozen=True, slots=True)
class ExprIssue:
    """A mistake in an expression: one line of text and its offset."""

    message: str
    pos: int


@dataclass(frozen=True, slots=True)
class Assignment:
    """``name = expr`` of TOKENS or COLMAP; ``expr`` is None for a bare item such as
    ``USEDEFAULTS``."""

    name: str
    expr: Expr | None
    pos: int = 0


@dataclass(frozen=True, slots=True)
class Filter:
    """``FILTER ([ON op,] [IGNORE op,] [RAISEERROR n,] condition)``.

    ``on`` lists the operations the filter applies to (empty: all); records of the
    ``ignore`` operations pass untested. ``raise_error`` is the error number reported
    when a record fails the condition (a Replicat treats it as a database error)."""

    condition: Expr
    on: tuple[str, ...] = ()  # sorted (tuples: the model is shown as JSON by params show)
    ignore: tuple[str, ...] = ()
    raise_error: int | None = None

    def applies_to(self, op: str) -> bool:
        if op in self.ignore:
            return False
        return not self.on or op in self.on


# --------------------------------------------------------------------------- catalog

_ANY = 10_000
#: Function name -> (fewest, most) arguments.
ARITY: dict[str, tuple[int, int]] = {
    "GETENV": (1, 4), "TOKEN": (1, 1), "COLSTAT": (1, 1), "COLTEST": (2, _ANY),
    "IF": (3, 3), "CASE": (3, _ANY), "EVAL": (2, _ANY), "STRCAT": (1, _ANY),
    "STREXT": (3, 3), "STRSUB": (3, _ANY), "STRUP": (1, 1), "STRTRIM": (1, 1),
    "STRLTRIM": (1, 1), "STRRTRIM": (1, 1), "STRLEN": (1, 1), "STRFIND": (2, 3),
    "STRNUM": (1, 3), "NUMSTR": (1, 1), "NUMBIN": (1, 1), "COMPUTE": (1, 1),
    "DATE": (3, _ANY), "DATEDIFF": (3, 3), "DATENOW": (0, 0), "RANGE": (2, _ANY),
    "VALONEOF": (2, _ANY), "BINARY": (1, 1), "STREQ": (2, 2), "STRCMP": (2, 2),
    "STRNCMP": (3, 3), "STREXTRACT": (3, 3), "PRESENT": (0, 0), "ABSENT": (0, 0),
    "NULL": (0, 0),
}  # fmt: skip
#: Functions that may be written without parentheses.
BARE_CALLS = frozenset({"PRESENT", "ABSENT", "NULL", "DATENOW"})
#: Keyword arguments: function -> (index of the first keyword argument, allowed words).
KEYWORD_ARGS: dict[str, tuple[int, frozenset[str]]] = {
    "COLTEST": (1, frozenset({"NULL", "MISSING", "INVALID", "PRESENT"})),
    "COLSTAT": (0, frozenset({"NULL", "MISSING", "INVALID"})),
    "STRNUM": (1, frozenset({"LEFT", "LEFTZERO", "RIGHT", "RIGHTZERO"})),
}
#: @GETENV ('GGFILEHEADER', key) -> the file header token it reads (seed 003: the header's
#: tokens, COMPATIBILITY named; their names are engine/trail/layout.py's HEADER_TOKENS, which
#: tests/params/test_getenv_fileheader.py holds these to). Each token by its own name, and the
#: @GETENV reference's longer names for the positions and times of the file's records.
GGFILEHEADER_KEYS: dict[str, str] = {
    **{t.upper(): t for t in (
        "Compatibility", "CharSet", "CreationTime", "URI", "FileName", "MultiPart", "Seqno",
        "FileSize", "FirstCSN", "LastCSN", "FirstIOTime", "LastIOTime", "RecordCount",
        "HostName", "OSName", "DbVendor", "DbName", "DbInstance", "DbVersion", "DbCharSet",
        "Producer", "ProducerVersion", "GroupName", "DbUniqueName")},
    "FILESEQNO": "Seqno", "CREATETIMESTAMP": "CreationTime", "FIRSTRECCSN": "FirstCSN",
    "LASTRECCSN": "LastCSN", "FIRSTRECIOTIME": "FirstIOTime", "LASTRECIOTIME": "LastIOTime",
}  # fmt: skip
#: @GETENV information types and their keys (``STATS`` takes an operation name).
GETENV_KEYS: dict[str, frozenset[str]] = {
    "GGHEADERINFO": frozenset({
        "COMMITTIMESTAMP", "LOGPOSITION", "LOGRBA", "OBJECTNAME", "TABLENAME", "SCHEMANAME",
        "OPTYPE", "RECORDLENGTH", "TRANSACTIONINDICATOR", "BEFOREAFTERINDICATOR",
        "LOGCSN", "IOTIME"}),
    "GGENVIRONMENT": frozenset({
        "DOMAINNAME", "GROUPDESCRIPTION", "GROUPNAME", "GROUPTYPE", "HOSTNAME",
        "OSUSERNAME", "PROCESSID", "GGHOME"}),
    "TRANSACTION": frozenset({"XID", "CSN", "TIMESTAMP", "NAME", "USERID", "USERNAME",
                              "RSN"}),
    "RECORD": frozenset({"FILESEQNO", "FILERBA", "ROWID", "RSN", "TIMESTAMP"}),
    "STATS": frozenset({"INSERT", "UPDATE", "DELETE", "DML", "TRUNCATE", "DISCARD",
                        "TOTAL", "CDR_CONFLICTS"}),
    "GGFILEHEADER": frozenset(GGFILEHEADER_KEYS),
}  # fmt: skip
#: ``GGS_*`` header elements and the GGHEADERINFO / TRANSACTION key each one reads.
HEADER_ELEMENTS: dict[str, tuple[str, str]] = {
    "GGS_TRANS_TIMESTAMP": ("GGHEADERINFO", "COMMITTIMESTAMP"),
    "GGS_COMMIT_TIMESTAMP": ("GGHEADERINFO", "COMMITTIMESTAMP"),
    "GGS_OP_TYPE": ("GGHEADERINFO", "OPTYPE"),
    "GGS_COMMIT_SCN": ("TRANSACTION", "CSN"),
    "GGS_TRANS_IND": ("GGHEADERINFO", "TRANSACTIONINDICATOR"),
    "GGS_BEFORE_AFTER_IND": ("GGHEADERINFO", "BEFOREAFTERINDICATOR"),
    "GGS_TABLE_NAME": ("GGHEADERINFO", "TABLENAME"),
    "GGS_RECORD_LENGTH": ("GGHEADERINFO", "RECORDLENGTH"),
    "GGS_LOG_RBA": ("GGHEADERINFO", "LOGRBA"),
    "GGS_LOG_POSITION": ("GGHEADERINFO", "LOGPOSITION"),
    "GGS_TRANS_XID": ("TRANSACTION", "XID"),
    # seed 003, "Using Header Data": the record header's AuditRBA, the redo log sequence number
    "GGS_TRANS_RBA": ("GGHEADERINFO", "LOGRBA"),
}
OPERATIONS = frozenset({"INSERT", "UPDATE", "DELETE"})
COMPARISONS = frozenset({"=", "<>", "<", ">", "<=", ">="})


# --------------------------------------------------------------------------- grammar


def _lit_string(s: str, loc: int, t: pp.ParseResults) -> Lit:
    return Lit(str(t[0])[1:-1].replace("''", "'"), loc)


def _lit_number(s: str, loc: int, t: pp.ParseResults) -> Lit:
    text = str(t[0])
    return Lit(int(text) if text.isdigit() else float(text), loc)


def _name(s: str, loc: int, t: pp.ParseResults) -> Expr:
    text = str(t[0])
    if text.startswith('"'):
        return Col(text[1:-1], "", loc)
    up = text.upper()
    if up == "NULL":
        return Lit(None, loc)
    if up.startswith(("BEFORE.", "AFTER.")):
        image, _, col = up.partition(".")
        return Col(col, image, loc)
    if up.startswith("GGS_"):
        if up not in HEADER_ELEMENTS:
            raise GrammarError(
                f"unknown header element {text}{did_you_mean(up, list(HEADER_ELEMENTS))}", loc
            )
        return Header(up, loc)
    return Col(up, "", loc)


def _call(s: str, loc: int, t: pp.ParseResults) -> Call:
    name = str(t[0])[1:].upper()
    args = tuple(t[1:])
    if name not in ARITY:
        raise GrammarError(f"unknown function @{name}{did_you_mean(name, list(ARITY))}", loc)
    lo, hi = ARITY[name]
    if not lo <= len(args) <= hi:
        want = str(lo) if lo == hi else f"at least {lo}" if hi == _ANY else f"{lo} to {hi}"
        raise GrammarError(f"@{name} takes {want} argument(s), not {len(args)}", loc)
    args = _keyword_args(name, args)
    if name == "GETENV":
        args = _getenv_args(s, args)
        _check_getenv(args, loc)
    if name == "STRSUB" and len(args) % 2 == 0:
        raise GrammarError("@STRSUB takes a string and pairs of (from, to) strings", loc)
    return Call(name, args, loc)


def _keyword_args(name: str, args: tuple[Expr, ...]) -> tuple[Expr, ...]:
    if name not in KEYWORD_ARGS:
        return args
    first, words = KEYWORD_ARGS[name]
    last = min(first, len(args) - 1) if name == "STRNUM" else len(args) - 1
    out = list(args)
    for i in range(first, last + 1):
        a = args[i]
        word = a.name if isinstance(a, Col) and not a.image else None
        if isinstance(a, Lit) and a.value is None:
            word = "NULL"
        if word is None or word not in words:
            raise GrammarError(f"@{name} expects one of {', '.join(sorted(words))} here", a.pos)
        out[i] = Word(word, a.pos)
    return tuple(out)


#: @GETENV information types GoldenGate also spells so -> the one the engine reads.
GETENV_ALIASES: dict[str, str] = {"GGHEADER": "GGHEADERINFO"}


def _getenv_args(s: str, args: tuple[Expr, ...]) -> tuple[Expr, ...]:
    """@GETENV's arguments as literals: GoldenGate takes them in single or double quotes
    (``@GETENV ("GGHEADER", "OPTYPE")``; a double-quoted word elsewhere is a column name);
    the information type GGHEADER is GGHEADERINFO."""
    out: list[Expr] = []
    for i, a in enumerate(args):
        if isinstance(a, Col) and not a.image and s.startswith('"', a.pos):
            a = Lit(a.name, a.pos)
        if i == 0 and isinstance(a, Lit) and str(a.value).upper() in GETENV_ALIASES:
            a = Lit(GETENV_ALIASES[str(a.value).upper()], a.pos)
        out.append(a)
    return tuple(out)


def _check_getenv(args: tuple[Expr, ...], loc: int) -> None:
    if not all(isinstance(a, Lit) and isinstance(a.value, str) for a in args):
        raise GrammarError("@GETENV takes quoted strings: @GETENV ('GGHEADERINFO', 'OPTYPE')", loc)
    info = str(args[0].value).upper()  # type: ignore[union-attr]
    if info not in GETENV_KEYS:
        raise GrammarError(
            f"unknown @GETENV information type {info!r}{did_you_mean(info, list(GETENV_KEYS))}",
            args[0].pos,
        )
    if len(args) < 2:
        raise GrammarError(f"@GETENV ('{info}', ...) needs a key", loc)
    key_arg = args[-1]
    key = str(key_arg.value).upper()  # type: ignore[union-attr]
    if info == "STATS" and len(args) == 4 and str(args[1].value).upper() != "TABLE":  # type: ignore[union-attr]
        raise GrammarError("@GETENV ('STATS', 'TABLE', 'owner.table', 'op') expected", args[1].pos)
    if info != "STATS" and len(args) != 2:
        raise GrammarError(f"@GETENV ('{info}', key) takes one key", loc)
    if key not in GETENV_KEYS[info]:
        raise GrammarError(
            f"unknown @GETENV ('{info}') key {key!r}{did_you_mean(key, GETENV_KEYS[info])}",
            key_arg.pos,
        )


def _unary(s: str, loc: int, t: pp.ParseResults) -> Expr:
    op, operand = str(t[0][0]).upper(), t[0][1]
    if op == "-" and isinstance(operand, Lit) and isinstance(operand.value, int | float):
        return Lit(-operand.value, loc)
    return Unary(op, operand, loc)


def _binary(s: str, loc: int, t: pp.ParseResults) -> Expr:
    items = list(t[0])
    out: Expr = items[0]
    for i in range(1, len(items), 2):
        op = str(items[i]).upper()
        op = {"==": "=", "!=": "<>"}.get(op, op)
        out = Binary(op, out, items[i + 1], _pos(out))
    return out


def _pos(e: Expr) -> int:
    return e.pos


@cache
def _grammar() -> tuple[pp.ParserElement, pp.ParserElement, pp.ParserElement]:
    expr = pp.Forward()
    string = pp.Regex(r"'(?:[^']|'')*'").set_parse_action(_lit_string).set_name("a string")
    number = pp.Regex(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?").set_parse_action(
        _lit_number
    )
    ident = pp.Regex(r'"[^"]+"|[A-Za-z_#$][\w#$]*(?:\.[A-Za-z_#$][\w#$]*)?')
    name = ident.copy().set_parse_action(_name).set_name("a column name")
    lpar, rpar = pp.Suppress("("), pp.Suppress(")")
    fname = pp.Regex(r"@[A-Za-z_]\w*").set_name("a function")
    args = pp.Opt(pp.DelimitedList(expr))
    call = (fname + (lpar + args + rpar | pp.Empty())).set_parse_action(_call)
    operand = call | string | number | name
    not_ = pp.CaselessKeyword("NOT")
    and_, or_ = pp.CaselessKeyword("AND"), pp.CaselessKeyword("OR")
    cmp = pp.Regex(r"<=|>=|<>|!=|==|=|<|>")
    expr <<= pp.infix_notation(  # type: ignore[no-untyped-call]
        operand,
        [
            (pp.Literal("-"), 1, pp.OpAssoc.RIGHT, _unary),
            (pp.one_of("* /"), 2, pp.OpAssoc.LEFT, _binary),
            (pp.one_of("+ -"), 2, pp.OpAssoc.LEFT, _binary),
            (cmp, 2, pp.OpAssoc.LEFT, _binary),
            (not_, 1, pp.OpAssoc.RIGHT, _unary),
            (and_, 2, pp.OpAssoc.LEFT, _binary),
            (or_, 2, pp.OpAssoc.LEFT, _binary),
        ],
    )
    target = pp.Regex(r'"[^"]+"|[A-Za-z_#$][\w#$-]*').set_name("a name")
    target = target.set_parse_action(lambda s, loc, t: Word(str(t[0]), loc))
    item = pp.Group(target + pp.Opt(pp.Suppress("=") + expr))
    assignments = pp.DelimitedList(item)
    return expr, assignments, fname


def _strip_parens(text: str) -> tuple[str, int]:
    """The text inside one pair of enclosing parentheses, and its offset."""
    s = text.strip()
    lead = len(text) - len(text.lstrip())
    if s.startswith("(") and s.endswith(")"):
        return s[1:-1], lead + 1
    return text, 0


def _run(element: pp.ParserElement, text: str, base: int) -> pp.ParseResults | ExprIssue:
    try:
        return element.parse_string(text, parse_all=True)
    except GrammarError as f:
        return ExprIssue(f.message, base + f.loc)
    except pp.ParseBaseException as e:
        return ExprIssue(_syntax_message(text, e.loc), base + e.loc)
    except RecursionError:
        return ExprIssue("expression nested too deeply", base)


def _syntax_message(text: str, loc: int) -> str:
    if loc >= len(text.rstrip()):
        return "expression ends early (a missing operand or ')'?)"
    near = text[loc : loc + 20].split()[0] if text[loc:].strip() else text[loc:]
    return f"unexpected {near!r} in expression"


def parse_expression(text: str, base: int = 0) -> Expr | ExprIssue:
    """One expression (``@STRCAT (a, '-', b)``, ``v > 5 AND @PRESENT``)."""
    if not text.strip():
        return ExprIssue("empty expression", base)
    r = _run(_grammar()[0], text, base)
    if isinstance(r, ExprIssue):
        return r
    return _shift(r[0], base)


def parse_where(text: str, base: int = 0) -> Expr | ExprIssue:
    """The argument of ``WHERE (...)`` (with or without its parentheses)."""
    inner, off = _strip_parens(text)
    return parse_expression(inner, base + off)


def parse_assignments(
    text: str, base: int = 0, *, upper: bool = True
) -> tuple[Assignment, ...] | ExprIssue:
    """``(name = expr, ...)`` of TOKENS or COLMAP; bare names (USEDEFAULTS) allowed.
    Unquoted names are upper-cased when ``upper`` (columns), kept as written if not
    (token names, which Logdump shows as given)."""
    inner, off = _strip_parens(text)
    if not inner.strip():
        return ExprIssue("empty list", base + off)
    r = _run(_grammar()[1], inner, base + off)
    if isinstance(r, ExprIssue):
        return r
    out = []
    for group in r:
        target: Word = group[0]
        text = target.name
        name = text[1:-1] if text.startswith('"') else text.upper() if upper else text
        e = _shift(group[1], base + off) if len(group) > 1 else None
        out.append(Assignment(name, e, base + off + target.pos))
    return tuple(out)


def parse_filter(text: str, base: int = 0) -> Filter | ExprIssue:
    """The argument of ``FILTER (...)``: leading ``ON op``, ``IGNORE op`` and
    ``RAISEERROR n`` clauses, then the condition."""
    inner, off = _strip_parens(text)
    on: set[str] = set()
    ignore: set[str] = set()
    raise_error: int | None = None
    pos = 0
    while True:
        head = inner[pos:]
        stripped = head.lstrip()
        at = pos + len(head) - len(stripped)
        words = stripped.split(",", 1)
        clause = words[0].split()
        if (
            len(clause) == 2
            and clause[0].upper() in ("ON", "IGNORE", "RAISEERROR")
            and (len(words) == 2)
        ):
            kw, val = clause[0].upper(), clause[1].upper()
            if kw == "RAISEERROR":
                if not val.lstrip("-").isdigit():
                    return ExprIssue("RAISEERROR needs an error number", base + off + at)
                raise_error = int(val)
            elif val not in OPERATIONS:
                return ExprIssue(
                    f"FILTER {kw} takes INSERT, UPDATE or DELETE, not {clause[1]!r}",
                    base + off + at,
                )
            else:
                (on if kw == "ON" else ignore).add(val)
            pos = at + len(words[0]) + 1
            continue
        break
    cond = parse_expression(inner[pos:], base + off + pos)
    if isinstance(cond, ExprIssue):
        return cond
    return Filter(cond, tuple(sorted(on)), tuple(sorted(ignore)), raise_error)


def _shift(e: Expr, base: int) -> Expr:
    """Positions in the model are offsets in the caller's text."""
    if base == 0:
        return e
    if isinstance(e, Call):
        return Call(e.name, tuple(_shift(a, base) for a in e.args), e.pos + base)
    if isinstance(e, Unary):
        return Unary(e.op, _shift(e.operand, base), e.pos + base)
    if isinstance(e, Binary):
        return Binary(e.op, _shift(e.left, base), _shift(e.right, base), e.pos + base)
    if isinstance(e, Col):
        return Col(e.name, e.image, e.pos + base)
    if isinstance(e, Header):
        return Header(e.name, e.pos + base)
    if isinstance(e, Word):
        return Word(e.name, e.pos + base)
    return Lit(e.value, e.pos + base)


def columns_of(e: Expr | None) -> tuple[Col, ...]:
    """Every column an expression reads, in order (for checks against a table)."""
    if e is None:
        return ()
    if isinstance(e, Col):
        return (e,)
    if isinstance(e, Call):
        return tuple(c for a in e.args for c in columns_of(a))
    if isinstance(e, Unary):
        return columns_of(e.operand)
    if isinstance(e, Binary):
        return columns_of(e.left) + columns_of(e.right)
    return ()


def unknown_column(e: Expr | None, known: frozenset[str]) -> Col | None:
    """The first column of ``e`` not in ``known`` (names as the model keeps them)."""
    return next((c for c in columns_of(e) if c.name not in known), None)
