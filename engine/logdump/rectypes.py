"""The record types Logdump's SHOW RECTYPE lists: seed 003's table C-2 ("Oracle
GoldenGate Operation Types"), with what ggsci writes marked, and its own numbers."""

from __future__ import annotations

from typing import Final

from engine.trail.layout import IO_TYPE_NAMES, IOType

#: Number -> name, as seed 003's table C-2 names them (types not written by ggsci included:
#: a trail from elsewhere may hold them).
SEED_RECTYPES: Final[dict[int, str]] = {
    1: "Abort", 2: "Commit", 3: "Delete", 4: "EndRollback", 5: "Insert", 6: "Prepared",
    7: "TMF-Shutdown", 8: "TransBegin", 9: "TransRelease", 10: "Update", 11: "UpdateComp",
    12: "FileAlter", 13: "FileCreate", 14: "FilePurge", 15: "FieldComp", 16: "FileRename",
    17: "AuxPointer", 18: "NetworkCommit", 19: "NetworkAbort", 90: "GGSSQLCol",
    100: "GGSPurgedata", 101: "GGSPurgeFile", 102: "GGSCreateFile", 103: "GGSAlterFile",
    104: "GGSRenameFile", 105: "GGSSetmode", 106: "GGSChangeLabel", 107: "GGSControl",
    115: "GGSKeyFieldComp", 116: "LargeObject", 117: "GGSKeyFieldComp32",
    132: "GGSSequenceOp", 134: "GGSUnifiedUpdate", 135: "GGSUnifiedPKUpdate",
    160: "DDL_Op", 161: "RecordFragment", 200: "GGSBulkIO", 201: "GGSFileClose",
    202: "GGSLoggerTS", 203: "GGSExtracterTS", 204: "GGSCollectorTS", 205: "GGSComment",
    249: "GGSLoggerAddedStats", 250: "GGSLibraryOpen", 251: "GGSLibraryClose",
    252: "GGSLoggerAddedOpen", 253: "GGSLoggerAddedClose", 254: "GGSLoggerAddedInfo",
}  # fmt: skip

#: Everything a name can select (FILTER RECTYPE): the seed's names and ggsci's own.
ALL_RECTYPES: Final[dict[int, str]] = {**SEED_RECTYPES, **IO_TYPE_NAMES}

#: Names upper-cased -> number.
BY_NAME: Final[dict[str, int]] = {name.upper(): n for n, name in ALL_RECTYPES.items()}


def show_rectype_lines() -> list[str]:
    """SHOW RECTYPE: every known type, one a line; ``*`` marks those ggsci writes."""
    lines = ["The following record types are defined (* = written by ggsci):"]
    for number in sorted(ALL_RECTYPES):
        mark = "*" if number in IO_TYPE_NAMES else " "
        lines.append(f"{mark}{number:>4} - {ALL_RECTYPES[number]}")
    ours = [IOType.METADATA, IOType.RESTART_ABEND]  # GoldenGate 12.2+ metadata; our marker
    lines.append(
        "Numbers not in seed 003's table: "
        + ", ".join(f"{int(n)} ({IO_TYPE_NAMES[n]})" for n in ours)
        + "."
    )
    return lines
