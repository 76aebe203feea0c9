"""The operator's commands: ENCRYPT PASSWORD, SET EDITOR, VERSIONS, SHOW, CLEANUP, and
INFO PARAM / GETPARAMINFO (what ggsci knows of a parameter)."""

from __future__ import annotations

import platform
import sqlite3
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.home.checkpoints import checkpoint_path
from engine.home.groups import GroupDef, checked_checkpoints
from engine.home.jsonfile import write_json
from engine.home.trust import BadFile
from ggsci.commands import models as M
from ggsci.dispatch.groups import resolve
from ggsci.dispatch.processes import _each
from ggsci.session import CommandFailed, Session

SHOW_DIRS = (
    ("Reports (.rpt)", "dirrpt"),
    ("Parameters (.prm)", "dirprm"),
    ("Replicat Checkpoints (.cpr)", "dirchk"),
    ("Extract Checkpoints (.cpe)", "dirchk"),
    ("Process Status (.pcs)", "dirpcs"),
    ("Trails", "dirdat"),
    ("Embedded databases", "dirdb"),
    ("Temporary files", "dirtmp"),
    ("Credential store files", "dircrd"),
)


def encrypt_password(session: Session, cmd: M.EncryptPassword) -> None:
    from ggsci.encrypt import DEFAULT_ALGORITHM, EncryptError, encrypt_password, key_material

    algorithm = cmd.algorithm or DEFAULT_ALGORITHM
    try:
        material = key_material(session.home, cmd.key)
    except EncryptError as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc
    key = "DEFAULT key" if cmd.key.upper() == "DEFAULT" else f"key {cmd.key}"
    session.say(
        f"Using {algorithm} encryption with {key}.",
        f"Encrypted password:  {encrypt_password(cmd.password, material, algorithm)}",
        f"Algorithm used:  {algorithm}",
    )


def set_editor(session: Session, cmd: M.SetEditor) -> None:
    session.editor_name = cmd.editor


def _version() -> str:
    try:
        return metadata.version("ggsci")
    except metadata.PackageNotFoundError:
        return "unknown"


def versions(session: Session, _: M.Versions) -> None:
    uname = platform.uname()
    session.say(
        f"ggsci {_version()} (Python {platform.python_version()})",
        "",
        "Operating System:",
        uname.system,
        f"Version {uname.version}, Release {uname.release}",
        f"Node: {session.host}",
        f"Machine: {uname.machine}",
    )
    login = session.login
    if login is None:
        return
    session.say("", "Database:", _database_version(login.kind, login.target, login.password))


def _database_version(kind: str, target: str, password: str | None) -> str:
    if kind == "embedded":
        return f"ggsci embedded source database {Path(target).name} (redo-logged, SQL subset)"
    if kind == "sqlite":
        return f"SQLite {sqlite3.sqlite_version}"
    try:
        from engine.targets.pgconnect import pg_connect

        with pg_connect(target, password=password, connect_timeout=5) as conn:
            row = conn.execute("select version()").fetchone()
        return str(row[0]) if row else "PostgreSQL"
    except Exception as exc:  # psycopg's errors: one line, the login may have expired
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"PostgreSQL (version not available: {first})"


def show(session: Session, _: M.Show) -> None:
    home = session.home
    from ggsci.dispatch.files import editor_command

    session.say(
        "Parameter settings:",
        "",
        "SET SUBDIRS    ON",
        "SET DEBUG      OFF",
        "",
        f"Current directory: {home.root}",
        "",
        "Using subdirectories for all process files",
        "",
        f"Editor:  {' '.join(editor_command(session.editor_name))}",
        "",
        *(f"{label:<31}{home.root / sub}" for label, sub in SHOW_DIRS),
    )


def cleanup(session: Session, cmd: M.Cleanup) -> None:
    """CLEANUP: the run history kept in the checkpoint file goes, but for SAVE n runs."""
    from ggsci.dispatch.groups import _running_guard

    def clean(group: GroupDef) -> None:
        _running_guard(session, group, "CLEANUP")
        try:
            cps = checked_checkpoints(session.home, group.kind, group.name)
        except BadFile as exc:  # a damaged file is not rewritten: said, on its own line
            raise CommandFailed(f"ERROR: {exc}") from exc
        if cps is not None and len(cps.history) > cmd.save:  # the positions stay as they are
            kept = replace(cps, history=cps.history[: cmd.save])
            write_json(checkpoint_path(session.home, group.kind, group.name), kept.to_json())
        session.say(f"Deleted {group.kind} {group.name} run history.")

    _each(session, resolve(session, cmd.kind, cmd.pattern), clean)


def param_info(session: Session, cmd: M.ParamInfo) -> None:
    from params.build import all_parameters, engine_parameters
    from params.catalog import data_specs, did_you_mean

    known = all_parameters()
    acted = engine_parameters()
    if cmd.name is not None and cmd.name not in known:
        raise CommandFailed(
            f"ERROR: {cmd.name} is not a GoldenGate parameter{did_you_mean(cmd.name, known)}."
        )
    names = [cmd.name] if cmd.name else sorted(known)
    specs = data_specs()
    lines: list[str] = []
    if cmd.name is not None:
        lines = [*_one_param(cmd.name), ""]
        names = []
    for name in names:
        lines += [f"Parameter:  {name}"]
        if name in acted:
            lines.append("Status:     acted on by ggsci's processes")
        else:
            lines.append("Status:     accepted with a 'not used by this engine' warning")
        spec = specs.get(name)
        if spec is not None:
            if spec.positional:
                lines.append(f"Arguments:  {' '.join(spec.positional)}")
            if spec.options:
                opts = ", ".join(f"{k} ({v})" for k, v in sorted(spec.options.items()))
                lines.append(f"Options:    {opts}")
        lines.append("")
    if cmd.file is None:
        session.say(*lines[:-1])
        return
    path = Path(cmd.file) if Path(cmd.file).is_absolute() else session.home.root / cmd.file
    try:
        path.write_text("\n".join(lines))
    except OSError as exc:
        raise CommandFailed(f"ERROR: Cannot write {cmd.file}: {exc.strerror}.") from exc
    session.say(f"Parameter information of {len(names)} parameter(s) written to {cmd.file}.")


STATUS_WORDS = {
    "acts": "acted on by ggsci's processes",
    "accepted, not used (warning)": "accepted with a 'not used by this engine' warning",
    "refused (error)": "refused by the checker (an error)",
}


def _one_param(name: str) -> list[str]:
    """INFO PARAM name: what the checker makes of it (asked of the checker itself, as
    docs/params.md is): its status, the kinds of file that take it, each option's status."""
    from params.doclist import components_of, entries_of

    own, *options = entries_of(name)
    lines = [
        f"{'param name':<14}: {name.lower()}",
        f"{'status':<14}: {STATUS_WORDS[own.status]}",
        f"{'component(s)':<14}: {', '.join(components_of(own)) or 'none'}",
    ]
    if own.statement and own.status != "refused (error)":
        lines.append(f"{'example':<14}: {own.statement}")
    if not options:
        return [*lines, f"{'options':<14}: none"]
    lines.append(f"{'options':<14}:")
    width = max(len(o.option) for o in options)
    lines += [f"  {o.option:<{width}}  {STATUS_WORDS[o.status]}" for o in options]
    return lines


HANDLERS: dict[type[M.Command], Any] = {
    M.EncryptPassword: encrypt_password,
    M.SetEditor: set_editor,
    M.Versions: versions,
    M.Show: show,
    M.Cleanup: cleanup,
    M.ParamInfo: param_info,
}
