"""``SEND {EXTRACT | REPLICAT | MANAGER} name, GETPARAMINFO [parameter] [FILE path]``.

GoldenGate's GETPARAMINFO asks a running process for the parameters it runs with: those it
read at start-up (after OBEY, INCLUDE, macros and ``?VAR``), not the file as edited since. One
parameter's name shows only its statements; FILE writes the answer to a file (relative to the
home, where every process runs) instead of the screen. Secrets are masked as in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.runtime.ipc import Reply, Request
from params.masking import mask_secrets


def _keyword(statement: str) -> str:
    words = statement.replace(",", " ").split()
    return words[0].upper() if words else ""


def answer(
    whose: str,
    source: str,
    statements: tuple[str, ...],
    request: Request,
    starting: str | None = None,
) -> Reply:
    """The reply to one GETPARAMINFO request of the process ``whose`` (e.g. ``EXTRACT EXT1``)
    that read ``statements`` from ``source`` at start-up (``starting``: what it waits for
    while it has not read them yet)."""
    args = list(request.args)
    out: str | None = None
    if len(args) >= 2 and args[-2].upper() == "FILE":
        out, args = args[-1], args[:-2]
    if len(args) > 1:
        return Reply.error("ERROR: GETPARAMINFO takes one parameter name [and FILE path].")
    name = args[0].upper() if args else None
    if not statements:
        waits = f" is starting ({starting})" if starting else " has not read its parameters"
        return Reply.error(f"ERROR: {whose}{waits}; GETPARAMINFO is answered once it has.")
    chosen = [s for s in statements if name is None or _keyword(s) == name]
    if name is not None and not chosen:
        lines = [f"{name} is not set in the parameters {whose} runs with (its default applies)."]
    else:
        what = f"{name} in the parameters" if name else "Parameters"
        lines = [f"{what} {whose} runs with (read at start-up from {source}):", ""]
        lines += [mask_secrets(s) for s in chosen]
    if out is None:
        return Reply(tuple(lines))
    path = Path(out).expanduser()
    try:
        path.write_text("\n".join(lines) + "\n")
    except OSError as exc:
        return Reply.error(f"ERROR: Cannot write {out}: {exc.strerror or exc}.")
    return Reply((f"Parameter information written to {out}.",))


def handler(
    whose: str,
    source: str,
    statements: Callable[[], tuple[str, ...]],
    starting: Callable[[], str | None] = lambda: None,
) -> Callable[[Request], Reply]:
    """A SEND handler answering from ``statements()`` (empty until the process read them)."""
    return lambda request: answer(whose, source, statements(), request, starting())
