"""GLOBALS ALLOWOUTPUTDIR: a pump an ACCESSRULE lets in may have its RMTTRAIL written only
where the target home allows (engine/manager/outputdirs.py). Before, any directory of the
target home would do: ``./dircrd/x``, ``./dirprm/x`` (beside the credential store and the
parameter files). A refusal is an ERROR frame EACCES whose text carries the OGG line (the
pump abends with it) and one ggserr.log line with that code; nothing is written."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from engine.home.layout import Home
from engine.manager.collector import CollectorSession
from engine.runtime.events import Severity
from engine.runtime.wire import VERSION, Kind, Link
from params.check import check_text


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "target")
    h.create_subdirs()
    return h


def _hello(home: Home, name: str) -> tuple[Kind, dict[str, object], list[tuple[str, str]]]:
    """A pump's HELLO naming RMTTRAIL ``name``: the Collector's answer and its events."""
    ours, theirs = socket.socketpair()
    events: list[tuple[str, Severity, str]] = []
    t = threading.Thread(
        target=CollectorSession(home, theirs, "127.0.0.1", lambda *e: events.append(e)).serve
    )
    t.start()
    link = Link(ours, timeout=10)
    trail = {"path": name, "group": "PMP", "megabytes": 10}
    link.send_json(Kind.HELLO, {"version": VERSION, "trail": trail})
    frame = link.receive()
    link.close()
    t.join(10)
    assert not t.is_alive()
    body = frame.json() if frame.kind == Kind.ERROR else {}
    return frame.kind, body, [(c, t) for c, s, t in events if s != Severity.INFO]


def _refused(home: Home, name: str, code: str, says: str) -> None:
    before = sorted(str(p) for p in home.root.rglob("*"))
    kind, body, events = _hello(home, name)
    assert kind == Kind.ERROR and body["name"] == "EACCES", body
    text = str(body["text"])
    assert text.startswith(f"{code} ") and says in text and "\n" not in text, text
    assert [c for c, _t in events][-1] == code, events
    assert says in events[-1][1] and events[-1][1].startswith("Collector for 127.0.0.1: ")
    assert sorted(str(p) for p in home.root.rglob("*")) == before


@pytest.mark.parametrize("own", ["dircrd", "dirprm", "dirchk", "dirpcs", "dirdb", "BR"])
def test_without_allowoutputdir_the_homes_own_directories_are_refused(home: Home, own: str) -> None:
    _refused(home, f"./{own}/xx", "OGG-01882", f"({own}/ is the home's own directory")
    _refused(home, f"{home.root}/{own}/sub/xx", "OGG-01882", "is not in any allowed output")


def test_without_allowoutputdir_a_trail_in_the_home_itself_or_outside_is_refused(
    home: Home,
) -> None:
    _refused(home, "xx", "OGG-01881", "Output file xx in the GoldenGate installation directory")
    _refused(home, "../elsewhere/xx", "OGG-01882", "without ALLOWOUTPUTDIR in GLOBALS")


@pytest.mark.parametrize("name", ["./dirdat/xx", "./dirrmt/bb", "dirrmt/sub/bb"])
def test_without_allowoutputdir_trail_directories_are_allowed(home: Home, name: str) -> None:
    kind, body, events = _hello(home, name)
    assert kind == Kind.WELCOME, body
    assert [c for c, _t in events] == ["OGG-01232"], events  # only the test's pump hanging up


def test_allowoutputdir_allows_its_directories_only(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "trails"
    (outside / "east").mkdir(parents=True)
    (home.root / "dirrmt").mkdir()
    link = tmp_path / "link-to-trails"
    link.symlink_to(outside)
    home.globals_file.write_text(
        f"ALLOWOUTPUTDIR {link}\nALLOWOUTPUTDIR ./dirrmt\nALLOWOUTPUTDIR ./absent\n"
        "ALLOWOUTPUTDIR .\n"
    )
    for name in (f"{outside}/east/bb", f"{link}/bb", "./dirrmt/bb"):
        kind, body, events = _hello(home, name)
        assert kind == Kind.WELCOME, (name, body)
        codes = [c for c, _t in events]
        # ./absent and . are named and allow nothing; then the test's pump hangs up (01232)
        assert codes == ["OGG-01882", "OGG-01880", "OGG-01232"], events
        assert "ALLOWOUTPUTDIR ./absent does not exist" in events[0][1]
    _refused(home, "./dirdat/xx", "OGG-01882", f"(GLOBALS ALLOWOUTPUTDIR: {outside}, ")
    _refused(home, str(tmp_path / "xx"), "OGG-01882", "is not in any allowed output directories")
    _refused(home, "./dircrd/xx", "OGG-01882", "dircrd/ is the home's own directory")


def test_a_globals_with_errors_allows_nothing(home: Home) -> None:
    home.globals_file.write_text("ALLOWOUTPUTDIR a b\n")
    _refused(home, "./dirdat/xx", "OGG-01882", "GLOBALS has 1 error(s), so no output directory")


def test_params_check_of_allowoutputdir() -> None:
    ok = check_text("ALLOWOUTPUTDIR ./dirrmt\nALLOWOUTPUTDIR '/data/x y'\n", is_globals=True)
    assert ok.ok and ok.model.allow_output_dirs == ("./dirrmt", "/data/x y")
    for text, message in (
        ("ALLOWOUTPUTDIR\n", "a directory name expected"),
        ("ALLOWOUTPUTDIR a b\n", "one directory a statement"),
    ):
        r = check_text(text, is_globals=True)
        assert [e.message for e in r.errors] == [f"ALLOWOUTPUTDIR: {message}"], r.errors
    r = check_text("EXTRACT e1\nALLOWOUTPUTDIR ./dirrmt\n")
    assert [e.message for e in r.errors] == [
        "ALLOWOUTPUTDIR belongs in GLOBALS (the Collector reads it there)"
    ]
