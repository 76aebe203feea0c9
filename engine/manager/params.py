"""The Manager's parameter file ``dirprm/mgr.prm``, read through the parameter checker.

The Manager checks mgr.prm with :func:`params.check.check_file`, the checker ``params check``,
``EDIT PARAMS MGR`` and every group process use, so they accept and refuse the same lines
with the same positioned messages (``dirprm/mgr.prm:1:6: error: PORT must be 0 to 65535``).
A file with an error stops the Manager before it listens (:class:`ManagerParamError` carries
the rendered diagnostics); warnings ("not used by this engine") are logged and it goes on.
This module turns the checker's model (:class:`params.models.Manager`) into the settings the
Manager acts on (:class:`ManagerParams`): times in seconds, rules with their matchers.

PORT 0 asks the system for a free port (this engine's meaning: tests and the quickstart run
many homes on one machine). Without LAGREPORT, lag is checked every
:data:`DEFAULT_LAG_REPORT_MINUTES` minutes when LAGINFO or LAGCRITICAL is set; LAGREPORT alone
reports every group's lag at each interval (as LAGINFO 0 does).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from params.access import AccessRule
from params.models import Manager as ManagerModel

DEFAULT_PORT = 7809
DEFAULT_LAG_REPORT_MINUTES = 60


class ManagerParamError(ValueError):
    """mgr.prm has errors: ``lines`` are the checker's rendered diagnostics (first line of
    each: ``file:line:col: error: message``)."""

    def __init__(self, lines: tuple[str, ...]) -> None:
        super().__init__(lines[0] if lines else "mgr.prm has errors")
        self.lines = lines


@dataclass(frozen=True)
class GroupPattern:
    """ER / EXTRACT / REPLICAT plus a wildcard name, as AUTOSTART and AUTORESTART take it."""

    kind: str | None
    pattern: str

    def matches(self, kind: str, name: str) -> bool:
        return (self.kind is None or self.kind == kind) and fnmatch.fnmatchcase(
            name.upper(), self.pattern.upper()
        )


@dataclass(frozen=True)
class AutoRestart:
    target: GroupPattern
    retries: int = 2
    wait_minutes: float = 2.0
    reset_minutes: float = 20.0


@dataclass(frozen=True)
class PurgeRule:
    trail: str
    use_checkpoints: bool = True
    min_keep_hours: float = 0.0
    min_keep_files: int = 1


@dataclass(frozen=True)
class LagRule:
    """LAGREPORT (how often, seconds), LAGINFO and LAGCRITICAL (thresholds, seconds)."""

    every_seconds: float
    info_seconds: float | None = None
    critical_seconds: float | None = None


@dataclass(frozen=True)
class ManagerParams:
    port: int = DEFAULT_PORT
    autostart: tuple[GroupPattern, ...] = ()
    autorestart: tuple[AutoRestart, ...] = ()
    purge: tuple[PurgeRule, ...] = ()
    check_minutes: float = 10.0
    access_rules: tuple[AccessRule, ...] = ()
    dynamic_ports: tuple[int, ...] = ()
    lag: LagRule | None = None
    startup_validation_seconds: float | None = None
    down_report_seconds: float | None = None
    down_critical: bool = False
    warnings: tuple[str, ...] = ()


_KINDS = {"ER": None, "EXTRACT": "EXTRACT", "REPLICAT": "REPLICAT"}


def _pattern(process_type: str, group: str) -> GroupPattern:
    return GroupPattern(_KINDS.get(process_type.upper()), group)


def _lag(mgr: ManagerModel) -> LagRule | None:
    info, critical = mgr.lag_info_seconds, mgr.lag_critical_seconds
    if mgr.lag_report_minutes is None and info is None and critical is None:
        return None
    if mgr.lag_report_minutes is not None and info is None and critical is None:
        info = 0
    every = mgr.lag_report_minutes or DEFAULT_LAG_REPORT_MINUTES
    return LagRule(
        every * 60.0,
        float(info) if info is not None else None,
        float(critical) if critical is not None else None,
    )


def from_model(mgr: ManagerModel, warnings: tuple[str, ...] = ()) -> ManagerParams:
    """The settings of the checker's Manager model."""
    purge = tuple(
        PurgeRule(
            p.trail,
            p.use_checkpoints,
            float(p.min_keep_hours or 0) + 24.0 * float(p.min_keep_days or 0),
            p.min_keep_files if p.min_keep_files is not None else 1,
        )
        for p in mgr.purge_old_extracts
    )
    return ManagerParams(
        port=mgr.port if mgr.port is not None else DEFAULT_PORT,
        autostart=tuple(_pattern(a.process_type, a.group) for a in mgr.autostart),
        autorestart=tuple(
            AutoRestart(
                _pattern(a.process_type, a.group),
                a.retries,
                float(a.wait_minutes),
                float(a.reset_minutes),
            )
            for a in mgr.autorestart
        ),
        purge=purge,
        check_minutes=float(mgr.check_minutes or 10),
        access_rules=mgr.access_rules,
        dynamic_ports=mgr.dynamic_ports,
        lag=_lag(mgr),
        startup_validation_seconds=(
            float(mgr.startup_validation_seconds)
            if mgr.startup_validation_seconds is not None
            else None
        ),
        down_report_seconds=(
            mgr.down_report_minutes * 60.0 if mgr.down_report_minutes is not None else None
        ),
        down_critical=mgr.down_critical,
        warnings=warnings,
    )


def check_manager_params(path: Path, home_root: Path | None = None) -> ManagerParams:
    """mgr.prm checked whole (defaults when the file does not exist); ManagerParamError with
    the rendered errors when it has any. ``home_root``: where OBEY/INCLUDE names resolve."""
    from params.check import check_text, default_search_dirs
    from params.errors import render
    from params.preprocess import read_text

    if not path.exists():
        return ManagerParams()
    root = home_root if home_root is not None else path.resolve().parent.parent
    try:
        shown = str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        shown = str(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise ManagerParamError((f"{shown}: cannot read: {exc.strerror or exc}",)) from exc
    result = check_text(text, shown, search_dirs=default_search_dirs(path, root))
    rendered = [(d.is_error, render(d).splitlines()[0]) for d in result.diagnostics]
    if not result.ok:
        raise ManagerParamError(tuple(text for error, text in rendered if error))
    return from_model(result.model.manager, tuple(text for error, text in rendered if not error))


def parse_manager_params(text: str) -> ManagerParams:
    """mgr.prm's settings from its text (as :func:`check_manager_params` judges a file)."""
    from params.check import check_text
    from params.errors import render

    result = check_text(text, "mgr.prm")
    if not result.ok:
        raise ManagerParamError(tuple(render(d).splitlines()[0] for d in result.errors))
    return from_model(result.model.manager)


def load_manager_params(path: Path) -> ManagerParams:
    """mgr.prm's settings; defaults when the file does not exist (see
    :func:`check_manager_params`)."""
    return check_manager_params(path)
