"""A pump names its RMTTRAIL in its HELLO; the Collector resolves it in its own home. A name
with a NUL (which no file has) or too long to resolve raised ``ValueError``/``OSError`` out
of the session's thread (a traceback, no answer to the pump); now it is refused like a name
outside the home: an ERROR frame ``EACCES`` (the pump abends: no retry mends a name), one
OGG-01232 line, nothing written."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from engine.home.layout import Home
from engine.manager.collector import CollectorSession
from engine.runtime.events import Severity
from engine.runtime.wire import VERSION, Kind, Link


@pytest.mark.parametrize(
    "name",
    ["dirrmt/a\x00b", "dirrmt/b\nc", "dirrmt/" + "x" * 5000, "dirrmt/" + "d/" * 3000 + "bb"],
)
def test_a_trail_name_that_names_no_file_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    home = Home(tmp_path / "target")
    home.create_subdirs()
    before = sorted(p.name for p in home.root.rglob("*"))
    ours, theirs = socket.socketpair()
    events: list[tuple[str, Severity, str]] = []
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            CollectorSession(home, theirs, "127.0.0.1", lambda *e: events.append(e)).serve()
        except BaseException as exc:  # what escaped the session: the bug
            errors.append(exc)

    t = threading.Thread(target=serve)
    t.start()
    link = Link(ours, timeout=10)
    trail = {"path": name, "group": "PMP", "megabytes": 10}
    link.send_json(Kind.HELLO, {"version": VERSION, "trail": trail})
    reply = link.expect(Kind.ERROR).json()
    t.join(10)
    link.close()
    assert not t.is_alive() and errors == []
    assert reply["name"] == "EACCES" and "RMTTRAIL" in reply["text"], reply
    ((code, severity, text),) = events
    assert (code, severity) == ("OGG-01232", Severity.ERROR) and "\n" not in text
    assert len(text) < 300
    assert sorted(p.name for p in home.root.rglob("*")) == before
