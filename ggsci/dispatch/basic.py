"""Session commands: CREATE SUBDIRS, HELP, SHELL, HISTORY, ! and FC, OBEY, ALLOWNESTED, EXIT,
and the one-line answers to Oracle-only commands."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from ggsci.commands import keywords as K
from ggsci.commands import models as M
from ggsci.commands.parse import is_blank_or_comment
from ggsci.help import help_lines
from ggsci.session import AlreadyReported, CommandFailed, ExitRequested, Session
from ggsci.textin import clean, read_text, shown
from params import textfile
from params.masking import mask_secrets

MAX_OBEY_DEPTH = 16
NESTED_OBEY = "ERROR: Nested OBEY scripts not allowed. Use ALLOWNESTED to allow nested scripts."
SUBDIR_LABELS = {
    "dirprm": "Parameter files",
    "dirrpt": "Report files",
    "dirchk": "Checkpoint files",
    "dirpcs": "Process status files",
    "dirsql": "SQL script files",
    "dirdef": "Database definitions files",
    "dirdat": "Extract data files",
    "dirtmp": "Temporary files",
    "dircrd": "Credential store files",
    "dirout": "Stdout files",
    "dirdb": "Embedded source databases",
    "BR": "Bounded Recovery files",
}
_CANONICAL = {alias: word for word, aliases in K.ABBREVIATIONS.items() for alias in aliases}


def create_subdirs(session: Session, _: M.CreateSubdirs) -> None:
    session.say("", f"Creating subdirectories under current directory {session.home.root}", "")
    for path, created in session.home.create_subdirs():
        state = "created" if created else "already exists"
        label = SUBDIR_LABELS.get(path.name, path.name)
        session.say(f"{label:<31}{path}: {state}")


def help_(session: Session, cmd: M.Help) -> None:
    topic = tuple(_CANONICAL.get(w, w) for w in cmd.topic)
    lines = help_lines(cmd.topic) or help_lines(topic)  # INFO PARAM is not INFO PARAMS
    if lines is None:
        raise CommandFailed(f"ERROR: No help for {' '.join(cmd.topic)}.")
    session.say(*lines)


def shell(session: Session, cmd: M.Shell) -> None:
    proc = subprocess.run(
        cmd.command,
        shell=True,
        cwd=session.home.root,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    output = (proc.stdout + proc.stderr).rstrip("\n")
    if output:
        session.say(output)


def history(session: Session, cmd: M.History) -> None:
    entries = list(enumerate(session.history, 1))
    if cmd.count is not None:
        entries = entries[-cmd.count :] if cmd.count else []
    session.say("GGSCI Command History", "")
    session.say(*(f"{n:>5}: {text}" for n, text in entries))


def find_in_history(history: list[str], ref: str) -> str:
    """The command ``ref`` names: '' last, 'n' number n, '-n' n back, text = last with prefix."""
    ref = ref.strip()
    if not history:
        raise CommandFailed("ERROR: The command history is empty.")
    if not ref:
        return history[-1]
    if ref.lstrip("-").isdigit():
        n = int(ref)
        index = n - 1 if n > 0 else len(history) + n
        if 0 <= index < len(history) and n != 0:
            return history[index]
        raise CommandFailed(f"ERROR: Command {ref} not found in history.")
    for text in reversed(history):
        if text.upper().startswith(ref.upper()):
            return text
    raise CommandFailed(f"ERROR: No command starting with {ref} in history.")


def apply_fc_edit(command: str, edit: str) -> str:
    """Apply one FC edit line to ``command``; its columns line up with the command's.

    ``i`` inserts the text after it (spaces included) at its column; ``r`` replaces from its
    column with the text after it; a line of ``d`` characters deletes the character above each
    ``d``; anything else overtypes the characters above its non-blank characters, one for one
    (GGSCI's FC editor; the letters are not case-sensitive).
    """
    stripped = edit.lstrip()
    if not stripped:
        return command
    col = len(edit) - len(stripped)
    padded = command.ljust(col)
    key, text = stripped[0].lower(), stripped[1:]
    if key == "d" and set(stripped.replace(" ", "")) <= {"d", "D"}:
        drop = {i for i, ch in enumerate(edit) if ch in "dD"}
        return "".join(ch for i, ch in enumerate(command) if i not in drop)
    if key == "i":
        return padded[:col] + text + padded[col:]
    if key == "r":
        return padded[:col] + text + padded[col + len(text) :]
    chars = list(command.ljust(len(edit)))
    for i, ch in enumerate(edit):
        if ch != " ":
            chars[i] = ch
    return "".join(chars).rstrip()


def recall(session: Session, cmd: M.Recall) -> None:
    text = find_in_history(session.history, cmd.ref)
    if cmd.edit:
        # The command and the ".." edit line start at the same column, as in GGSCI:
        # "GGSCI (host) 5> info mgr" above "GGSCI (host) 5..     rextract extjd".
        prefix = session.prompt().rstrip().removesuffix(">")
        while True:
            session.say(f"{prefix}> {text}")
            edit = session.read_line(f"{prefix}..")
            if edit is None or edit.strip() == "//":
                session.say("Command cancelled.")
                return
            if not edit.strip():
                break
            text = apply_fc_edit(text, edit)
    else:
        session.say(text)
    outcome = session.run(text)
    if outcome.exit:
        raise ExitRequested
    if not outcome.ok:
        raise AlreadyReported("recalled command failed")


def _obey_path(session: Session, name: str) -> Path:
    path = Path(name).expanduser()
    if path.is_absolute() or textfile.exists(path):
        return path
    return session.home.root / path


def obey(session: Session, cmd: M.Obey) -> None:
    if session.obey_depth > 0 and not session.allow_nested:
        raise CommandFailed(NESTED_OBEY)
    if session.obey_depth >= MAX_OBEY_DEPTH:
        raise CommandFailed(f"ERROR: OBEY nesting is limited to {MAX_OBEY_DEPTH} levels.")
    path = _obey_path(session, cmd.path)
    try:
        lines = read_text(path).splitlines()
    except OSError as exc:
        raise CommandFailed(f"ERROR: Cannot open obey file {cmd.path} ({exc.strerror}).") from exc
    failed = 0
    session.obey_depth += 1
    try:
        for line in lines:
            if is_blank_or_comment(line):
                continue
            session.say(f"{session.prompt()}{shown(mask_secrets(clean(line.strip())))}")
            outcome = session.run(line)
            session.say("")
            failed += not outcome.ok
            if outcome.exit:
                raise ExitRequested
    finally:
        session.obey_depth -= 1
    session.say(f"End of obey file {cmd.path}.")
    if failed:
        raise AlreadyReported(f"{failed} command(s) in {cmd.path} failed")


def allow_nested(session: Session, cmd: M.AllowNested) -> None:
    session.allow_nested = cmd.allow


def exit_(session: Session, _: M.Exit) -> None:
    raise ExitRequested


def not_offered(session: Session, cmd: M.NotOffered) -> None:
    from ggsci.dispatch.pgsource import handled

    if handled(session, cmd):  # REGISTER / TRANDATA after a PostgreSQL DBLOGIN
        return
    line = f"{cmd.command}: {cmd.reason}"
    if cmd.failure:
        raise CommandFailed(f"ERROR: {line}")
    session.say(line)


HANDLERS: dict[type[M.Command], Any] = {
    M.CreateSubdirs: create_subdirs,
    M.Help: help_,
    M.Shell: shell,
    M.History: history,
    M.Recall: recall,
    M.Obey: obey,
    M.AllowNested: allow_nested,
    M.Exit: exit_,
    M.NotOffered: not_offered,
}
