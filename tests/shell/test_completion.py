"""Completion: the pure ``suggest`` over every prefix of long lines, and the Completer."""

from __future__ import annotations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from engine.home.layout import Home
from ggsci.shell.completion import GGSCICompleter, candidates, path_candidates, suggest
from ggsci.shell.lexer import classify

from .conftest import Shell

LONG_LINES = [
    "ADD EXTRACT EXT1, TRANLOG, BEGIN NOW, THREADS 2, PARAMS dirprm/ext1.prm, DESC 'x'",
    "ADD EXTTRAIL ./dirdat/lt, EXTRACT EXT1, MEGABYTES 100, SEQNO 3",
    "ADD REPLICAT REP1, EXTTRAIL ./dirdat/lt, CHECKPOINTTABLE gg.ckpt, BEGIN NOW",
    "ALTER EXTRACT EXT1, EXTSEQNO 26, EXTRBA 338, THREAD 1",
    "INFO EXTRACT EXT1, SHOWCH 3, DETAIL",
    "START EXTRACT EXT1 ATCSN 100",
    "SEND EXTRACT EXT1, SHOWTRANS COUNT 5",
    "DBLOGIN USERIDALIAS gg1 DOMAIN dom",
    "ALTER CREDENTIALSTORE ADD USER u1 PASSWORD p ALIAS a1",
    "VIEW PARAMS dirprm/ext1.prm",
    "STOP MANAGER !",
]


def _groups(kind: str | None) -> list[str]:
    return [g for g in ("EXT1", "REP1") if kind in (None, "EXTRACT" if g == "EXT1" else "REPLICAT")]


def _paths(prefix: str) -> list[str]:
    return [
        p for p in ("dirprm/", "dirprm/ext1.prm", "dirdat/", "./dirdat/lt") if p.startswith(prefix)
    ]


@pytest.mark.parametrize("line", LONG_LINES)
def test_every_prefix_is_handled_and_keywords_are_offered(line: str) -> None:
    """At each word start, a keyword or group about to be typed is among the candidates."""
    keywords_expected = 0
    for end in range(len(line) + 1):
        s = suggest(line[:end])
        found = candidates(s, _groups, _paths)
        if end and line[end - 1] in " ," and end < len(line) and line[end] not in " ,!'":
            word = line[end:].replace(",", " ").split()[0]
            if word.upper() in {k.upper() for k in s.keywords} or word in ("EXT1", "REP1"):
                assert word in found or word.lower() in found, (line[:end], word)
                keywords_expected += 1
    assert keywords_expected >= 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "ADD"),
        ("ad", "add"),
        ("AD", "ADD"),
        ("ADD ", "EXTRACT"),
        ("add ex", "extract"),
        ("ADD EXTRACT EXT1, ", "TRANLOG"),
        ("ADD EXTRACT EXT1, TRANLOG, BEGIN ", "NOW"),
        ("ADD REPLICAT R, ", "EXTTRAIL"),
        ("INFO ", "ALL"),
        ("INFO EXTRACT ", "EXT1"),
        ("START ", "EXT1"),
        ("INFO EXTRACT EXT1, ", "SHOWCH"),
        ("SEND EXTRACT EXT1, ", "SHOWTRANS"),
        ("SEND MANAGER ", "CHILDSTATUS"),
        ("ADD EXTTRAIL ", "./dirdat/lt"),
        ("ADD EXTTRAIL ./dirdat/lt, ", "EXTRACT"),
        ("ADD EXTTRAIL ./dirdat/lt, EXTRACT ", "EXT1"),
        ("DBLOGIN ", "USERIDALIAS"),
        ("ALTER CREDENTIALSTORE ", "ADD"),
        ("OBEY dirp", "dirprm/"),
        ("HELP ", "ADD"),
    ],
)
def test_suggestions(text: str, expected: str) -> None:
    assert expected in candidates(suggest(text), _groups, _paths)


def test_used_options_are_not_offered_again() -> None:
    found = candidates(suggest("ADD EXTRACT E, TRANLOG, BEGIN NOW, "), _groups, _paths)
    assert "BEGIN" not in found and "TRANLOG" not in found and "THREADS" in found
    assert candidates(suggest("ADD EXTRACT E, THREADS "), _groups, _paths) == []


def test_completer_reads_groups_and_files_of_the_home(shell: Shell, home: Home) -> None:
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/lt")
    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\n")
    completer = GGSCICompleter(home)

    def complete(text: str) -> list[str]:
        doc = Document(text, len(text))
        return [c.text for c in completer.get_completions(doc, CompleteEvent())]

    assert complete("START EXTRACT ") == ["EXT1"]
    assert complete("STATUS ER ") == ["EXT1", "REP1"]
    assert complete("VIEW PARAMS dirprm/e") == ["dirprm/ext1.prm"]
    assert "dirprm/" in complete("OBEY ")


def test_path_candidates(home: Home) -> None:
    (home.dirprm / "a.prm").write_text("")
    assert path_candidates(home.root, "dirpr") == ["dirprm/"]
    assert path_candidates(home.root, "dirprm/") == ["dirprm/a.prm"]
    assert path_candidates(home.root, "nosuch/x") == []


def test_highlighting_classes() -> None:
    tokens = classify("add extract ext1, tranlog, begin now, desc 'x y', threads 2")
    styles = {text: style for style, text in tokens}
    assert styles["add"] == "class:verb"
    assert styles["extract"] == "class:keyword"
    assert styles["ext1"] == ""
    assert styles["'x y'"] == "class:string"
    assert styles["2"] == "class:number"
    assert classify("frob all")[0] == ("class:error", "frob")
    assert classify("-- note") == [("class:comment", "-- note")]
