"""Parse one GGSCI command line into a typed command; errors carry the column.

:func:`parse_command` is the only way in: it maps pyparsing's exceptions to
:class:`~ggsci.commands.models.CommandError` (``raise ... from``), so no parser internals leave
this package. :func:`render_error` draws the one-line message with a caret under the fault.
"""

from __future__ import annotations

import re

import pyparsing as pp

from ggsci.commands import models as M
from ggsci.commands.grammar import COMMAND, VERB_EXPECTS
from ggsci.commands.keywords import VERBS
from ggsci.textin import MAX_COMMAND_LENGTH, too_long
from params.masking import MASK, has_secret, mask_secrets

COMMENT_PREFIXES = ("--", "#")


def is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith(COMMENT_PREFIXES)


def parse_command(line: str) -> M.Command:
    """The command on ``line`` (no newline, not blank); raises ``CommandError``."""
    text = line.rstrip()
    refused = too_long(text)
    if refused is not None:
        raise M.CommandError(refused, MAX_COMMAND_LENGTH)
    try:
        result = COMMAND.parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        raise _to_error(text, exc) from exc
    command = result[-1]
    if not isinstance(command, M.Command):  # every production ends in a command object
        raise M.CommandError("incomplete command.", len(text))
    return command


def _to_error(text: str, exc: pp.ParseBaseException) -> M.CommandError:
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    if first.upper() not in VERBS and not first.startswith("!"):
        col = len(text) - len(text.lstrip())
        return M.CommandError(f"Invalid command: {first}. HELP lists the commands.", col)
    col = exc.loc
    while 0 < col < len(text) and _word_char(text[col]) and _word_char(text[col - 1]):
        col -= 1
    while col < len(text) and (text[col].isspace() or text[col] == ","):
        col += 1
    match = re.match(r"[^\s,]+|,", text[col:])
    found = match.group(0) if match else ""
    expected = str(exc.msg)
    verb = first.upper()
    second = len(text) - len(text[len(first) :].lstrip())
    if verb in VERB_EXPECTS and col <= second:
        expected = VERB_EXPECTS[verb]
    if expected.startswith("Expected "):
        expected = expected[len("Expected ") :]
    what = f"found '{found}'" if found else "the command ends"
    if expected.startswith("end of command"):
        return M.CommandError(f"Unexpected '{found}'.", col)
    return M.CommandError(f"Expected {expected}, {what}.", col)


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$#"


def render_error(line: str, error: M.CommandError) -> str:
    """``ERROR: message (column n)`` then the line and a caret under the fault; a line that
    holds a password (:func:`params.masking.has_secret`) is shown masked, without the caret
    (the mask moves the columns), and what the message quotes of it as ``'********'``: a
    malformed one is quoted in pieces (``postgresql://u:my secret@h``: ``'secret@h'``)."""
    col = max(0, min(error.column, len(line)))
    if has_secret(line):
        message = re.sub(r"'[^']*'", f"'{MASK}'", error.message)
        return f"ERROR: {message} (column {col + 1})\n  {mask_secrets(line)}"
    return f"ERROR: {error.message} (column {col + 1})\n  {line}\n  {' ' * col}^"
