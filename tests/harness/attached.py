"""An embedded database's redo as a real database's archived logs, for the attached-database
Extract's tests and benchmark (engine/extract/alo.py): its archived logs copied under
LOG_ARCHIVE_FORMAT names (engine/redo/archnames.py), and its tables as ggsci's Oracle
dictionary JSON (engine/embedded/oradict.py, what ``ggsci db dictionary`` writes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from engine.embedded.dictionary import load_dictionary
from engine.embedded.oradict import oracle_dictionary as exported
from engine.redo.archnames import DEFAULT_FORMAT, archive_name
from engine.redo.framing import read_header
from engine.redo.scan import is_current


def archive_copies(root: Path, arch: Path, fmt: str = DEFAULT_FORMAT) -> list[Path]:
    """The database's archived logs copied to ``arch`` under the names ``fmt`` gives them
    (``%t_%s_%r.dbf``), ordered by SCN (the order an archiver writes them)."""
    arch.mkdir(exist_ok=True)
    out: list[tuple[int, Path, str]] = []
    for tdir in sorted((root / "redo").glob("t*")):
        for log in sorted(tdir.glob("*.log")):
            h = read_header(log.read_bytes()[:8192])
            if is_current(h):
                continue
            name = archive_name(
                fmt,
                thread=h.thread,
                sequence=h.sequence,
                resetlogs_id=h.resetlogs_id,
                dbid=h.dbid,
                activation=h.activation,
            )
            out.append((h.next_scn, log, name))
    copies: list[Path] = []
    for _, log, name in sorted(out):
        shutil.copy(log, arch / name)
        copies.append(arch / name)
    return copies


def oracle_dictionary(root: Path, path: Path, scn: int) -> Path:
    """The embedded database's tables as ggsci's dictionary JSON (docs/extract.md), taken
    at ``scn``, written to ``path``."""
    doc = exported(load_dictionary(root / "dictionary.json"), scn).to_json()
    path.write_text(json.dumps(doc))
    return path
