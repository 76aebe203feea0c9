"""``ggsci params check|show`` as a user runs them (typer's CliRunner, no terminal)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ggsci.cli import build_app

runner = CliRunner()


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_check_valid_file_exits_0_with_warnings(tmp_path: Path) -> None:
    f = write(
        tmp_path, "e1.prm", "EXTRACT e1\nEXTTRAIL ./dirdat/aa\nENCRYPTTRAIL AES192\nTABLE hr.*;\n"
    )
    res = runner.invoke(build_app(), ["params", "check", str(f)])
    assert res.exit_code == 0
    assert "warning: ENCRYPTTRAIL is a GoldenGate parameter not used by this engine" in res.output
    assert res.output.rstrip().endswith("OK (extract, 0 error(s), 1 warning(s))")


def test_check_invalid_file_exits_1_with_caret_and_no_traceback(tmp_path: Path) -> None:
    f = write(tmp_path, "e1.prm", "EXTRACT e1\nBR BRINTERVAL 99H\n")
    res = runner.invoke(build_app(), ["params", "check", str(f)])
    assert res.exit_code == 1
    assert f"{f}:2:15: error: BRINTERVAL must be from 20M to 96H (got 99H)" in res.output
    assert "  BR BRINTERVAL 99H\n                ^" in res.output
    assert "Traceback" not in res.output


def test_check_missing_file_is_one_line(tmp_path: Path) -> None:
    res = runner.invoke(build_app(), ["params", "check", str(tmp_path / "nope.prm")])
    assert res.exit_code == 1
    assert "error: cannot read parameter file" in res.output
    assert "Traceback" not in res.output


def test_check_json(tmp_path: Path) -> None:
    good = write(tmp_path, "good.prm", "PORT 7809\n")
    bad = write(tmp_path, "bad.prm", "PORTT 7809\n")
    res = runner.invoke(build_app(), ["params", "check", "--json", str(good), str(bad)])
    assert res.exit_code == 1
    data = json.loads(res.output)
    assert [d["ok"] for d in data] == [True, False]
    [diag] = data[1]["diagnostics"]
    assert diag == {
        "path": str(bad),
        "line": 1,
        "column": 1,
        "severity": "error",
        "code": "unknown-parameter",
        "message": "unknown parameter 'PORTT'; did you mean PORT?",
        "source": "PORTT 7809",
    }


def test_show_prints_effective_parameters_without_passwords(tmp_path: Path) -> None:
    write(tmp_path, "lib.mac", "MACRO #login BEGIN USERID gg, PASSWORD s3cret END;\n")
    f = write(
        tmp_path,
        "e1.prm",
        f"EXTRACT e1\nINCLUDE {tmp_path}/lib.mac\n#login ()\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n",
    )
    res = runner.invoke(build_app(), ["params", "show", str(f)])
    assert res.exit_code == 0, res.output
    assert "USERID gg, PASSWORD ********" in res.output
    assert "s3cret" not in res.output
    assert '"group": "E1"' in res.output
    res = runner.invoke(build_app(), ["params", "show", "--json", str(f)])
    assert json.loads(res.output)["br"]["interval"] == 14400
