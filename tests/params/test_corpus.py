"""Real parameter files from public repositories (read by path; skipped when absent)."""

from __future__ import annotations

from pathlib import Path

from params.check import check_file

#: Files in the corpus that hold a genuine mistake, and the line it is on.
GENUINE_MISTAKES = {
    # A GGSCI command (ADD EXTTRAIL ...) pasted after the TABLE line.
    "Folcky__GoldenGate-Oracle2Kafka-RemoteCapture__data__goldengate_ora__pumpext.prm": 6,
}


def test_every_real_parameter_file_is_accepted(corpus: Path) -> None:
    files = sorted((corpus / "prm").iterdir())
    assert len(files) >= 40
    for f in files:
        r = check_file(f)
        if f.name in GENUINE_MISTAKES:
            assert [d.origin.line for d in r.errors] == [GENUINE_MISTAKES[f.name]], f.name
            assert r.errors[0].code == "ggsci-command"
        else:
            # GoldenGate for Big Data files name a properties file beside them (TARGETDB
            # LIBFILE ... SET property=...), which the corpus does not hold: that one error,
            # the deployment's half that is missing here, is all a real file may show.
            rest = [(d.origin.line, d.message) for d in r.errors if d.code != "missing-file"]
            assert not rest, (f.name, rest)
            assert all("properties file" in d.message for d in r.errors), f.name


def test_corpus_models_are_what_the_files_say(corpus: Path) -> None:
    prm = corpus / "prm"
    m = check_file(prm / "karayv__docker_golden_gate_kafka__dirprm__eoltp01.prm").model
    assert m.group == "EOLTP01" and [str(t.source) for t in m.tables] == [
        "CDB$ROOT.OLEG.DEPT",
        "CDB$ROOT.OLEG.EMP",
    ]
    m = check_file(
        prm / "markmixson__config-kafka-oraclegoldengate-k8s__goldengate-standard-prms__kafpump.prm"
    ).model
    assert m.rmthost is not None and m.rmthost.mgrport == 7809
    assert m.trails[0].remote and m.tables[0].get_truncates
    m = check_file(prm / "sacoefrancis__BigdataAdapter__mgr.prm").model
    assert m.manager.port == 7809 and len(m.manager.dynamic_ports) == 112
