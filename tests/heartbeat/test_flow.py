"""Every column rule of seed 001, one case each: Extract's OUTGOING_EXTRACT, the pump's
OUTGOING_ROUTING_PATH with its ``*``, Replicat's OUTGOING_REPLICAT and its automatic column
mapping; and the rules applied to real LCRs and trail records."""

from __future__ import annotations

from datetime import datetime

import pytest

from engine.changes import Kind, Lcr, Position
from engine.heartbeat.flow import (
    ExtractRule,
    RoutingRule,
    extract_rule,
    incoming_row,
    replicat_accepts,
    routing_rule,
    to_columns,
    to_row,
    trail_time,
)
from engine.heartbeat.names import HeartbeatNames
from engine.heartbeat.schema import CORE
from engine.trail.layout import IOType
from engine.trail.model import TableDef, TrailRecord

NOW = "2026-03-14:09:26:53.123456000"
SEED = {"LOCAL_DATABASE": "SRC", "HEARTBEAT_TIMESTAMP": "2026-03-14:09:26:50.000001000"}
NAMES = tuple(c for c, _ in CORE)


# -- Extract: OUTGOING_EXTRACT ----------------------------------------------------------------
def test_extract_null_fills_name_and_time() -> None:
    out = extract_rule({**SEED, "OUTGOING_EXTRACT": None}, "EXT1", NOW)
    assert out == {**SEED, "OUTGOING_EXTRACT": "EXT1", "OUTGOING_EXTRACT_TS": NOW}


def test_extract_own_name_sets_the_time() -> None:
    row = {**SEED, "OUTGOING_EXTRACT": "ext1", "OUTGOING_EXTRACT_TS": "old"}
    assert extract_rule(row, "EXT1", NOW) == {**row, "OUTGOING_EXTRACT_TS": NOW}


def test_extract_other_name_discards() -> None:
    assert extract_rule({**SEED, "OUTGOING_EXTRACT": "EXT2"}, "EXT1", NOW) is None


# -- pump: OUTGOING_ROUTING_PATH ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "after"),
    [
        (None, "PMP1,*"),  # NULL: this pump, then the placeholder
        ("", "PMP1,*"),
        ("*", "PMP1,*"),  # the * is replaced by "PMP1,*"
        ("PMP0,*", "PMP0,PMP1,*"),  # a second hop keeps the first
        ("PMP0,*,PMP9", "PMP0,PMP1,*,PMP9"),
        ("PMP0,PMP1", "PMP0,PMP1"),  # no *: listed, so it goes on unchanged
    ],
)
def test_routing_path_rule(path: str | None, after: str) -> None:
    out = routing_rule({**SEED, "OUTGOING_ROUTING_PATH": path}, "PMP1", NOW)
    assert out == {**SEED, "OUTGOING_ROUTING_PATH": after, "OUTGOING_ROUTING_TS": NOW}


def test_routing_path_without_star_not_naming_the_pump_discards() -> None:
    assert routing_rule({**SEED, "OUTGOING_ROUTING_PATH": "PMP0,PMP2"}, "PMP1", NOW) is None


# -- Replicat: OUTGOING_REPLICAT and the mapping -----------------------------------------------
@pytest.mark.parametrize(
    ("name", "accepted"),
    [(None, True), ("", True), ("REP1", True), ("rep1", True), ("REP2", False)],
)
def test_replicat_rule(name: str | None, accepted: bool) -> None:
    assert replicat_accepts({**SEED, "OUTGOING_REPLICAT": name}, "REP1") is accepted


def test_automatic_column_mapping_is_seed_001s_list() -> None:
    record = {
        "LOCAL_DATABASE": "SRC",
        "HEARTBEAT_TIMESTAMP": "t-generated",
        "REMOTE_DATABASE": "FAR",
        "INCOMING_EXTRACT": "E_IN",
        "INCOMING_ROUTING_PATH": "P_IN",
        "INCOMING_REPLICAT": "R_IN",
        "INCOMING_HEARTBEAT_TS": "t-in-hb",
        "INCOMING_EXTRACT_TS": "t-in-e",
        "INCOMING_ROUTING_TS": "t-in-p",
        "INCOMING_REPLICAT_TS": "t-in-r",
        "OUTGOING_EXTRACT": "EXT1",
        "OUTGOING_ROUTING_PATH": "PMP1,PMP2,*",
        "OUTGOING_REPLICAT": None,
        "OUTGOING_EXTRACT_TS": "t-out-e",
        "OUTGOING_ROUTING_TS": "t-out-p",
    }
    row = incoming_row(record, "REP1", NOW, "TGT")
    # seed 001, line by line
    assert row["REMOTE_DATABASE"] == "SRC"  # = LOCAL_DATABASE
    assert row["INCOMING_EXTRACT"] == "EXT1"  # = OUTGOING_EXTRACT
    assert row["INCOMING_ROUTING_PATH"] == "PMP1,PMP2"  # = OUTGOING_ROUTING_PATH, * removed
    assert row["INCOMING_REPLICAT"] == "REP1"  # = @GETENV("GGENVIRONMENT", "GROUPNAME")
    assert row["INCOMING_HEARTBEAT_TS"] == "t-generated"  # = HEARTBEAT_TIMESTAMP
    assert row["INCOMING_EXTRACT_TS"] == "t-out-e"  # = OUTGOING_EXTRACT_TS
    assert row["INCOMING_ROUTING_TS"] == "t-out-p"  # = OUTGOING_ROUTING_TS
    assert row["INCOMING_REPLICAT_TS"] == NOW  # = @DATE(... @GETENV("JULIANTIMESTAMP"))
    assert row["LOCAL_DATABASE"] == "FAR"  # = REMOTE_DATABASE
    assert row["OUTGOING_EXTRACT"] == "E_IN"  # = INCOMING_EXTRACT
    assert row["OUTGOING_ROUTING_PATH"] == "P_IN"  # = INCOMING_ROUTING_PATH
    assert row["OUTGOING_HEARTBEAT_TS"] == "t-in-hb"  # = INCOMING_HEARTBEAT_TS
    assert row["OUTGOING_REPLICAT"] == "R_IN"  # = INCOMING_REPLICAT
    # our reading where the seed is silent: the outgoing timestamps mirror the incoming ones
    assert (row["OUTGOING_EXTRACT_TS"], row["OUTGOING_ROUTING_TS"]) == ("t-in-e", "t-in-p")
    assert row["OUTGOING_REPLICAT_TS"] == "t-in-r"


def test_mapping_of_a_seed_row_without_pump() -> None:
    """A seed row has no REMOTE_DATABASE (LOCAL_DATABASE falls back to this database) and a
    path without a pump has no routing path."""
    row = incoming_row({**SEED, "OUTGOING_EXTRACT": "EXT1"}, "REP1", NOW, "TGT")
    assert (row["LOCAL_DATABASE"], row["REMOTE_DATABASE"]) == ("TGT", "SRC")
    assert row["INCOMING_ROUTING_PATH"] is None


# -- on LCRs and trail records ---------------------------------------------------------------
def _lcr(table: str, io_type: int, row: dict[str, str | None]) -> Lcr:
    return Lcr(Kind.ROW, "1.2.3", Position(1, 1, 0), 0, 100, io_type=io_type, table=table,
               columns=to_columns(row, NAMES))  # fmt: skip


def test_extract_rule_on_lcrs() -> None:
    rule = ExtractRule(HeartbeatNames(None), "ext1", lambda: datetime(2026, 3, 14, 9, 26, 53, 5))
    lcrs = [
        _lcr("GG.GG_HEARTBEAT_SEED", IOType.FIELDCOMP, {**SEED, "OUTGOING_EXTRACT": None}),
        _lcr("GG.GG_HEARTBEAT", IOType.INSERT, {**SEED, "OUTGOING_EXTRACT": "EXT9"}),  # dropped
        _lcr("GG.GG_HEARTBEAT", IOType.DELETE, {"LOCAL_DATABASE": "SRC"}),  # passes as it is
        _lcr("WL.WL_T01", IOType.INSERT, {"LOCAL_DATABASE": "x"}),  # not a heartbeat table
    ]
    out = list(rule.rows(lcrs, lambda t: NAMES))
    assert [o.table for o in out] == ["GG.GG_HEARTBEAT_SEED", "GG.GG_HEARTBEAT", "WL.WL_T01"]
    assert to_row(out[0].columns, NAMES)["OUTGOING_EXTRACT"] == "EXT1"
    assert to_row(out[0].columns, NAMES)["OUTGOING_EXTRACT_TS"] == "2026-03-14:09:26:53.000005000"
    assert out[1:] == lcrs[2:]
    assert rule.owns("GG", "GG_HEARTBEAT_SEED") and not rule.owns("GG", "GG_HEARTBEAT_HISTORY")


def test_routing_rule_on_trail_records() -> None:
    rule = RoutingRule(HeartbeatNames("GG"), "PMP1", lambda: datetime(2026, 3, 14))
    definition = TableDef("GG.GG_HEARTBEAT_SEED", NAMES)
    rec = TrailRecord(IOType.FIELDCOMP, "GG.GG_HEARTBEAT_SEED", to_columns(SEED, NAMES))
    out = rule(rec, definition)
    assert out is not None
    assert to_row(out.columns, NAMES)["OUTGOING_ROUTING_PATH"] == "PMP1,*"
    assert to_row(out.columns, NAMES)["OUTGOING_ROUTING_TS"] == trail_time(datetime(2026, 3, 14))
    other_owner = TrailRecord(IOType.FIELDCOMP, "XX.GG_HEARTBEAT_SEED", rec.columns)
    assert rule(other_owner, definition) is other_owner  # GLOBALS names owner GG only
    elsewhere = TrailRecord(
        IOType.FIELDCOMP,
        "GG.GG_HEARTBEAT_SEED",
        to_columns({**SEED, "OUTGOING_ROUTING_PATH": "PMP7"}, NAMES),
    )
    assert rule(elsewhere, definition) is None


# -- Extract's restart position (LOGBSN) and the same-name rule -------------------------------
def _restart_tokens(lcr: Lcr) -> dict[str, str]:
    return {
        raw.partition(b"\x00")[0].decode(): raw.partition(b"\x00")[2].decode()
        for _, _, raw in lcr.tokens
    }


@pytest.mark.parametrize(
    ("oldest", "csn", "ts"),
    [
        ((42, 1_000_000), "42", "1970-01-01:00:00:01.000000000"),  # an older open transaction
        (None, "100", "1970-01-01:00:00:00.000000000"),  # none open: its own change
    ],
)
def test_extract_carries_its_restart_position_on_heartbeat_records(
    oldest: tuple[int, int] | None, csn: str, ts: str
) -> None:
    """Seed 001: SOURCE_EXTRACT_RESTART_CSN is 'the current LOGBSN when Extract processes
    this particular heartbeat record': the begin SCN of the oldest open transaction."""
    rule = ExtractRule(HeartbeatNames(None), "ext1", lambda: datetime(2026, 3, 14), lambda: oldest)
    lcr = _lcr("GG.GG_HEARTBEAT_SEED", IOType.FIELDCOMP, {**SEED, "OUTGOING_EXTRACT": None})
    assert lcr.scn == 100
    (out,) = rule.rows([lcr], lambda t: NAMES)
    assert _restart_tokens(out) == {"GGS_RESTART_CSN": csn, "GGS_RESTART_TS": ts}
    (other,) = rule.rows([_lcr("WL.WL_T01", IOType.INSERT, {"LOCAL_DATABASE": "x"})],
                         lambda t: NAMES)  # fmt: skip
    assert other.tokens == ()  # only heartbeat records carry it


def test_no_outgoing_columns_when_both_databases_have_the_same_name() -> None:
    """Seed 001's note: the OUTGOING_% columns are not populated when the source and remote
    databases have the same name."""
    row = {**SEED, "OUTGOING_EXTRACT": "E1", "INCOMING_EXTRACT": "E9", "INCOMING_REPLICAT": "R9",
           "INCOMING_HEARTBEAT_TS": "t", "HEARTBEAT_RECEIVED_TS": "t-received"}  # fmt: skip
    same = incoming_row(row, "REP1", NOW, "src")  # SEED's LOCAL_DATABASE is SRC
    outgoing = {k: v for k, v in same.items() if k.startswith("OUTGOING_")}
    assert len(outgoing) == 8 and set(outgoing.values()) == {None}
    assert same["INCOMING_EXTRACT"] == "E1"
    other = incoming_row(row, "REP1", NOW, "TGT")
    assert (other["OUTGOING_EXTRACT"], other["OUTGOING_REPLICAT"]) == ("E9", "R9")
    assert other["OUTGOING_RECEIVED_TS"] == "t-received"


def test_the_remote_apply_time_comes_back_as_outgoing_received_ts() -> None:
    """Bidirectional: the record of the remote database's GG_HEARTBEAT row carries when the
    remote database applied our heartbeat (its HEARTBEAT_RECEIVED_TS); it becomes
    OUTGOING_RECEIVED_TS, what GG_LAG_HISTORY's OUTGOING_REPLICAT_LAG is measured to. A seed
    row (unidirectional) has none."""
    remote_row = {"LOCAL_DATABASE": "FAR", "REMOTE_DATABASE": "TGT", "INCOMING_EXTRACT": "E_BACK",
                  "INCOMING_REPLICAT": "R_FAR", "INCOMING_REPLICAT_TS": "t-far-read",
                  "HEARTBEAT_RECEIVED_TS": "t-far-applied"}  # fmt: skip
    row = incoming_row(remote_row, "REP1", NOW, "TGT")
    assert (row["OUTGOING_REPLICAT_TS"], row["OUTGOING_RECEIVED_TS"]) == (
        "t-far-read",
        "t-far-applied",
    )
    assert (
        incoming_row({**SEED, "OUTGOING_EXTRACT": "E1"}, "REP1", NOW, "TGT")["OUTGOING_RECEIVED_TS"]
        is None
    )
