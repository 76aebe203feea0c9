"""Long-running transactions: WARNLONGTRANS warnings and the SHOWTRANS / SKIPTRANS /
FORCETRANS request texts, in GoldenGate's layouts (GG_REFERENCE §3.1, §7).

Pure formatting and argument parsing; the capture loop decides what to do. Ages are redo
time: the time of the last record read minus the transaction's start time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.changes import Position
from engine.extract.cache import Txn
from engine.trail.model import micros_to_datetime

DASHES = "-" * 60
UNITS = {
    **dict.fromkeys(("S", "SEC", "SECS", "SECOND", "SECONDS"), 1),
    **dict.fromkeys(("M", "MIN", "MINS", "MINUTE", "MINUTES"), 60),
    **dict.fromkeys(("H", "HOUR", "HOURS"), 3600),
    **dict.fromkeys(("D", "DAY", "DAYS"), 86400),
}


class RequestError(ValueError):
    """A SEND request's arguments are wrong; the message is GGSCI's one line."""


def scn_text(scn: int) -> str:
    """``wrap.base (decimal)``, as GGSCI prints SCNs."""
    return f"{scn >> 32}.{scn & 0xFFFFFFFF} ({scn})"


def start_time(txn: Txn) -> str:
    return f"{micros_to_datetime(txn.start_time_us):%Y-%m-%d:%H:%M:%S}"


def describe(txn: Txn) -> str:
    """``XID x, Redo Thread t, Start Time ..., SCN ...`` (confirmations and replies)."""
    return (
        f"XID {txn.xid}, Redo Thread {txn.start.thread}, Start Time {start_time(txn)}, "
        f"SCN {scn_text(txn.start_scn)}"
    )


def warning_text(txn: Txn, group: str) -> str:
    """OGG-01027's text."""
    return (
        f"Long Running Transaction: XID {txn.xid}, Items {txn.captured_rows}, Extract {group}, "
        f"Redo Thread {txn.start.thread}, SCN {scn_text(txn.start_scn)}, "
        f"Redo Seq #{txn.start.sequence}, Redo RBA {txn.start.offset}, Status Running."
    )


def oldest_log_header(txns: list[Txn], positions: dict[int, Position]) -> list[str]:
    """SHOWTRANS's first lines: where a restart would read from, per redo thread (the start of
    its oldest open transaction, else the current read position)."""
    oldest = dict(positions)
    for txn in txns:
        t = txn.start.thread
        if t not in oldest or txn.start < oldest[t]:
            oldest[t] = txn.start
    lines = ["Oldest redo log file necessary to restart Extract is:", ""]
    for t, pos in sorted(oldest.items()):
        thread = f"Redo Thread {t}, " if len(oldest) > 1 else ""
        lines.append(f"{thread}Redo Log Sequence Number {pos.sequence}, RBA {pos.offset}")
    return [*lines, ""]


def block(txn: Txn, group: str) -> list[str]:
    rows = [
        ("XID:", txn.xid),
        ("Items:", str(txn.captured_rows)),
        ("Extract:", group),
        ("Redo Thread:", str(txn.start.thread)),
        ("Start Time:", start_time(txn)),
        ("SCN:", scn_text(txn.start_scn)),
        ("Redo Seq:", str(txn.start.sequence)),
        ("Redo RBA:", str(txn.start.offset)),
        ("Status:", "Running"),
    ]
    return [DASHES, *(f"{label:<22}{value}" for label, value in rows)]


TABULAR_HEADER = (
    f"{'XID':<20} {'Items':>8} {'Extract':<8} {'Thread':>6} {'Start Time':<19} "
    f"{'SCN':<24} {'Redo Seq':>8} {'Redo RBA':>12} Status"
)


def tabular_line(txn: Txn, group: str) -> str:
    return (
        f"{txn.xid:<20} {txn.captured_rows:>8} {group:<8} {txn.start.thread:>6} "
        f"{start_time(txn):<19} {scn_text(txn.start_scn):<24} {txn.start.sequence:>8} "
        f"{txn.start.offset:>12} Running"
    )


@dataclass(frozen=True)
class ShowTrans:
    xid: str | None = None
    thread: int | None = None
    count: int | None = None
    duration: int | None = None  # seconds
    tabular: bool = False
    file: str | None = None
    detail: bool = False


def _int(words: Sequence[str], i: int, what: str) -> int:
    if i >= len(words) or not words[i].isdigit():
        raise RequestError(f"ERROR: {what} needs a number.")
    return int(words[i])


def parse_showtrans(args: Sequence[str]) -> ShowTrans:
    """``[xid] [THREAD n] [COUNT n] [DURATION n unit] [TABULAR] [FILE f [DETAIL]] [ALL]``."""
    st: dict[str, object] = {}
    i = 0
    words = list(args)
    while i < len(words):
        w = words[i].upper()
        if w == "THREAD":
            st["thread"] = _int(words, i + 1, "THREAD")
            i += 2
        elif w == "COUNT":
            st["count"] = _int(words, i + 1, "COUNT")
            i += 2
        elif w == "DURATION":
            n = _int(words, i + 1, "DURATION")
            unit = words[i + 2].upper() if i + 2 < len(words) else ""
            if unit not in UNITS:
                raise RequestError("ERROR: DURATION needs a number and a unit (S, M, H or D).")
            st["duration"] = n * UNITS[unit]
            i += 3
        elif w == "TABULAR":
            st["tabular"] = True
            i += 1
        elif w == "FILE":
            if i + 1 >= len(words):
                raise RequestError("ERROR: FILE needs a file name.")
            st["file"] = words[i + 1]
            i += 2
        elif w == "DETAIL":
            st["detail"] = True
            i += 1
        elif w == "ALL":
            i += 1
        elif "." in w and "xid" not in st:
            st["xid"] = words[i]
            i += 1
        else:
            raise RequestError(f"ERROR: unexpected {words[i]!r} in SHOWTRANS.")
    return ShowTrans(**st)  # type: ignore[arg-type]


@dataclass(frozen=True)
class TxnAction:
    """SKIPTRANS / FORCETRANS arguments: ``xid [THREAD n] [FORCE]`` (+ VALIDATE from GGSCI)."""

    xid: str
    thread: int | None = None
    force: bool = False
    validate: bool = False


def parse_action(word: str, args: Sequence[str]) -> TxnAction:
    words = list(args)
    if not words or "." not in words[0]:
        raise RequestError(f"ERROR: {word} needs a transaction id (usn.slot.sqn).")
    thread = None
    force = validate = False
    i = 1
    while i < len(words):
        w = words[i].upper()
        if w == "THREAD":
            thread = _int(words, i + 1, "THREAD")
            i += 2
        elif w == "FORCE":
            force = True
            i += 1
        elif w == "VALIDATE":
            validate = True
            i += 1
        else:
            raise RequestError(f"ERROR: unexpected {words[i]!r} in {word}.")
    return TxnAction(words[0], thread, force, validate)
