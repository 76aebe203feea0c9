"""The interactive Logdump: commands read from a text stream, output to another.

``Logdump N >`` prompts; one handler per command in a dispatch table; an error in a
command prints one line and the session goes on. Input and output are injected, so the
session runs the same under a terminal and with piped input (tests).
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from engine.logdump.rectypes import ALL_RECTYPES, BY_NAME, show_rectype_lines
from engine.logdump.save import SaveError, save_records
from engine.logdump.views import DisplayOptions, Views, count_lines
from engine.trail.errors import TrailError
from engine.trail.files import TrailName
from engine.trail.metadata import indexes, is_metadata, metadata_kind
from engine.trail.model import TrailRecord
from engine.trail.reader import FileCursor, TrailEntry


def _wall_clock_us() -> int:
    return time.time_ns() // 1000


class LogdumpError(Exception):
    """A command the session cannot carry out; shown as one line."""


@dataclass
class Filter:
    include_names: list[str] = field(default_factory=list)
    exclude_names: list[str] = field(default_factory=list)
    rectypes: set[int] = field(default_factory=set)

    def matches(self, entry: TrailEntry) -> bool:
        record = entry.record
        if not isinstance(record, TrailRecord):
            return not (self.include_names or self.rectypes)
        if self.rectypes and record.io_type not in self.rectypes:
            return False
        if is_metadata(record):
            # A DDR/TDR is no data of the table it names: INCLUDE FILENAME selects data
            # records only (FILTER RECTYPE Metadata shows the metadata records).
            return not self.include_names or bool(self.rectypes)
        name = record.table.upper()
        if self.include_names and not any(fnmatch.fnmatch(name, p) for p in self.include_names):
            return False
        return not any(fnmatch.fnmatch(name, p) for p in self.exclude_names)

    def describe(self) -> list[str]:
        if not (self.include_names or self.exclude_names or self.rectypes):
            return ["No filters are active"]
        lines = [f"Include Filename : {p}" for p in self.include_names]
        lines += [f"Exclude Filename : {p}" for p in self.exclude_names]
        lines += [
            f"Rectype          : {n} ({ALL_RECTYPES.get(n, n)})" for n in sorted(self.rectypes)
        ]
        return lines


class LogdumpSession:
    """One Logdump session. ``run()`` reads commands until EXIT or end of input."""

    def __init__(
        self,
        stdin: TextIO,
        stdout: TextIO,
        *,
        echo: bool = False,
        clock: Callable[[], int] = _wall_clock_us,
    ) -> None:
        self.clock = clock
        self.stdin = stdin
        self.stdout = stdout
        self.echo = echo
        self.options = DisplayOptions(ghdr=False, detail="OFF", fileheader="OFF")
        self.views = Views(self.options)
        self.filter = Filter()
        self.cursor: FileCursor | None = None
        self.counter = 0
        self._handlers: dict[str, Callable[[list[str]], bool]] = {
            "OPEN": self.cmd_open,
            "NEXT": self.cmd_next,
            "N": self.cmd_next,
            "POS": self.cmd_pos,
            "POSITION": self.cmd_pos,
            "GHDR": self.cmd_ghdr,
            "DETAIL": self.cmd_detail,
            "FILEHEADER": self.cmd_fileheader,
            "COUNT": self.cmd_count,
            "SCANFORENDTRANS": self.cmd_sfet,
            "SFET": self.cmd_sfet,
            "SCANFORMETADATA": self.cmd_sfmd,
            "SFMD": self.cmd_sfmd,
            "SCANFORHEADER": self.cmd_sfh,
            "SFH": self.cmd_sfh,
            "FILTER": self.cmd_filter,
            "NEXTTRAIL": self.cmd_nexttrail,
            "SAVE": self.cmd_save,
            "SHOW": self.cmd_show,
            "NT": self.cmd_nexttrail,
            "HELP": self.cmd_help,
            "EXIT": self.cmd_exit,
            "QUIT": self.cmd_exit,
        }

    def out(self, *lines: str) -> None:
        for line in lines:
            self.stdout.write(line + "\n")

    def run(self) -> None:
        try:
            while True:
                self.counter += 1
                self.stdout.write(f"Logdump {self.counter} >")
                self.stdout.flush()
                line = self.stdin.readline()
                if not line:
                    self.stdout.write("\n")
                    return
                if self.echo:
                    self.stdout.write(" " + line.rstrip("\n"))
                self.stdout.write("\n")
                if not self.execute(line):
                    return
        finally:
            self.close()

    def close(self) -> None:
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None

    def execute(self, line: str) -> bool:
        """Run one command; False when the session should end."""
        words = line.split()
        if not words:
            return True
        handler = self._handlers.get(words[0].upper())
        if handler is None:
            self.out(f"Unknown command: {words[0]}. Type HELP for the command list.")
            return True
        try:
            return handler(words[1:])
        except (LogdumpError, SaveError, TrailError) as exc:
            self.out(f"Error: {exc}")
            return True

    def _need_cursor(self) -> FileCursor:
        if self.cursor is None:
            raise LogdumpError("no trail file open; use OPEN <file>")
        return self.cursor

    # -- commands --------------------------------------------------------------------------
    def cmd_open(self, args: list[str]) -> bool:
        if len(args) != 1:
            raise LogdumpError("usage: OPEN <trail file>")
        self._open(Path(args[0]))
        return True

    def _open(self, path: Path) -> None:
        try:
            _, seqno = TrailName.of_file(path)
        except TrailError:
            seqno = 0
        cursor = FileCursor(path, seqno, verify=False, pieces=True)
        self.close()
        self.cursor = cursor
        self.views = Views(self.options)
        self.out(f"Current LogTrail is {path.resolve()}")

    def _show(self, entry: TrailEntry) -> None:
        self.out(*self.views.render(entry))

    def _end_of_file(self, cursor: FileCursor) -> None:
        tail = (
            f", {cursor.incomplete_tail} bytes of an incomplete record follow"
            if cursor.incomplete_tail
            else ""
        )
        self.out(f"End of file reached at RBA {cursor.rba}{tail}")

    def cmd_next(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        count = _int_arg(args, 1)
        shown = 0
        while shown < count:
            entry = cursor.next()
            if entry is None:
                self._end_of_file(cursor)
                break
            self.views.learn(entry)
            if self.filter.matches(entry):
                self._show(entry)
                shown += 1
        return True

    def cmd_pos(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        if len(args) != 1:
            raise LogdumpError("usage: POS <rba> | FIRST | EOF")
        word = args[0].upper()
        if word in ("FIRST", "0"):
            rba = 0
        elif word in ("EOF", "LAST"):
            rba = cursor.size()
        else:
            rba = _int_arg(args, 0)
        cursor.seek(rba)
        self.out(f"Reading forward from RBA {rba}")
        return True

    def _toggle(self, args: list[str], allowed: tuple[str, ...], what: str) -> str:
        if len(args) != 1 or args[0].upper() not in allowed:
            raise LogdumpError(f"usage: {what} {' | '.join(allowed)}")
        return args[0].upper()

    def cmd_ghdr(self, args: list[str]) -> bool:
        self.options.ghdr = self._toggle(args, ("ON", "OFF"), "GHDR") == "ON"
        return True

    def cmd_detail(self, args: list[str]) -> bool:
        self.options.detail = self._toggle(args, ("ON", "OFF", "DATA"), "DETAIL")
        return True

    def cmd_fileheader(self, args: list[str]) -> bool:
        self.options.fileheader = self._toggle(args, ("ON", "OFF", "DETAIL"), "FILEHEADER")
        return True

    def cmd_count(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        with FileCursor(cursor.path, cursor.seqno, verify=False, pieces=True) as counter:
            lines = count_lines(str(cursor.path), (e for e in counter if self.filter.matches(e)))
        self.out(*lines)
        return True

    def cmd_sfet(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        while True:
            entry = cursor.next()
            if entry is None:
                self._end_of_file(cursor)
                return True
            self.views.learn(entry)
            record = entry.record
            if (
                isinstance(record, TrailRecord)
                and record.is_transactional
                and record.ends_transaction
            ):
                break
        self.out(f"End of Transaction found at RBA {entry.rba}")
        following = cursor.next()
        if following is None:
            self._end_of_file(cursor)
        else:
            self.views.learn(following)
            self._show(following)
        return True

    def cmd_sfmd(self, args: list[str]) -> bool:
        """SCANFORMETADATA [DDR|TDR] [index|NEXT]: the next metadata record (of that kind,
        with that DDR or TDR index); the position stays where it was when there is none."""
        words = [a.upper() for a in args]
        kind = words.pop(0) if words and words[0] in ("DDR", "TDR") else None
        index: int | None = None
        if words and words[0] != "NEXT":
            if not words[0].isdigit() or len(words) > 1:
                raise LogdumpError("usage: SCANFORMETADATA | SFMD [DDR|TDR] [index|NEXT]")
            index = int(words[0])
        cursor = self._need_cursor()
        start = cursor.rba
        while (entry := cursor.next()) is not None:
            self.views.learn(entry)
            record = entry.record
            if not isinstance(record, TrailRecord) or (found := metadata_kind(record)) is None:
                continue
            if kind not in (None, found):
                continue
            ddr, tdr = indexes(record)
            if index is not None and index != (ddr if found == "DDR" else tdr):
                continue
            self._show(entry)
            return True
        cursor.seek(start)
        what = " ".join(x for x in (kind, None if index is None else str(index)) if x)
        self.out(f"No {what + ' ' if what else ''}metadata record found after RBA {start}")
        return True

    def cmd_sfh(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        start = cursor.rba
        found = cursor.scan_for_header()
        if found is None:
            self.out(f"No record header found after RBA {start}")
            return True
        self.out(f"Record header found at RBA {found} ({found - start} bytes skipped)")
        entry = cursor.next()
        if entry is not None:
            self.views.learn(entry)
            self._show(entry)
        return True

    def cmd_filter(self, args: list[str]) -> bool:
        words = [a.upper() for a in args]
        if words[:1] == ["CLEAR"]:
            self.filter = Filter()
        elif words[:1] == ["SHOW"]:
            self.out(*self.filter.describe())
        elif len(words) == 3 and words[0] in ("INCLUDE", "EXCLUDE") and words[1] == "FILENAME":
            target = (
                self.filter.include_names if words[0] == "INCLUDE" else self.filter.exclude_names
            )
            target.append(words[2])
        elif len(words) in (2, 3) and "RECTYPE" in words[:2]:
            value = words[-1]
            number = BY_NAME.get(value)
            if number is None:
                number = _int_arg([value], 0)
            self.filter.rectypes.add(number)
        else:
            raise LogdumpError(
                "usage: FILTER INCLUDE|EXCLUDE FILENAME <name> | FILTER RECTYPE <type> "
                "| FILTER CLEAR | FILTER SHOW"
            )
        return True

    def cmd_nexttrail(self, args: list[str]) -> bool:
        cursor = self._need_cursor()
        trail, seqno = TrailName.of_file(cursor.path)
        self._open(trail.file(seqno + 1))
        return True

    def cmd_show(self, args: list[str]) -> bool:
        if [a.upper() for a in args] not in (["RECTYPE"], ["RECTYPES"]):
            raise LogdumpError("usage: SHOW RECTYPE")
        self.out(*show_rectype_lines())
        return True

    def cmd_save(self, args: list[str]) -> bool:
        """SAVE file [!] n RECORDS [NOCOMMENT]: from the current position; the position
        does not move."""
        usage = "usage: SAVE <file> [!] <n> RECORDS [NOCOMMENT]"
        cursor = self._need_cursor()
        words = list(args)
        if not words:
            raise LogdumpError(usage)
        target = Path(words.pop(0))
        overwrite = bool(words) and words[0] == "!"
        if overwrite:
            words.pop(0)
        upper = [w.upper() for w in words]
        comments = "NOCOMMENT" not in upper
        upper = [w for w in upper if w != "NOCOMMENT"]
        if len(upper) != 2 or upper[1] not in ("RECORDS", "RECORD", "RECS", "REC"):
            if len(upper) == 2 and upper[1] == "BYTES":
                raise LogdumpError("SAVE n BYTES is not supported: give n RECORDS")
            raise LogdumpError(usage)
        count = _int_arg(upper[:1], 0)
        result = save_records(
            cursor.path,
            cursor.rba,
            count,
            target,
            overwrite=overwrite,
            comments=comments,
            clock=self.clock,
        )
        self.out(
            f"{result.records} records written to {target} "
            f"(RBA {result.start_rba} to {result.end_rba})"
        )
        return True

    def cmd_help(self, args: list[str]) -> bool:
        self.out(
            "OPEN <file>              open a trail file",
            "NEXT [n] | N [n]         show the next (n) record(s)",
            "POS <rba> | FIRST | EOF  reposition",
            "GHDR ON|OFF              record header block",
            "DETAIL ON|OFF|DATA       column list / column data",
            "FILEHEADER ON|OFF|DETAIL file header record",
            "COUNT                    count the records of the file",
            "SCANFORENDTRANS | SFET   skip to the next transaction",
            "SCANFORHEADER | SFH      find the next valid record (after corruption)",
            "SCANFORMETADATA | SFMD [DDR|TDR] [index|NEXT]  the next DDR/TDR record",
            "FILTER INCLUDE|EXCLUDE FILENAME <name> | RECTYPE <type> | CLEAR | SHOW",
            "NEXTTRAIL | NT           open the next file of the trail",
            "SAVE <file> [!] <n> RECORDS [NOCOMMENT]  copy n records from here to a new file",
            "SHOW RECTYPE             the record types (IOType numbers and names)",
            "EXIT | QUIT",
        )
        return True

    def cmd_exit(self, args: list[str]) -> bool:
        return False


def _int_arg(args: list[str], default: int) -> int:
    if not args:
        return default
    try:
        value = int(args[0])
    except ValueError as exc:
        raise LogdumpError(f"{args[0]!r} is not a number") from exc
    if value < 0:
        raise LogdumpError(f"{value} is negative")
    return value
