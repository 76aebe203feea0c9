"""``params check`` of a Big Data Replicat: TARGETDB LIBFILE libggjava.so SET
property=dirprm/NAME.props finds the properties file and checks it, each problem at its line
and column in the properties file."""

from __future__ import annotations

from pathlib import Path

from params.check import check_file
from params.errors import render_line
from params.handlerprops import HandlerProps, check_properties, parse_properties

PRM = "REPLICAT rep\nTARGETDB LIBFILE libggjava.so SET property=dirprm/rep.props\nMAP a.*, TARGET a.*;\n"


def check(tmp_path: Path, props: str | None, prm: str = PRM) -> list[str]:
    (tmp_path / "dirprm").mkdir(exist_ok=True)
    if props is not None:
        (tmp_path / "dirprm" / "rep.props").write_text(props)
    (tmp_path / "dirprm" / "rep.prm").write_text(prm)
    result = check_file(tmp_path / "dirprm" / "rep.prm", cwd=tmp_path)
    return [render_line(d) for d in result.diagnostics]


def test_a_good_file_passes_and_reads_as_the_handler_settings(tmp_path: Path) -> None:
    text = ("# lake\ngg.handlerlist=lake\ngg.handler.lake.type=iceberg\n"
            "gg.handler.lake.location = s3://b/p\ngg.handler.lake.mode=op\n"
            "gg.handler.lake.catalogName: cat\n")  # fmt: skip
    assert check(tmp_path, text) == []
    props, diags = check_properties(text, "p")
    assert diags == []
    assert props == HandlerProps("lake", "iceberg", "s3://b/p", catalog_name="cat")


def test_a_missing_properties_file_is_an_error_at_its_name(tmp_path: Path) -> None:
    out = check(tmp_path, None)
    col = PRM.splitlines()[1].index("dirprm/rep.props") + 1
    assert out == [f"{tmp_path}/dirprm/rep.prm:2:{col}: error: properties file "
                   "dirprm/rep.props does not exist"]  # fmt: skip


def test_properties_are_checked_with_positions(tmp_path: Path) -> None:
    text = ("gg.handlerlist=lake\ngg.handler.lake.type=parquet\n"
            "gg.handler.lake.locaton=/x\ngg.classpath=/opt/jars/*\n"
            "gg.handler.lake.batchIntervalMs=soon\ngg.handler.other.type=iceberg\n")  # fmt: skip
    out = check(tmp_path, text)
    assert out == [
        "dirprm/rep.props:1:1: error: gg.handler.lake.location is missing (a directory or an "
        "s3:// URL)",
        "dirprm/rep.props:2:22: error: gg.handler.lake.type must be deltalake or iceberg (got "
        "'parquet')",
        "dirprm/rep.props:3:1: error: unknown handler property gg.handler.lake.locaton; did you "
        "mean location?",
        "dirprm/rep.props:4:1: warning: gg.classpath (a Java adapter property) is not used by "
        "this engine",
        "dirprm/rep.props:5:33: error: gg.handler.lake.batchIntervalMs must be a whole number of "
        "milliseconds from 0 to 3600000 (got 'soon')",
        "dirprm/rep.props:6:1: error: gg.handler.other.type: handler other is not in "
        "gg.handlerlist",
    ]


def test_mode_other_than_op_points_to_insertallrecords(tmp_path: Path) -> None:
    text = "gg.handlerlist=lake\ngg.handler.lake.type=deltalake\ngg.handler.lake.location=x\n"
    out = check(tmp_path, text + "gg.handler.lake.mode=tx\n")
    assert len(out) == 1 and "4:22: error" in out[0] and "INSERTALLRECORDS" in out[0], out


def test_libfile_needs_set_property(tmp_path: Path) -> None:
    prm = "REPLICAT rep\nTARGETDB LIBFILE libggjava.so\nMAP a.*, TARGET a.*;\n"
    out = check(tmp_path, None, prm)
    assert out and "needs SET property=dirprm/NAME.props" in out[0], out
    prm = "REPLICAT rep\nTARGETDB LIBFILE libother.so SET property=dirprm/rep.props\n"
    out = check(tmp_path, "gg.handlerlist=lake\n", prm)
    assert any("must be libggjava.so" in o for o in out), out


def test_java_properties_forms() -> None:
    props = parse_properties("! c\n  a.b = 1\nc:2\nd 3\ne=long\\\n   value\n")
    assert [(p.key, p.value, p.line, p.key_col, p.value_col) for p in props] == [
        ("a.b", "1", 2, 3, 9),
        ("c", "2", 3, 1, 3),
        ("d", "3", 4, 1, 3),
        ("e", "longvalue", 5, 1, 3),
    ]
