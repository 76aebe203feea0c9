"""Syntax highlighting of the command line, from the same keyword tables as the grammar."""

from __future__ import annotations

import re
from collections.abc import Callable

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.styles import Style

from ggsci.commands import keywords as K

TOKEN_RE = re.compile(r"'[^']*'?|\"[^\"]*\"?|[^\s,]+|[\s,]+")
KEYWORDS: frozenset[str] = frozenset(
    [
        *K.VERBS,
        *(w for objs in K.VERB_OBJECTS.values() for w in objs),
        *K.GROUP_OPTIONS,
        *K.TRAIL_OPTIONS,
        *K.INFO_OPTIONS,
        *K.START_OPTIONS,
        *K.LAG_OPTIONS,
        *K.DBLOGIN_OPTIONS,
        *K.CREDENTIAL_ACTIONS,
        *K.CREDENTIAL_OPTIONS,
        "NOW",
        "USER",
        *(a for aliases in K.ABBREVIATIONS.values() for a in aliases),
    ]
)

STYLE = Style.from_dict(
    {
        "verb": "bold ansicyan",
        "keyword": "ansicyan",
        "number": "ansiyellow",
        "string": "ansigreen",
        "error": "ansired underline",
        "comment": "ansibrightblack",
    }
)


def classify(line: str) -> list[tuple[str, str]]:
    """``(style class, text)`` for each token of ``line`` (pure; the Lexer wraps it)."""
    if line.lstrip().startswith(("--", "#")):
        return [("class:comment", line)]
    out: list[tuple[str, str]] = []
    first = True
    for m in TOKEN_RE.finditer(line):
        tok = m.group(0)
        if tok.isspace() or tok.strip(" ,") == "":
            out.append(("", tok))
            continue
        up = tok.upper()
        if first:
            style = "class:verb" if up in K.VERB_OBJECTS or tok.startswith("!") else "class:error"
            first = False
        elif tok[0] in "'\"":
            style = "class:string"
        elif tok.isdigit():
            style = "class:number"
        elif up in KEYWORDS:
            style = "class:keyword"
        else:
            style = ""
        out.append((style, tok))
    return out


class GGSCILexer(Lexer):
    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        lines = document.lines

        def get_line(number: int) -> StyleAndTextTuples:
            return list(classify(lines[number])) if number < len(lines) else []

        return get_line
