"""VIEW PARAMS, EDIT PARAMS, VIEW REPORT, VIEW GGSEVT: the home's text files.

They are shown whatever bytes they hold: bytes that are not UTF-8 show as U+FFFD.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from engine.home.groups import GroupStore
from engine.runtime.paramcheck import check_param_file, group_of_file
from ggsci.commands import models as M
from ggsci.session import CommandFailed, Session
from ggsci.textin import read_text

DEFAULT_EDITOR = "vi"


def _is_path(target: str) -> bool:
    return "/" in target or "." in target


def param_path(session: Session, target: str) -> Path:
    """A group's parameter file (its PARAMS, else ``dirprm/<group>.prm``), or a file path."""
    if _is_path(target):
        path = Path(target).expanduser()
        return path if path.is_absolute() else session.home.root / path
    group = GroupStore(session.home).get(target)
    if group is not None:
        return group.param_file(session.home)
    return session.home.dirprm / f"{target.lower()}.prm"


def report_path(session: Session, target: str) -> Path:
    if _is_path(target):
        path = Path(target).expanduser()
        return path if path.is_absolute() else session.home.root / path
    group = GroupStore(session.home).get(target)
    if group is not None:
        return group.report_file(session.home)
    return session.home.dirrpt / f"{target.upper()}.rpt"


def _show(session: Session, path: Path, what: str) -> None:
    try:
        text = read_text(path)
    except FileNotFoundError as exc:
        raise CommandFailed(f"ERROR: {what} {path} does not exist.") from exc
    except OSError as exc:
        raise CommandFailed(f"ERROR: Cannot read {path}: {exc.strerror}.") from exc
    session.say("", text.rstrip("\n"), "")


def view_params(session: Session, cmd: M.ViewParams) -> None:
    _show(session, param_path(session, cmd.target), "Parameter file")


def view_report(session: Session, cmd: M.ViewReport) -> None:
    _show(session, report_path(session, cmd.target), "Report file")


def view_ggsevt(session: Session, _: M.ViewGgsevt) -> None:
    _show(session, session.home.ggserr_log, "Event log")


def editor_command(chosen: str | None = None) -> list[str]:
    """SET EDITOR's choice, else $VISUAL, $EDITOR, the default."""
    return shlex.split(
        chosen or os.environ.get("VISUAL") or os.environ.get("EDITOR") or DEFAULT_EDITOR
    )


def validate(session: Session, path: Path) -> None:
    """Check a saved parameter file and print every diagnostic (nothing when it is clean);
    a group's file is checked as that group's (its kind and name in its first line)."""
    whose = group_of_file(session.home, path)
    result = check_param_file(path, cwd=session.home.root, group=whose)
    if result.rendered:
        session.say(*result.rendered)
    if not result.ok:
        raise CommandFailed(f"ERROR: {path.name} has {result.errors} error(s).")


def edit_params(session: Session, cmd: M.EditParams) -> None:
    path = param_path(session, cmd.target)
    path.parent.mkdir(parents=True, exist_ok=True)
    argv = [*editor_command(session.editor_name), str(path)]
    try:
        status = session.editor(argv)
    except OSError as exc:
        raise CommandFailed(f"ERROR: Cannot run editor {argv[0]}: {exc.strerror or exc}.") from exc
    if status != 0:
        raise CommandFailed(f"ERROR: Editor {argv[0]} exited with status {status}.")
    if path.exists():
        validate(session, path)


HANDLERS: dict[type[M.Command], Any] = {
    M.ViewParams: view_params,
    M.ViewReport: view_report,
    M.ViewGgsevt: view_ggsevt,
    M.EditParams: edit_params,
}
