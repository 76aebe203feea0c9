"""An embedded database's redo as a real database's archived logs, for the attached-database
Extract's tests and benchmark (engine/extract/alo.py): its archived logs copied under
LOG_ARCHIVE_FORMAT names, and its tables as ggsci's Oracle dictionary JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from engine.embedded.dictionary import load_dictionary
from engine.redo.framing import read_header
from engine.redo.scan import is_current


def archive_copies(root: Path, arch: Path) -> list[Path]:
    """The database's archived logs copied to ``arch`` under LOG_ARCHIVE_FORMAT names
    (``%t_%s_%r.dbf``), ordered by SCN (the order an archiver writes them)."""
    arch.mkdir(exist_ok=True)
    out: list[tuple[int, Path, str]] = []
    for t in (1, 2):
        for log in sorted((root / "redo" / f"t{t}").glob("*.log")):
            h = read_header(log.read_bytes()[:8192])
            if is_current(h):
                continue
            out.append((h.next_scn, log, f"{h.thread}_{h.sequence}_{h.resetlogs_id}.dbf"))
    copies: list[Path] = []
    for _, log, name in sorted(out):
        shutil.copy(log, arch / name)
        copies.append(arch / name)
    return copies


def oracle_dictionary(root: Path, path: Path, scn: int) -> Path:
    """The embedded database's tables as ggsci's dictionary JSON (docs/extract.md), taken
    at ``scn``."""
    d = load_dictionary(root / "dictionary.json")
    tables = [
        {
            "con_id": 0, "owner": t.owner, "name": t.name, "obj": t.obj,
            "data_objs": [t.dataobj], "key": list(t.key_columns),
            "columns": [
                {"name": c.name, "seg_col": i + 1, "type": c.type, "length": c.length,
                 "precision": c.precision, "scale": c.scale,
                 "charset_form": 1 if "CHAR" in c.type else 0, "nullable": c.nullable}
                for i, c in enumerate(t.columns)
            ],
        }
        for t in d.tables.values()
    ]  # fmt: skip
    doc = {"format": "ggsci-oracle-dictionary/1", "scn": scn, "db_charset": "AL32UTF8",
           "nchar_charset": "AL16UTF16", "tables": tables}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path
