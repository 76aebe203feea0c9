"""``ALLOWOUTPUTDIR dir`` (GLOBALS): the directories a Collector may write remote trails in.

GoldenGate's form: ``ALLOWOUTPUTDIR relative_dir_name | absolute_dir_name``, one directory a
statement (the statement may repeat), a relative name being the home's; the directory and
its subdirectories are allowed, symbolic links resolved before the comparison. Checked here:
one name, no control character, not in a group's or the Manager's parameter file (an error
there: the Collector reads GLOBALS only). What the Collector does with it:
:mod:`engine.manager.outputdirs`.
"""

from __future__ import annotations

from params.builder import Builder, unquote
from params.grammar import Parsed, Tok


def h_allowoutputdir(b: Builder, p: Parsed) -> None:
    tok = p.positional[0] if p.positional else None
    if not isinstance(tok, Tok) or not tok.text:
        b.error("syntax", "ALLOWOUTPUTDIR: a directory name expected", len(p.keyword.text))
        return
    if len(p.positional) > 1 or (len(tok.text.split()) != 1 and unquote(tok.text) == tok.text):
        b.error("syntax", "ALLOWOUTPUTDIR: one directory a statement", tok.loc)
        return
    name = unquote(tok.text)
    if not name or any(ord(c) < 32 for c in name):
        b.error("syntax", "ALLOWOUTPUTDIR: not a directory name", tok.loc)
        return
    assert b.statement is not None
    b.fields.setdefault("allow_output_dirs", []).append((name, b.statement, tok.loc))
