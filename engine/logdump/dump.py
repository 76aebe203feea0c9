"""Non-interactive Logdump: every record of the given files, as text or JSON lines."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from engine.logdump.views import DisplayOptions, Views
from engine.trail.errors import TrailError
from engine.trail.files import TrailName
from engine.trail.reader import FileCursor


def _seqno(path: Path) -> int:
    try:
        return TrailName.of_file(path)[1]
    except TrailError:
        return 0


def dump_files(
    paths: Iterable[Path],
    out: TextIO,
    *,
    as_json: bool = False,
    options: DisplayOptions | None = None,
) -> int:
    """Write the records of each file to ``out``; return the number of records.

    A file that ends inside a record (being written, or torn) is reported on ``out``
    after its last whole record in text mode, and as an ``{"incomplete_tail": n}``
    object in JSON mode. Records are shown whatever their checksum says (each one's check
    is in its dump); in text mode a file with mismatches ends with a line counting them.
    """
    total = 0
    for path in paths:
        views = Views(options or DisplayOptions())
        mismatches = 0
        with FileCursor(path, _seqno(path), verify=False, pieces=True) as cursor:
            for entry in cursor:
                total += 1
                mismatches += entry.crc is not None and not entry.crc.ok
                if as_json:
                    out.write(json.dumps(views.json(str(path), entry)) + "\n")
                else:
                    out.write("\n".join(views.render(entry)) + "\n")
            if cursor.incomplete_tail:
                if as_json:
                    tail = {
                        "file": str(path),
                        "rba": cursor.rba,
                        "incomplete_tail": cursor.incomplete_tail,
                    }
                    out.write(json.dumps(tail) + "\n")
                else:
                    out.write(
                        f"{path}: {cursor.incomplete_tail} bytes of an incomplete record "
                        f"at RBA {cursor.rba}\n"
                    )
            if mismatches and not as_json:
                out.write(f"{path}: {mismatches} record(s) failed their checksum\n")
    return total
