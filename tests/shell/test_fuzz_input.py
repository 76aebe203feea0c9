"""Fuzzing every place that reads input a user (or a damaged file) supplies (issue 12).

Random bytes (invalid UTF-8, NUL, control characters, long runs) and mutations of valid input
go to: the GGSCI command parser and dispatcher, ``ggsci run``, standard input, obey files
(run and ``--syntax-only``), ``params check``, the dump parser, the dictionary loader and
Logdump (text, JSON, the interactive session) over byte flips of a valid trail. Each must
return normally or raise only the project's own error type for that input (``CommandError``,
``DumpSyntaxError``/``SourceError``, ``TrailError``), never anything else; GGSCI never prints
a traceback and writes one ggserr.log line per event.

Commands that would act outside the test's home (START, SHELL, EDIT, DBLOGIN, SEND...) are
parsed for real and then handed to a recorder instead of their handler.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded.dictionary import load_dictionary
from engine.embedded.dump_parse import parse_dump
from engine.embedded.errors import SourceError
from engine.home.layout import Home
from engine.logdump.dump import dump_files
from engine.logdump.session import LogdumpSession
from engine.logdump.views import DisplayOptions
from engine.trail import IOType, TableDef, TrailRecord, TrailWriter, TransInd, encode_record
from engine.trail.errors import TrailError
from ggsci.commands import models as M
from ggsci.commands.keywords import VERBS
from ggsci.commands.parse import parse_command
from ggsci.dispatch import table
from ggsci.runner import run_commands, run_stream, stream_session, syntax_errors
from ggsci.session import Session
from ggsci.textin import clean
from params.check import check_file

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
VECTORS = Path(__file__).parents[1] / "source" / "vectors"
EVENT_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  [A-Z]+ +\S+  .*:  .*$")
UNSAFE = (
    M.Shell,
    M.EditParams,
    M.DbLogin,
    M.ManagerCommand,
    M.SendManager,
    M.StartGroup,
    M.StopGroup,
    M.KillGroup,
    M.SendGroup,
    M.LagGroup,
    M.CheckpointTableCommand,
    M.HeartbeatTableCommand,
    M.DeleteHeartbeatEntry,
)

# Bytes as they arrive: anything, with the awkward ones (bad UTF-8, NUL, controls) likely.
awkward = st.sampled_from(
    [b"\xff", b"\xfe\xfe", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\x00", b"\x1b[2J", b"\r", b"\t"]
)
raw_bytes = st.lists(st.one_of(st.binary(max_size=24), awkward), max_size=12).map(b"".join)
words = st.sampled_from([*VERBS, "EXTRACT", "REPLICAT", "ALL", "e1", ",", "*", "!", "--", "PARAMS"])
command_bytes = st.lists(st.one_of(words.map(str.encode), raw_bytes), min_size=1, max_size=8).map(
    b" ".join
)
long_bytes = st.sampled_from([b"INFO " + b"x" * 5000, b"\xff" * 4097, b"A" * 100_000])
any_command = st.one_of(command_bytes, raw_bytes, long_bytes)


def argv_text(data: bytes) -> str:
    """How Python hands undecodable bytes over from the terminal, argv or a pipe."""
    return data.decode("utf-8", errors="surrogateescape")


def _recorder(session: Session, command: M.Command) -> None:
    session.say(f"(not run in the fuzz test: {type(command).__name__})")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Home]:
    """A home of its own, with the commands that act outside it replaced by a recorder."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        for kind in list(table.HANDLERS):
            if issubclass(kind, UNSAFE):
                mp.setitem(table.HANDLERS, kind, _recorder)
        home = Home(Path(tmp) / "gghome")
        home.create_subdirs()
        (home.dirprm / "e1.prm").write_bytes(b"EXTRACT e1\n-- \xe9\xff\nTABLE a.*;\n")
        yield home


def _no_traceback(out: str, home: Home) -> None:
    """No traceback; what was printed is valid UTF-8 (a strict terminal can show it); every
    ggserr.log line is one whole event."""
    assert "Traceback" not in out
    out.encode("utf-8")
    if home.ggserr_log.exists():
        for line in home.ggserr_log.read_bytes().decode().splitlines():
            assert EVENT_LINE.match(line), line


@FUZZ
@given(data=any_command)
def test_parser_raises_only_command_error(data: bytes) -> None:
    text = clean(argv_text(data).strip())
    if not text:
        return
    try:
        assert isinstance(parse_command(text), M.Command)
    except M.CommandError as exc:
        assert "\n" not in exc.message


@FUZZ
@given(data=any_command)
def test_dispatcher_answers_every_line(sandbox: Home, data: bytes) -> None:
    out = io.StringIO()
    session = stream_session(sandbox, iter([]), out)
    outcome = table.execute(session, argv_text(data))
    assert outcome.ok in (True, False)
    _no_traceback(out.getvalue(), sandbox)


@FUZZ
@given(commands=st.lists(any_command, min_size=1, max_size=3))
def test_ggsci_run_answers_every_argument(sandbox: Home, commands: list[bytes]) -> None:
    out = io.StringIO()
    status = run_commands(sandbox, [argv_text(c) for c in commands], out, stdin=[])
    assert status in (0, 1)
    _no_traceback(out.getvalue(), sandbox)


@FUZZ
@given(lines=st.lists(any_command, max_size=4))
def test_standard_input_answers_every_line(sandbox: Home, lines: list[bytes]) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"\n".join(lines)), encoding="utf-8", errors="replace")
    out = io.StringIO()
    assert run_stream(sandbox, stdin, out) in (0, 1)
    _no_traceback(out.getvalue(), sandbox)


@FUZZ
@given(lines=st.lists(any_command, max_size=4))
def test_obey_files_run_and_syntax_check(sandbox: Home, lines: list[bytes]) -> None:
    script = sandbox.root / "fuzz.oby"
    script.write_bytes(b"\n".join(lines))
    out = io.StringIO()
    session = stream_session(sandbox, iter([]), out)
    assert table.execute(session, f'OBEY "{script}"').ok in (True, False)
    _no_traceback(out.getvalue(), sandbox)
    for error in syntax_errors(script):
        assert error.startswith(f"{script}:") and "\n" not in error


@FUZZ
@given(head=st.sampled_from([b"", b"EXTRACT e1\n", b"REPLICAT r1\n"]), body=raw_bytes)
def test_params_check_reads_any_parameter_file(sandbox: Home, head: bytes, body: bytes) -> None:
    prm = sandbox.root / "fuzz.prm"
    prm.write_bytes(head + body + b"\nTABLE a.\xe9*;\n")
    result = check_file(prm)
    assert result.ok in (True, False)


DUMP_LINES = (VECTORS / "01_single_row_insert.dump").read_text().splitlines(True)


@st.composite
def mutated_dump(draw: st.DrawFn) -> list[str]:
    """The seed dump with lines dropped, repeated, or with bytes in them replaced."""
    lines = list(DUMP_LINES)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "repeat", "garble", "digits"]))
        if op == "drop":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "garble":
            lines[i] = draw(raw_bytes).decode("utf-8", errors="replace") + "\n"
        else:
            lines[i] = re.sub(r"[0-9a-f]", lambda _: draw(st.sampled_from("0f9")), lines[i])
        if not lines:
            break
    return lines


@FUZZ
@given(
    lines=st.one_of(
        mutated_dump(), raw_bytes.map(lambda b: b.decode("utf-8", "replace").splitlines(True))
    )
)
def test_dump_parser_raises_only_source_errors(lines: list[str]) -> None:
    try:
        parse_dump(lines, source="fuzz.dump")
    except SourceError as exc:
        assert str(exc).startswith(exc.code) and "\n" not in str(exc).rstrip("'")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**70) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
SEED_DICTIONARY = json.loads((VECTORS / "seed_dictionary.json").read_text())


def _replace_somewhere(doc: Any, draw: st.DrawFn) -> Any:
    """``doc`` with one value somewhere inside it replaced by a random JSON value."""
    if isinstance(doc, dict) and doc and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(doc)))
        return {**doc, key: _replace_somewhere(doc[key], draw)}
    if isinstance(doc, list) and doc and draw(st.booleans()):
        i = draw(st.integers(0, len(doc) - 1))
        return [*doc[:i], _replace_somewhere(doc[i], draw), *doc[i + 1 :]]
    return draw(json_values)


@st.composite
def dictionary_files(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["mutated", "shape", "bytes"]))
    if kind == "mutated":
        return json.dumps(_replace_somewhere(SEED_DICTIONARY, draw), indent=1).encode()
    if kind == "shape":
        return json.dumps({"tables": draw(json_values)}).encode()
    return draw(raw_bytes)


@FUZZ
@given(data=dictionary_files())
def test_dictionary_load_raises_only_source_errors(sandbox: Home, data: bytes) -> None:
    path = sandbox.root / "fuzz.json"
    path.write_bytes(data)
    try:
        load_dictionary(path)
    except SourceError as exc:
        assert exc.code == "GGS-SRC-0500" and str(exc).startswith(f"GGS-SRC-0500: {path}")
        assert "\n" not in str(exc)


@pytest.fixture(scope="module")
def trail_bytes() -> bytes:
    """A small valid trail: a table definition and an insert, a key update and a delete."""
    students = TableDef("US03.STUDENT", ("STUDENT_KEY", "NAME", "FEE"))
    records = [
        TrailRecord(
            IOType.INSERT,
            students.table,
            ((0, "1"), (1, "Jordan"), (2, "9000")),
            TransInd.BEGIN,
            io_time_us=1_364_774_398_000_000,
            rowid="AAASrPAAEAAAAQ2AAK",
            logcsn="1621215",
            tranid="4.11.854",
        ),
        TrailRecord(
            IOType.FIELDCOMP,
            students.table,
            ((0, "1"), (2, None)),
            TransInd.MIDDLE,
            io_time_us=1_364_774_399_000_000,
        ),
        TrailRecord(
            IOType.DELETE,
            students.table,
            ((0, "1"),),
            TransInd.END,
            before_after="B",
            io_time_us=1_364_774_400_000_000,
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        with TrailWriter.open(f"{tmp}/aa", clock=lambda: 1_364_774_400_000_000, durable=False) as w:
            w.define_table(students)
            w.append(*(encode_record(r) for r in records))
        return Path(f"{tmp}/aa000000000").read_bytes()


runs = st.sampled_from([b"\x7f" * 8, b"\xff" * 8, b"\x00" * 4, b"\x80"])
flips = st.tuples(st.integers(0, 2**31), st.one_of(st.binary(min_size=1, max_size=1), runs))


@FUZZ
@given(changes=st.lists(flips, min_size=1, max_size=6))
def test_logdump_over_byte_flips_raises_only_trail_errors(
    sandbox: Home, trail_bytes: bytes, changes: list[tuple[int, bytes]]
) -> None:
    data = bytearray(trail_bytes)
    for where, value in changes:
        at = where % len(data)
        data[at : at + len(value)] = value[: len(data) - at]
    path = sandbox.root / "dirdat" / "zz000000000"
    path.write_bytes(bytes(data))
    for as_json, options in ((False, DisplayOptions(detail="DATA")), (True, None)):
        with contextlib.suppress(TrailError):
            dump_files([path], io.StringIO(), as_json=as_json, options=options)
    commands = f"OPEN {path}\nGHDR ON\nDETAIL DATA\nFILEHEADER DETAIL\nNEXT\nNEXT\nNEXT\nNEXT\nNEXT\nCOUNT\nSFH\nPOS 0\nSFET\nEXIT\n"
    out = io.StringIO()
    LogdumpSession(io.StringIO(commands), out).run()
    assert "Traceback" not in out.getvalue()


def test_a_valid_trail_dumps_whole(trail_bytes: bytes, sandbox: Home) -> None:
    """The fuzz base is a valid trail: all its records show, with their IO times."""
    path = sandbox.root / "dirdat" / "ok000000000"
    path.write_bytes(trail_bytes)
    out = io.StringIO()
    assert dump_files([path], out) == 6  # file header, DDR, TDR, three records
    assert "2013/03/31 23:59:58.000.000" in out.getvalue()


def test_an_out_of_range_io_time_shows_as_invalid(sandbox: Home) -> None:
    """An IO time of 0x7f bytes (or any time no date can hold) shows as its bits."""
    path = sandbox.root / "dirdat" / "io000000000"
    with TrailWriter.open(str(path)[:-9], clock=lambda: -(2**62), durable=False) as writer:
        record = TrailRecord(IOType.INSERT, "A.B", ((0, "1"),), io_time_us=0x7F7F_7F7F_7F7F_7F7F)
        writer.append(encode_record(record))
    out = io.StringIO()
    assert dump_files([path], out, options=DisplayOptions(fileheader="DETAIL")) == 2
    assert "IO Time    : invalid time 0x7f7f7f7f7f7f7f7f" in out.getvalue()
    assert "CreationTime    : invalid time 0xc000000000000000" in out.getvalue()
    out = io.StringIO()
    dump_files([path], out, as_json=True)
    assert '"io_time": "invalid time 0x7f7f7f7f7f7f7f7f"' in out.getvalue()


logdump_words = st.sampled_from(
    [
        "OPEN",
        "NEXT",
        "N",
        "POS",
        "GHDR",
        "DETAIL",
        "FILEHEADER",
        "COUNT",
        "SFET",
        "SFH",
        "FILTER",
        "NT",
        "HELP",
        "INCLUDE",
        "EXCLUDE",
        "FILENAME",
        "RECTYPE",
        "CLEAR",
        "SHOW",
        "ON",
        "DATA",
        "0",
        "-1",
        "99999999999",
        "5",
        "x",
        "*",
    ]
)
logdump_lines = st.lists(
    st.one_of(logdump_words.map(str.encode), raw_bytes), min_size=1, max_size=5
).map(b" ".join)


@FUZZ
@given(lines=st.lists(logdump_lines, max_size=8))
def test_logdump_session_answers_every_command(
    sandbox: Home, trail_bytes: bytes, lines: list[bytes]
) -> None:
    path = sandbox.root / "dirdat" / "ld000000000"
    path.write_bytes(trail_bytes)
    script = f"OPEN {path}\n" + b"\n".join(lines).decode("utf-8", "replace") + "\n"
    out = io.StringIO()
    LogdumpSession(io.StringIO(script), out).run()
    assert "Traceback" not in out.getvalue()


# Names a user may give where a file is read (issue 29): over NAME_MAX or PATH_MAX, special
# files that never end or never answer, directories, bytes.
@st.composite
def awkward_names(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["long", "deep", "special", "dir", "fifo", "bytes"]))
    if kind == "long":
        return "n" * draw(st.integers(250, 1200)) + draw(st.sampled_from(["", ".prm", ".oby"]))
    if kind == "deep":
        part = "d" * draw(st.integers(1, 300))
        return "/".join([part] * draw(st.integers(2, 30)))
    if kind == "special":
        return draw(st.sampled_from(["/dev/zero", "/dev/null", "/dev/urandom", "/proc/self/fd"]))
    if kind == "dir":
        return "/tmp"
    if kind == "fifo":
        return "@fifo"
    return argv_text(draw(raw_bytes)).replace("\x00", "") or "x"


def _named(sandbox: Home, name: str) -> str:
    """``@fifo``: a FIFO nobody writes to, made in the sandbox."""
    if name != "@fifo":
        return name
    fifo = sandbox.root / "fuzz.fifo"
    if not fifo.exists():
        import os

        os.mkfifo(fifo)
    return str(fifo)


@FUZZ
@given(name=awkward_names())
def test_every_reader_of_a_named_file_answers_any_name(sandbox: Home, name: str) -> None:
    """OBEY, DBLOGIN, ``params check`` (and OBEY/INCLUDE inside a parameter file) and ``obey
    --syntax-only`` answer with one line whatever the name: never a traceback, never a hang
    (the test's own time is the bound: /dev/zero is read at most 16 MiB)."""
    name = _named(sandbox, name)
    out = io.StringIO()
    session = stream_session(sandbox, iter([]), out)
    quoted = name.replace('"', "")
    for line in (f'OBEY "{quoted}"', f"DBLOGIN SOURCEDB {quoted}", f"VIEW PARAMS {quoted}"):
        if "\n" in line or "\r" in line:
            continue
        assert table.execute(session, line).ok in (True, False)
    _no_traceback(out.getvalue(), sandbox)
    assert "OSError" not in out.getvalue()  # a clear line, not the exception's repr
    assert check_file(name).ok in (True, False)
    prm = sandbox.root / "names.prm"
    prm.write_text(f"EXTRACT e1\nOBEY {quoted}\nINCLUDE {quoted}\nTABLE a.*;\n", errors="replace")
    assert check_file(prm).ok in (True, False)
    with contextlib.suppress(OSError):  # the launcher says "Cannot open obey file ..."
        syntax_errors(Path(name))
