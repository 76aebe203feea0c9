"""Process control: START/STOP/INFO/STATUS MANAGER, SEND MANAGER, and START / STOP / KILL /
LAG / SEND for groups. Replies follow GGSCI's echo conventions (``Sending START request to
MANAGER ...``, ``Sending STOP request to EXTRACT EXT1 ...``); the work happens in the Manager
and in the group processes, over the sockets in ``dirpcs/``."""

from __future__ import annotations

from typing import Any

from engine.home.groups import GroupDef
from engine.runtime.control import (
    ControlError,
    group_process,
    group_request,
    manager_info,
    manager_request,
    start_manager,
    stop_manager,
)
from engine.runtime.ipc import Reply
from engine.runtime.stats import StatsRequest
from ggsci.commands import models as M
from ggsci.dispatch.groups import resolve
from ggsci.session import AlreadyReported, CommandFailed, Session

STOP_MANAGER_QUESTION = (
    "Manager process is required by other GGS processes.\nAre you sure you want to stop it (y/n)?"
)


def _fail(exc: ControlError) -> CommandFailed:
    return CommandFailed(f"ERROR: {exc}")


def manager(session: Session, cmd: M.ManagerCommand) -> None:
    home = session.home
    if cmd.action == "START":
        try:
            start_manager(home)
        except ControlError as exc:
            raise _fail(exc) from exc
        session.say("Manager started.")
    elif cmd.action == "STOP":
        if manager_info(home) is None:
            raise CommandFailed("ERROR: Manager not currently running.")
        if not cmd.force and not session.confirm(STOP_MANAGER_QUESTION):
            return
        session.say("Sending STOP request to MANAGER ...")
        try:
            reply = stop_manager(home)
        except ControlError as exc:
            raise _fail(exc) from exc
        session.say(*reply.lines)
    else:
        info = manager_info(home)
        if info is None:
            session.say("Manager is DOWN!")
        else:
            session.say(
                f"Manager is running (IP port {session.host}.{info.port}, Process ID {info.pid})."
            )


def send_manager(session: Session, cmd: M.SendManager) -> None:
    text = cmd.request or "CHILDSTATUS"
    if manager_info(session.home) is None:
        raise CommandFailed("ERROR: Manager not currently running.")
    session.say("", f"Sending {text.split()[0].upper()} request to MANAGER ...", "")
    try:
        reply = manager_request(session.home, text)
    except ControlError as exc:
        raise _fail(exc) from exc
    _show(session, reply)


def _show(session: Session, reply: Reply) -> None:
    if reply.ok:
        session.say(*reply.lines)
    else:
        raise CommandFailed("\n".join(reply.lines))


def _each(session: Session, groups: list[GroupDef], action: Any) -> None:
    """Run ``action`` per group; report every failure, fail the command if any failed."""
    errors: list[str] = []
    for group in groups:
        try:
            action(group)
        except (ControlError, CommandFailed) as exc:
            text = str(exc)
            errors.append(text if text.startswith("ERROR") else f"ERROR: {text}")
            session.say(errors[-1])
    if errors:
        raise AlreadyReported(errors[-1])


def start_group(session: Session, cmd: M.StartGroup) -> None:
    groups = resolve(session, cmd.kind, cmd.pattern)
    if manager_info(session.home) is None:
        raise CommandFailed("ERROR: Manager not currently running.")

    def start(group: GroupDef) -> None:
        session.say("", "Sending START request to MANAGER ...")
        extra = "".join(
            f" {word} {value}"
            for word, value in (("ATCSN", cmd.atcsn), ("AFTERCSN", cmd.aftercsn))
            if value is not None
        )
        _show(session, manager_request(session.home, f"START {group.kind} {group.name}{extra}"))

    _each(session, groups, start)


def stop_group(session: Session, cmd: M.StopGroup) -> None:
    groups = resolve(session, cmd.kind, cmd.pattern)

    def stop(group: GroupDef) -> None:
        if group_process(session.home, group.kind, group.name) is None:
            session.say(f"{group.kind} {group.name} is already stopped.")
            return
        session.say("", f"Sending STOP request to {group.kind} {group.name} ...")
        _show(session, group_request(session.home, group.kind, group.name, "STOP"))

    _each(session, groups, stop)


def kill_group(session: Session, cmd: M.KillGroup) -> None:
    groups = resolve(session, cmd.kind, cmd.pattern)

    def kill(group: GroupDef) -> None:
        session.say("", "Sending KILL request to MANAGER ...")
        _show(session, manager_request(session.home, f"KILL {group.kind} {group.name}"))

    _each(session, groups, kill)


def lag_group(session: Session, cmd: M.LagGroup) -> None:
    if cmd.global_:
        from ggsci.dispatch.heartbeat import lag_global

        lag_global(session, cmd)
        return
    groups = resolve(session, cmd.kind, cmd.pattern)

    def lag(group: GroupDef) -> None:
        session.say("", f"Sending GETLAG request to {group.kind} {group.name} ...")
        _show(session, group_request(session.home, group.kind, group.name, "GETLAG"))

    _each(session, groups, lag)


def stats_group(session: Session, cmd: M.StatsGroup) -> None:
    """STATS: the process counts; a group that is not running answers so, as GGSCI does."""
    groups = resolve(session, cmd.kind, cmd.pattern)
    request = StatsRequest(
        cmd.windows, cmd.reset, cmd.table, cmd.totals_only, cmd.rate, cmd.fetch, cmd.detail
    )

    def stats(group: GroupDef) -> None:
        if group_process(session.home, group.kind, group.name) is None:
            raise ControlError(f"{group.kind} {group.name} not currently running.")
        session.say("", f"Sending STATS request to {group.kind} {group.name} ...", "")
        _show(session, group_request(session.home, group.kind, group.name, request.words()))

    _each(session, groups, stats)


def send_group(session: Session, cmd: M.SendGroup) -> None:
    groups = resolve(session, cmd.kind, cmd.pattern)
    word = cmd.request.replace(",", " ").split()[0]

    words = cmd.request.replace(",", " ").split()
    confirm = word.upper() in ("SKIPTRANS", "FORCETRANS") and "FORCE" not in (
        w.upper() for w in words[1:]
    )

    def send(group: GroupDef) -> None:
        if group_process(session.home, group.kind, group.name) is None:
            raise ControlError(f"{group.kind} {group.name} not currently running.")
        if confirm and not _confirmed(session, group, word, cmd.request):
            return
        session.say("", f"Sending {word} request to {group.kind} {group.name} ...")
        request = f"{cmd.request} FORCE" if confirm else cmd.request
        _show(session, group_request(session.home, group.kind, group.name, request))

    _each(session, groups, send)


def _confirmed(session: Session, group: GroupDef, word: str, request: str) -> bool:
    """SKIPTRANS / FORCETRANS without FORCE: ask the process which transaction it would act
    on (it checks that it is the oldest), then ask the user, as GGSCI does."""
    check = group_request(session.home, group.kind, group.name, f"{request} VALIDATE")
    if not check.ok:
        session.say("", f"Sending {word} request to {group.kind} {group.name} ...")
        _show(session, check)
        return False
    verb = "skip" if word.upper() == "SKIPTRANS" else "force"
    question = f"Are you sure you sure you want to {verb} transaction [{check.lines[0]}]? (y/n)"
    if session.confirm(question):
        return True
    session.say(f"{word.upper()} cancelled.")
    return False


HANDLERS: dict[type[M.Command], Any] = {
    M.ManagerCommand: manager,
    M.SendManager: send_manager,
    M.StartGroup: start_group,
    M.StopGroup: stop_group,
    M.KillGroup: kill_group,
    M.LagGroup: lag_group,
    M.SendGroup: send_group,
    M.StatsGroup: stats_group,
}
