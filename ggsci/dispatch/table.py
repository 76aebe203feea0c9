"""Command type → handler, and the one place a command line is executed.

:func:`execute` is the REPL boundary: it records the line in the history, logs it to
``ggserr.log`` (OGG-00987, passwords masked), parses it, dispatches through :data:`HANDLERS`, and
turns every failure into one printed line. An unexpected exception is written with its
traceback to the debug log and shown as one line; it never reaches the user as a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engine.runtime.events import ggsci_command, log_event
from ggsci.commands import models as M
from ggsci.commands.parse import is_blank_or_comment, parse_command, render_error
from ggsci.dispatch import basic, cptable, creds, files, groups, heartbeat, operator, processes
from ggsci.session import AlreadyReported, CommandFailed, ExitRequested, Outcome, Session
from ggsci.textin import clean, too_long
from params.masking import mask_secrets

log = logging.getLogger("ggsci")

Handler = Callable[[Session, Any], None]

HANDLERS: dict[type[M.Command], Handler] = {
    **basic.HANDLERS,
    **cptable.HANDLERS,
    **creds.HANDLERS,
    **files.HANDLERS,
    **groups.HANDLERS,
    **heartbeat.HANDLERS,
    **operator.HANDLERS,
    **processes.HANDLERS,
}


def log_command(session: Session, line: str) -> None:
    try:
        log_event(
            session.home.ggserr_log,
            ggsci_command(session.user, mask_secrets(line.strip())),
            session.clock,
        )
    except OSError:
        log.debug("cannot write ggserr.log in %s", session.home.root, exc_info=True)


def execute(session: Session, line: str, record: bool = True) -> Outcome:
    """Run one command line in ``session``; returns whether it succeeded and whether to exit."""
    if is_blank_or_comment(line):
        return Outcome(True)
    text = clean(line.strip())
    refused = too_long(text)
    if refused is not None:
        session.say(f"ERROR: {refused}")
        return Outcome(False)
    if record and not (text.startswith("!") or text.upper().split()[0] in ("FC",)):
        session.history.append(text)
    log_command(session, text)
    try:
        command = parse_command(text)
    except M.CommandError as exc:
        session.say(render_error(text, exc))
        return Outcome(False)
    handler = HANDLERS.get(type(command))
    try:
        if handler is None:
            raise CommandFailed(f"ERROR: {type(command).__name__} is not implemented.")
        handler(session, command)
    except AlreadyReported:
        return Outcome(False)
    except CommandFailed as exc:
        session.say(str(exc))
        return Outcome(False)
    except ExitRequested:
        return Outcome(True, exit=True)
    except KeyboardInterrupt:
        session.say("Command interrupted.")
        return Outcome(False)
    except BrokenPipeError:  # the reader of our output is gone (| head): nothing to report
        raise
    except Exception as exc:
        log.exception("command failed: %s", mask_secrets(text))
        session.say(f"ERROR: {type(exc).__name__}: {exc} (details in the debug log).")
        return Outcome(False)
    return Outcome(True)


def bind(session: Session) -> Session:
    """Give ``session`` its executor (for OBEY, ! and FC) and return it."""
    session.execute = lambda line: execute(session, line)
    return session
