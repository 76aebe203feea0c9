"""OBEY, INCLUDE, macros and ?VAR substitution, with positions kept."""

from __future__ import annotations

from pathlib import Path

from params.check import check_file, check_text


def test_obey_reads_another_file_one_level_only(tmp_path: Path) -> None:
    (tmp_path / "login.prm").write_text("USERIDALIAS ggsrc\nOBEY deeper.prm\n")
    (tmp_path / "deeper.prm").write_text("CHECKPOINTSECS 5\n")
    main = tmp_path / "e1.prm"
    main.write_text("EXTRACT e1\nOBEY login.prm\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n")
    r = check_file(main, cwd=tmp_path)
    assert r.model.login.alias == "ggsrc"
    assert r.model.checkpoint_secs == 10  # the nested OBEY was refused, not read
    [err] = r.errors
    assert err.code == "obey-nested"
    assert err.origin.path.endswith("login.prm") and err.origin.line == 2


def test_obey_missing_file_is_positioned(tmp_path: Path) -> None:
    main = tmp_path / "e1.prm"
    main.write_text("EXTRACT e1\nOBEY   nothere.prm\n")
    [err] = check_file(main, cwd=tmp_path).errors
    assert err.code == "missing-file"
    assert (err.origin.line, err.origin.col) == (2, 8)


def test_macro_library_include_and_invocation(tmp_path: Path) -> None:
    (tmp_path / "lib.mac").write_text(
        "MACRO #logon PARAMS (#alias, #dom)\nBEGIN\nUSERIDALIAS #alias DOMAIN #dom\nEND;\n"
        "MACRO #trail BEGIN EXTTRAIL ./dirdat/lt END;\n"
    )
    main = tmp_path / "e1.prm"
    main.write_text("EXTRACT e1\nINCLUDE lib.mac\n#logon (gg1, Dom1)\n#trail ()\nTABLE hr.emp;\n")
    r = check_file(main, cwd=tmp_path)
    assert r.ok, r.diagnostics
    assert (r.model.login.alias, r.model.login.domain) == ("gg1", "Dom1")
    assert [t.path for t in r.model.trails] == ["./dirdat/lt"]
    assert r.model.tables[0].trail == "./dirdat/lt"


def test_macro_argument_count_and_undefined_macro() -> None:
    r = check_text(
        "MACRO #m PARAMS (#a) BEGIN TABLE #a; END;\nEXTRACT e1\nEXTTRAIL ./dirdat/aa\n"
        "#m (x.y, z.w)\n#nosuch (1)\n"
    )
    msgs = [(d.origin.line, d.origin.col, d.message) for d in r.errors]
    assert msgs == [
        (4, 1, "macro #M takes 1 argument(s), 2 given"),
        (
            5,
            1,
            "macro #nosuch is not defined (define it with MACRO, or INCLUDE the library that does)",
        ),
    ]


def test_macro_inline_in_a_statement_keeps_following_positions() -> None:
    r = check_text(
        "MACRO #src BEGIN hr END;\nEXTRACT e1\nEXTTRAIL ./dirdat/aa\nTABLE #src ().emp, KEYCOL (id);\n"
    )
    [err] = r.errors
    assert err.message.startswith("unknown TABLE option 'KEYCOL'")
    assert (err.origin.line, err.origin.col) == (4, 20)


def test_macrochar() -> None:
    r = check_text(
        "MACROCHAR $\nMACRO $t BEGIN hr.emp END;\nEXTRACT e1\nEXTTRAIL ./dirdat/aa\nTABLE $t;\n"
    )
    assert r.ok, r.diagnostics
    assert r.model.tables[0].source.name == "EMP"


def test_variable_substitution_and_undefined_variable() -> None:
    text = "EXTRACT e1\nRMTHOST ?TGT, MGRPORT ?PORT\nRMTTRAIL ./dirdat/rt\nTABLE scott.?TAB;\nTABLE hr.emp?;\n"
    r = check_text(text, env={"TGT": "host1", "PORT": "7809", "TAB": "EMP"})
    assert r.ok, r.diagnostics
    assert r.model.rmthost is not None and (r.model.rmthost.host, r.model.rmthost.mgrport) == (
        "host1",
        7809,
    )
    assert [str(t.source) for t in r.model.tables] == ["scott.EMP", "hr.emp?"]
    r = check_text(text, env={"TGT": "host1", "PORT": "7809"})
    [err] = r.errors
    assert err.code == "undefined-variable" and "TAB" in err.message
    assert (err.origin.line, err.origin.col) == (4, 13)


def test_variable_names_are_case_sensitive() -> None:
    r = check_text("EXTRACT e1\nRMTHOST ?tgt\n", env={"TGT": "x"})
    assert [e.code for e in r.errors] == ["undefined-variable"]


def test_a_file_including_itself_is_a_cycle_read_once(tmp_path: Path) -> None:
    main = tmp_path / "e1.prm"
    main.write_text("EXTRACT e1\nINCLUDE e1.prm\n")
    r = check_file(main, cwd=tmp_path)
    assert [e.code for e in r.errors] == ["include-cycle"]


def test_nested_names_resolve_next_to_the_including_file(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a.mac").write_text("INCLUDE b.mac\n")
    (lib / "b.mac").write_text("MACRO #t BEGIN TABLE hr.emp; END;\n")
    main = tmp_path / "e1.prm"
    main.write_text("EXTRACT e1\nINCLUDE lib/a.mac\nEXTTRAIL ./dirdat/aa\n#t ()\n")
    r = check_file(main, cwd=tmp_path)
    assert r.ok, r.diagnostics
