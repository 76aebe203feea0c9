"""The one table of OGG message codes this engine writes, with what each means here.

Every ``OGG-nnnnn`` a process, the Manager or GGSCI writes (events, abends, replies) is a key of
:data:`MESSAGES`; a test holds the code base to it, and ``docs/messages.md`` is generated from it
(``python -m engine.messages --write``). The code is GoldenGate's where GoldenGate has one for
the same event; the texts themselves stay beside the code that knows their values.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Message:
    severity: str  # the usual severity: INFO, WARNING or ERROR
    meaning: str


_I, _W, _E = "INFO", "WARNING", "ERROR"

MESSAGES: dict[str, Message] = {
    "OGG-00199": Message(_E, "A mapped target table does not exist (Replicat abends)."),
    "OGG-00303": Message(_E, "The parameter file cannot be opened."),
    "OGG-00366": Message(_E, "A column a TABLE/MAP option names is not in the record."),
    "OGG-00444": Message(_E, "The group process cannot start (its group is not usable)."),
    "OGG-00446": Message(_E, "Redo needed to establish or continue capture is missing."),
    "OGG-00664": Message(_E, "No source database could be chosen for the Extract."),
    "OGG-00912": Message(_W, "The Manager refused a request (ACCESSRULE or validation)."),
    "OGG-00919": Message(_E, "An option clause of a parameter cannot be used at run time."),
    "OGG-00946": Message(_I, "A group's lag is at or over LAGINFO (LAGREPORT check)."),
    "OGG-00947": Message(_W, "A group's lag is at or over LAGCRITICAL (LAGREPORT check)."),
    "OGG-00954": Message(_I, "The Manager stopped."),
    "OGG-00957": Message(_I, "PURGEOLDEXTRACTS deleted a trail file every reader has finished."),
    "OGG-00963": Message(_I, "The Manager received a command from GGSCI."),
    "OGG-00975": Message(_I, "The Manager is starting a group."),
    "OGG-00983": Message(_I, "The Manager started (its port)."),
    "OGG-00987": Message(_I, "A GGSCI command, logged with the OS user who typed it."),
    "OGG-00991": Message(_I, "A group process stopped normally."),
    "OGG-00992": Message(_I, "A group process is starting."),
    "OGG-00993": Message(_I, "A group process started."),
    "OGG-01004": Message(_E, "A statement failed in the target database."),
    "OGG-01012": Message(_E, "SKIPTRANS / FORCETRANS named no open transaction."),
    "OGG-01027": Message(_W, "A long-running transaction (WARNLONGTRANS)."),
    "OGG-01028": Message(_E, "The group is not defined."),
    "OGG-01029": Message(_I, "A FORCETRANS / SKIPTRANS request was carried out."),
    "OGG-01031": Message(_E, "A trail file cannot be opened or written."),
    "OGG-01044": Message(_E, "The trail to read or write is not given."),
    "OGG-01055": Message(_I, "Recovery initialization of the output trail completed."),
    "OGG-01090": Message(_I, "The Manager restarts a group (AUTORESTART)."),
    "OGG-01091": Message(_E, "A file the process needs cannot be opened."),
    "OGG-01093": Message(_W, "AUTORESTART gave up on a group: retries exhausted."),
    "OGG-01148": Message(_W, "A group is down (the Manager's DOWNREPORT check)."),
    "OGG-01153": Message(_E, "A started group did not stay up (STARTUPVALIDATIONDELAY)."),
    "OGG-01172": Message(_W, "DISCARDFILE reached its size limit: records are only counted."),
    "OGG-01184": Message(_E, "A trail record fails its checksum or cannot be decoded."),
    "OGG-01223": Message(_W, "No port of DYNAMICPORTLIST is free for a Collector."),
    "OGG-01224": Message(_W, "The pump's link to its Collector failed (TCPERRS: retry or abend)."),
    "OGG-01229": Message(_I, "A Collector was started, or a pump connected to it."),
    "OGG-01230": Message(_I, "A pump closed its connection to the Collector."),
    "OGG-01232": Message(_E, "A Collector session ended on an error or a lost link."),
    "OGG-01296": Message(_E, "A table cannot be mapped (no definition for it in the trail)."),
    "OGG-01431": Message(
        _W, "A captured column's type is not decoded from Oracle redo; the column is left out."
    ),
    "OGG-01433": Message(
        _E,
        "Oracle redo capture stops: a captured table changed structure or a row is undecodable.",
    ),
    "OGG-01454": Message(_E, "The process lock or home cannot be taken."),
    "OGG-01496": Message(_E, "A trail and its checkpoint disagree (the trail is shorter)."),
    "OGG-01515": Message(_I, "Positioning to the recovery checkpoint."),
    "OGG-01516": Message(_I, "Transactions already in the trail are skipped on restart."),
    "OGG-01520": Message(_I, "ETROLLOVER: the trail was rolled over."),
    "OGG-01574": Message(_E, "A Bounded Recovery checkpoint failed (I/O)."),
    "OGG-01631": Message(_I, "A Bounded Recovery checkpoint completed."),
    "OGG-01635": Message(_I, "Normal recovery (BR reset or not usable)."),
    "OGG-01641": Message(_I, "Bounded Recovery: the recovery start position."),
    "OGG-01642": Message(_I, "Bounded Recovery: the recovery end position."),
    "OGG-01643": Message(_I, "Bounded Recovery canceled: fall back to normal recovery."),
    "OGG-01644": Message(_I, "Bounded Recovery completed: persisted transactions restored."),
    "OGG-01666": Message(_W, "A group process was killed (KILL)."),
    "OGG-01668": Message(_E, "PROCESS ABENDING (and other abends with no code of their own)."),
    "OGG-01678": Message(_I, "A static Collector listens on its port."),
    "OGG-01705": Message(_E, "A read checkpoint lies past the end of its trail file."),
    "OGG-01706": Message(_W, "A REPERROR response is not supported; the default applies."),
    "OGG-01738": Message(_I, "A Bounded Recovery checkpoint was written."),
    "OGG-01740": Message(_I, "A trail was recovered (append mode) at start."),
    "OGG-01741": Message(_I, "Transactions lost from a cut-short trail are written again."),
    "OGG-01880": Message(_W, "A GLOBALS ALLOWOUTPUTDIR is the home itself: it allows nothing."),
    "OGG-01881": Message(_E, "A pump's RMTTRAIL is in the home directory itself: refused."),
    "OGG-01882": Message(_E, "A pump's RMTTRAIL is in no directory ALLOWOUTPUTDIR allows."),
    "OGG-01923": Message(_W, "An update's key was not in the redo and could not be fetched."),
    "OGG-01924": Message(_E, "MISSINGROW ABEND: a key could not be fetched."),
    "OGG-01967": Message(_W, "The orphaned-transaction scan failed."),
    "OGG-01972": Message(_I, "An orphaned transaction was purged."),
    "OGG-02028": Message(_E, "An archived log of another incarnation (resetlogs id) was refused."),
    "OGG-02340": Message(_E, "TRANLOGOPTIONS EXCLUDEUSER names a catalog that is no container."),
    "OGG-02544": Message(_W, "The Replicat has no checkpoint table."),
    "OGG-02545": Message(_I, "A checkpoint table was upgraded."),
    "OGG-02636": Message(_E, "A TABLE name selects a table in two containers: name one."),
    "OGG-02937": Message(_I, "No valid Bounded Recovery checkpoint was found."),
    "OGG-03600": Message(
        _I,
        "An embedded database's open ran instance recovery: changes rolled forward, "
        "transactions rolled back (a code of ours).",
    ),
    "OGG-06505": Message(_I, "The Replicat connected to its target database."),
    "OGG-06506": Message(_I, "The Replicat restarts at its checkpoint table's position."),
    "OGG-06510": Message(_I, "A lakehouse table was created, widened, or records where to resume."),
    "OGG-10019": Message(_I, "Bounded Recovery is not used in this run."),
    "OGG-10144": Message(_E, "The parameter file has errors."),
    "OGG-14000": Message(_I, "The heartbeat table was created."),
    "OGG-14001": Message(_I, "The heartbeat seed table was created."),
    "OGG-14003": Message(_I, "The heartbeat seed table was populated."),
    "OGG-14005": Message(_I, "The heartbeat update job was scheduled."),
    "OGG-14006": Message(_I, "The heartbeat update job was deleted."),
    "OGG-14010": Message(_I, "The heartbeat update frequency was changed."),
    "OGG-14011": Message(_I, "The heartbeat retention time was changed."),
    "OGG-14012": Message(_I, "The heartbeat purge frequency was changed."),
    "OGG-14013": Message(_I, "The heartbeat table's TARGETONLY setting was changed."),
    "OGG-14014": Message(_I, "Heartbeat entries were deleted."),
    "OGG-14016": Message(_I, "The heartbeat history table was created."),
    "OGG-14018": Message(_I, "The heartbeat purge job was scheduled."),
    "OGG-14019": Message(_I, "The heartbeat purge job was deleted."),
    "OGG-14023": Message(_I, "The GG_LAG view was created."),
    "OGG-14024": Message(_I, "The GG_LAG_HISTORY view was created."),
    "OGG-14025": Message(_I, "The GG_LAG view was dropped."),
    "OGG-14026": Message(_I, "The GG_LAG_HISTORY view was dropped."),
    "OGG-14027": Message(_I, "The heartbeat history table was dropped."),
    "OGG-14028": Message(_I, "The heartbeat table was dropped."),
    "OGG-14029": Message(_I, "The heartbeat seed table was dropped."),
    "OGG-14030": Message(_I, "The heartbeat settings table was dropped."),
    "OGG-14032": Message(_I, "Supplemental logging added for the heartbeat seed table."),
    "OGG-14033": Message(_I, "Supplemental logging added for the heartbeat table."),
    "OGG-14040": Message(_E, "The heartbeat table exists already."),
    "OGG-14090": Message(_I, "The heartbeat settings table was created."),
    "OGG-14091": Message(_I, "The Manager runs the heartbeat jobs (no scheduler in the database)."),
    "OGG-14095": Message(_W, "A heartbeat job run failed; it is retried."),
    "OGG-14096": Message(_W, "The target database has no heartbeat tables."),
    "OGG-25140": Message(_E, "SKIPTRANS: only the oldest open transaction can be skipped."),
    "OGG-25141": Message(_E, "FORCETRANS: only the oldest open transaction can be forced."),
    "OGG-08100": Message(
        _E, "DELETE EXTRACT of a group registered with a PostgreSQL database (UNREGISTER first)."
    ),
    "OGG-25355": Message(_I, "REGISTER EXTRACT created the group's PostgreSQL replication slot."),
    "OGG-25356": Message(_E, "REGISTER EXTRACT of a group that is registered already."),
    "OGG-25357": Message(_E, "The PostgreSQL replication slot cannot be created."),
    "OGG-25358": Message(
        _E, "UNREGISTER EXTRACT refused (not registered, another database, slot active)."
    ),
    "OGG-25359": Message(_I, "UNREGISTER EXTRACT dropped the group's replication slot."),
    "OGG-25360": Message(_E, "The PostgreSQL Extract is not registered, or with another database."),
    "OGG-25361": Message(_E, "The PostgreSQL Extract's replication slot does not exist."),
    "OGG-25362": Message(_E, "The replication slot lost the WAL it needs."),
    "OGG-25363": Message(
        _E, "The replication slot is past the checkpoint: changes were consumed elsewhere."
    ),
    "OGG-25364": Message(
        _W, "A captured PostgreSQL column has an unsupported type; its values are not written."
    ),
    "OGG-25365": Message(_W, "A captured table's REPLICA IDENTITY cannot identify its rows."),
    "OGG-25366": Message(_E, "The PostgreSQL source failed while its replication slot was read."),
    "OGG-25370": Message(
        _W, "The Extract's Spark master is on the network, its traffic not authenticated/encrypted."
    ),
}


def markdown() -> str:
    """docs/messages.md: the table, as generated."""
    lines = [
        "# OGG messages",
        "",
        "Generated from `engine/messages.py` by `python -m engine.messages --write`; a test keeps",
        "the two in step and holds the code base to the table. Each line of `ggserr.log` and of a",
        'report carries one of these codes (docs/ggsci.md, "Events").',
        "",
        "| code | severity | meaning |",
        "|---|---|---|",
    ]
    lines += [f"| {code} | {m.severity} | {m.meaning} |" for code, m in sorted(MESSAGES.items())]
    return "\n".join(lines) + "\n"


DOC = Path(__file__).resolve().parents[1] / "docs" / "messages.md"


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        DOC.write_text(markdown())
        return 0
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
