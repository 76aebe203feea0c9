"""The GGSCI command grammar: the real corpus, typed results, and errors with a column."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ggsci.commands import models as M
from ggsci.commands.parse import is_blank_or_comment, parse_command, render_error

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "real"
HEREDOC_START = re.compile(r"ggsci\s*<<\s*'?(\w+)'?\s*$")


def heredoc_commands(text: str) -> list[str]:
    """The lines of every ``ggsci << EOF`` block of a shell script."""
    out: list[str] = []
    end: str | None = None
    for line in text.splitlines():
        if end is None:
            m = HEREDOC_START.search(line)
            if m:
                end = m.group(1)
        elif line.strip() == end:
            end = None
        elif not is_blank_or_comment(line):
            out.append(line.strip())
    return out


def corpus_lines() -> list[tuple[str, str]]:
    if not CORPUS.is_dir():
        return []
    lines: list[tuple[str, str]] = []
    for path in sorted((CORPUS / "obey").glob("*")):
        lines += [
            (path.name, ln.strip())
            for ln in path.read_text().splitlines()
            if not is_blank_or_comment(ln)
        ]
    for path in sorted((CORPUS / "embedded").glob("*")):
        lines += [(path.name, ln) for ln in heredoc_commands(path.read_text())]
    return lines


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present in this checkout")
def test_every_corpus_command_parses() -> None:
    lines = corpus_lines()
    assert len(lines) > 40
    failures = []
    for name, line in lines:
        try:
            parse_command(line)
        except M.CommandError as exc:
            failures.append(f"{name}: {render_error(line, exc)}")
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present in this checkout")
def test_oracle_only_corpus_commands_are_answered_not_rejected() -> None:
    offered = [parse_command(line) for _, line in corpus_lines()]
    not_offered = {c.command for c in offered if isinstance(c, M.NotOffered)}
    assert {"CREATE WALLET", "ADD MASTERKEY", "ADD TRANDATA", "REGISTER EXTRACT"} <= not_offered


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "ADD EXTRACT HRTEST, TRANLOG, BEGIN NOW",
            M.AddGroup("EXTRACT", "HRTEST", M.GroupOptions(source="TRANLOG", begin="NOW")),
        ),
        (
            "add ext finance tranlog scn 123456",
            M.AddGroup("EXTRACT", "FINANCE", M.GroupOptions(source="TRANLOG", scn=123456)),
        ),
        (
            "ADD EXTRACT pump, EXTTRAILSOURCE dirdat/lt",
            M.AddGroup(
                "EXTRACT", "PUMP", M.GroupOptions(source="EXTTRAILSOURCE", source_path="dirdat/lt")
            ),
        ),
        (
            "add extract e1, tranlog, begin 2011-01-21 08:00, threads 4",
            M.AddGroup(
                "EXTRACT",
                "E1",
                M.GroupOptions(source="TRANLOG", begin="2011-01-21 08:00", threads=4),
            ),
        ),
        (
            "ADD EXTRACT e, INTEGRATED TRANLOG, BEGIN NOW",
            M.AddGroup("EXTRACT", "E", M.GroupOptions(integrated=True, begin="NOW")),
        ),
        (
            "ADD REPLICAT r1, EXTTRAIL ./dirdat/rt, CHECKPOINTTABLE gg.ckpt, DESC 'a, b'",
            M.AddGroup(
                "REPLICAT",
                "R1",
                M.GroupOptions(
                    source="EXTTRAIL",
                    source_path="./dirdat/rt",
                    checkpointtable="gg.ckpt",
                    desc="a, b",
                ),
            ),
        ),
        (
            "alter EXT_ALO, extseqno 17, extrba 9194144, thread 1",
            M.AlterGroup(None, "EXT_ALO", M.GroupOptions(extseqno=17, extrba=9194144, thread=1)),
        ),
        (
            "ALTER EXTRACT fin, ETROLLOVER",
            M.AlterGroup("EXTRACT", "FIN", M.GroupOptions(etrollover=True)),
        ),
        (
            "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1, MEGABYTES 50",
            M.AddTrail("EXTTRAIL", "./dirdat/lt", "EXT1", megabytes=50),
        ),
        (
            "add rmttrail /r/dirdat/rt extract pump seqno 3",
            M.AddTrail("RMTTRAIL", "/r/dirdat/rt", "PUMP", seqno=3),
        ),
        ("INFO ALL", M.InfoAll(None)),
        ("info all allprocesses", M.InfoAll("ALLPROCESSES")),
        ("info extract ext*, showch", M.InfoGroup("EXTRACT", "EXT*", showch=0)),
        ("INFO EXTRACT e1, SHOWCH 3, DETAIL", M.InfoGroup("EXTRACT", "E1", True, 3)),
        ("status extract *ext*, allprocesses", M.StatusGroup("EXTRACT", "*EXT*")),
        ("STOP ER *", M.StopGroup(None, "*")),
        ("stop mgr !", M.ManagerCommand("STOP", True)),
        ("START MGR", M.ManagerCommand("START")),
        ("start HRTEST", M.StartGroup(None, "HRTEST")),
        ("KILL REPLICAT r1", M.KillGroup("REPLICAT", "R1")),
        ("DELETE EXTRACT e* !", M.DeleteGroup("EXTRACT", "E*", True)),
        ("lag extract *", M.LagGroup("EXTRACT", "*")),
        ("send c11,showtrans", M.SendGroup(None, "C11", "showtrans")),
        (
            "SEND EXTRACT ext1, SHOWTRANS COUNT 5 TABULAR",
            M.SendGroup("EXTRACT", "EXT1", "SHOWTRANS COUNT 5 TABULAR"),
        ),
        ("SEND MANAGER CHILDSTATUS", M.SendManager("CHILDSTATUS")),
        ("DBLOGIN USERIDALIAS gg1 DOMAIN d", M.DbLogin(alias="gg1", domain="d")),
        (
            "DBLOGIN USERID c##ggs_admin@ORCLPDB1, PASSWORD ggs_admin",
            M.DbLogin(userid="c##ggs_admin@ORCLPDB1", password="ggs_admin"),
        ),
        (
            "ALTER CREDENTIALSTORE ADD USER u1, PASSWORD p1, ALIAS a1",
            M.AlterCredentialStore("ADD", "u1", "p1", "a1"),
        ),
        (
            "alter credentialstore delete user u1 alias a1",
            M.AlterCredentialStore("DELETE", "u1", None, "a1"),
        ),
        ("INFO CREDENTIALSTORE DOMAIN d", M.InfoCredentialStore("d")),
        ("VIEW PARAMS ./GLOBALS", M.ViewParams("./GLOBALS")),
        ("edit param ext1", M.EditParams("ext1")),
        ("VIEW REPORT ext1", M.ViewReport("ext1")),
        ("view ggsevt", M.ViewGgsevt()),
        ("HISTORY 5", M.History(5)),
        ("!", M.Recall("", edit=False)),
        ("! -2", M.Recall("-2", edit=False)),
        ("!sta", M.Recall("sta", edit=False)),
        ("FC 3", M.Recall("3", edit=True)),
        ("SHELL ls -l dirprm", M.Shell("ls -l dirprm")),
        ("OBEY ./dirprm/setup.oby", M.Obey("./dirprm/setup.oby")),
        ("ALLOWNESTED", M.AllowNested(True)),
        ("help add extract", M.Help(("ADD", "EXTRACT"))),
        ("ADD CHECKPOINTTABLE gg.chkpt", M.CheckpointTableCommand("ADD", "gg.chkpt")),
        ("quit", M.Exit()),
    ],
)
def test_typed_results(line: str, expected: M.Command) -> None:
    assert parse_command(line) == expected


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("ADD EXTRAKT foo", 4, "Expected EXTRACT | REPLICAT"),
        ("ADD EXTRACT e1, TRANLOG, BEGINX NOW", 25, "Unexpected 'BEGINX'"),
        ("ADD EXTRACT e1, TRANLOG, BEGIN", 30, "Expected NOW or a timestamp"),
        ("ADD EXTRACT e1, EXTTRAIL x", 16, "EXTTRAIL is not an option of ADD EXTRACT"),
        ("ADD EXTRACT e1 TRANLOG TRANLOG", 23, "TRANLOG is given twice"),
        ("ADD EXTRACT e1, EXTRBA 5", 16, "EXTRBA needs EXTSEQNO"),
        ("ADD EXTTRAIL dirdat/lt", 22, "ADD EXTTRAIL needs EXTRACT group"),
        ("INFO EXTRACT", 12, "Expected group name"),
        ("FROB ALL", 0, "Invalid command: FROB"),
        ("DBLOGIN USERIDALIAS a USERID b", 22, "either USERIDALIAS or USERID"),
        ("START EXTRACT e1 ATCSN x", 23, "Expected number"),
    ],
)
def test_errors_point_at_the_fault(line: str, column: int, message: str) -> None:
    with pytest.raises(M.CommandError) as info:
        parse_command(line)
    assert info.value.column == column
    assert message in info.value.message
    rendered = render_error(line, info.value).splitlines()
    assert rendered[0].startswith("ERROR: ")
    assert rendered[2].index("^") == column + 2
