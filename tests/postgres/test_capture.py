"""The PostgreSQL Extract against a real PostgreSQL 15: committed transactions in commit
order into trail records (TRANID = xid, CSN = commit LSN), the type mapping, TOAST,
truncates, before images per REPLICA IDENTITY, TABLE options, restart exactly once."""

from __future__ import annotations

import pytest

from engine.home.layout import Home
from engine.trail.codec import user_tokens
from engine.trail.layout import IOType
from tests.postgres.pgsource import Events, prm, records, run_once, setup_group, sql

pytestmark = pytest.mark.postgres


def test_insert_update_delete_in_commit_order(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY, name text, n numeric)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1, 'a', 1.5), (2, 'it''s', NULL)",
        "BEGIN", "UPDATE t SET name = 'b' WHERE id = 1", "DELETE FROM t WHERE id = 2", "COMMIT",
        "UPDATE t SET id = 10 WHERE id = 1")  # fmt: skip
    run = run_once(home, group, prm(pgdb))
    recs = records(home)
    ops = [(r.op_name, r.table, dict(r.columns)) for r in recs]
    assert ops == [
        ("Insert", "public.t", {0: "1", 1: "a", 2: "1.5"}),
        ("Insert", "public.t", {0: "2", 1: "it's", 2: None}),
        ("FieldComp", "public.t", {0: "1", 1: "b", 2: "1.5"}),
        ("Delete", "public.t", {0: "2"}),
        ("GGSKeyFieldComp", "public.t", {0: "10", 1: "b", 2: "1.5"}),
    ]
    assert recs[4].before_columns == ((0, "1"),)
    # one TRANID / CSN per transaction, on its first record; CSNs ascend
    firsts = [r for r in recs if r.tranid]
    assert len(firsts) == 3
    csns = [int(r.logcsn or 0) for r in firsts]
    assert csns == sorted(csns) and len(set(csns)) == 3
    assert all(r.tranid and r.tranid.isdigit() for r in firsts)
    assert run.capture.stats.transactions == 3
    # the slot stands at the last commit read, after the checkpoint
    assert run.capture.confirmed_lsn == run.capture.read_lsn == csns[-1]


def test_restart_writes_nothing_twice_and_slot_moves(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1)")
    run_once(home, group, prm(pgdb))
    sql(pgdb, "INSERT INTO t VALUES (2)")
    run_once(home, group, prm(pgdb))
    run_once(home, group, prm(pgdb))
    assert [dict(r.columns)[0] for r in records(home)] == ["1", "2"]


def test_crash_before_slot_advance_or_before_checkpoint(
    home: Home, pgdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 between checkpoint and slot advance (the slot is behind the checkpoint), and
    between trail write and checkpoint (the trail is ahead of it): nothing twice, nothing
    lost."""
    from engine.postgres.capture import PgCapture
    from engine.postgres.run import PgExtractRun

    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)")
    with monkeypatch.context() as m:
        m.setattr(PgCapture, "confirm", lambda self: None)  # died before the advance
        run_once(home, group, prm(pgdb))
    sql(pgdb, "INSERT INTO t VALUES (3)")
    with monkeypatch.context() as m:  # died after the trail was written, before checkpoint
        m.setattr(PgExtractRun, "checkpoint", lambda self: self.capture.durable_state())
        run_once(home, group, prm(pgdb))
    assert [dict(r.columns)[0] for r in records(home)] == ["1", "2", "3"]
    sql(pgdb, "INSERT INTO t VALUES (4)")
    run = run_once(home, group, prm(pgdb))
    assert [dict(r.columns)[0] for r in records(home)] == ["1", "2", "3", "4"]
    assert run.capture.stats.skipped_recovered == 3


def test_type_mapping(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TYPE mood AS ENUM ('sad', 'happy')",
        "CREATE TABLE ty (id int PRIMARY KEY, s smallint, b bigint, nu numeric(12,3), r real, "
        "d double precision, tx text, vc varchar(5), ch char(4), by bytea, bo boolean, "
        "da date, ti time, ts timestamp, tz timestamptz, iv interval, u uuid, j json, "
        "jb jsonb, m money, e mood, arr int[], pt point, rg int4range, tv tsvector)")  # fmt: skip
    group = setup_group(home, pgdb)
    events = Events()
    sql(pgdb, "SET TimeZone = 'Europe/Paris'",
        "INSERT INTO ty VALUES (1, -2, 9000000000, 12.5, 1.5, 0.1, 'x''y', 'ab', 'a', "
        "'\\x00ff', true, '2024-02-29', '13:14:15.5', '2024-02-29 01:02:03.456789', "
        "'2024-02-29 01:02:03+01', '1 day 02:00:00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
        "'{\"k\": [1, 2]}', '{\"k\": 1}', '-1234.5', 'happy', '{1,2}', '(1,2)', '[1,5)', "
        "'a b')")  # fmt: skip
    run_once(home, group, prm(pgdb), events)
    (rec,) = records(home)
    assert dict(rec.columns) == {
        0: "1", 1: "-2", 2: "9000000000", 3: "12.500", 4: "1.5", 5: "0.1", 6: "x'y",
        7: "ab", 8: "a   ", 9: "00FF", 10: "1", 11: "2024-02-29", 12: "13:14:15.5",
        13: "2024-02-29:01:02:03.456789000", 14: "2024-02-29:00:02:03.000000000",
        15: "1 day 02:00:00", 16: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        17: '{"k": [1, 2]}', 18: '{"k": 1}', 19: "-1234.50", 20: "happy",
    }  # fmt: skip
    warned = [t for c, _, t in events.lines if c == "OGG-25364"]
    assert len(warned) == 4
    assert any("arr" in w and "array" in w for w in warned)
    assert any("pt" in w and "point" in w for w in warned)
    assert any("rg" in w and "range" in w for w in warned)
    assert any("tv" in w and "tsvector" in w for w in warned)


def test_unchanged_toast_is_left_out_not_null(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE big (id int PRIMARY KEY, note text, blob text)",
        "ALTER TABLE big ALTER COLUMN blob SET STORAGE EXTERNAL")  # fmt: skip
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO big VALUES (1, 'n', repeat('0123456789', 3000))",
        "UPDATE big SET note = 'm' WHERE id = 1",
        "UPDATE big SET blob = 'short' WHERE id = 1")  # fmt: skip
    run_once(home, group, prm(pgdb))
    ins, upd, upd2 = records(home)
    assert dict(ins.columns)[2] == "0123456789" * 3000
    assert dict(upd.columns) == {0: "1", 1: "m"}  # blob not written, not NULL
    assert dict(upd2.columns) == {0: "1", 1: "m", 2: "short"}


def test_truncate_needs_gettruncates(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO a VALUES (1)", "TRUNCATE a, b", "INSERT INTO b VALUES (2)")
    run_once(home, group, prm(pgdb, "TABLE public.b;\nGETTRUNCATES\nTABLE public.a;"))
    ops = [(r.op_name, r.table) for r in records(home)]
    assert ops == [("Insert", "public.a"), ("GGSPurgedata", "public.a"), ("Insert", "public.b")]
    assert records(home)[1].io_type == IOType.PURGEDATA


def test_replica_identity_full_before_images(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE f (id int PRIMARY KEY, v text, w text)",
        "ALTER TABLE f REPLICA IDENTITY FULL", "CREATE TABLE nk (a int, b text)",
        "ALTER TABLE nk REPLICA IDENTITY FULL")  # fmt: skip
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO f VALUES (1, 'x', NULL)", "UPDATE f SET v = 'y' WHERE id = 1",
        "DELETE FROM f", "INSERT INTO nk VALUES (1, 'p')", "DELETE FROM nk")  # fmt: skip
    run_once(home, group, prm(pgdb, "GETUPDATEBEFORES\nTABLE public.f;\nTABLE public.nk;"))
    recs = records(home)
    assert [(r.op_name, r.before_after) for r in recs] == [
        ("Insert", "A"), ("FieldComp", "B"), ("FieldComp", "A"), ("Delete", "B"),
        ("Insert", "A"), ("Delete", "B"),
    ]  # fmt: skip
    assert dict(recs[1].columns) == {0: "1", 1: "x", 2: None}  # the old row, NULL kept
    assert dict(recs[3].columns) == {0: "1", 1: "y", 2: None}  # FULL: every column
    assert dict(recs[5].columns) == {0: "1", 1: "p"}


def test_table_options_act(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE o (id int PRIMARY KEY, amount int, secret text)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO o VALUES (1, 5, 's'), (2, 500, 't')", "INSERT INTO o VALUES (3, 7, 'u')")
    run_once(home, group,
             prm(pgdb, "TABLE public.o, WHERE (amount < 100), COLSEXCEPT (secret), "
                       "TOKENS (TKN-OP = GGS_OP_TYPE);"))  # fmt: skip
    recs = records(home)
    assert [dict(r.columns) for r in recs] == [{0: "1", 1: "5"}, {0: "3", 1: "7"}]
    assert [user_tokens(r) for r in recs] == [[("TKN-OP", "INSERT")]] * 2


def test_begin_time_skips_earlier_commits(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb, begin="2999-01-01 00:00:00")
    sql(pgdb, "INSERT INTO t VALUES (1)")
    run = run_once(home, group, prm(pgdb))
    assert records(home) == [] and run.capture.stats.skipped_before_begin == 1


def test_unregistered_group_is_refused(home: Home, pgdb: str) -> None:
    from engine.extract.start import ExtractError
    from engine.home.groups import GroupDef, GroupKind, SourceType
    from engine.postgres.run import PgExtractRun
    from params.check import check_text

    group = GroupDef(GroupKind.EXTRACT, "EPG", SourceType.TRANLOG, "x", begin="2020-01-01")
    with pytest.raises(ExtractError) as info:
        PgExtractRun(home, check_text(prm(pgdb)).model, group, Events(), durable=False)
    assert info.value.code == "OGG-25360" and "REGISTER EXTRACT EPG DATABASE" in info.value.text


def test_dropped_slot_abends_naming_slot_and_lsn(home: Home, pgdb: str) -> None:
    from engine.extract.start import ExtractError
    from engine.postgres.slot import load_registration

    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1)")
    run_once(home, group, prm(pgdb))
    reg = load_registration(home, "EPG")
    assert reg is not None
    sql(pgdb, f"SELECT pg_drop_replication_slot('{reg.slot}')")
    with pytest.raises(ExtractError) as info:
        run_once(home, group, prm(pgdb))
    assert info.value.code == "OGG-25361"
    assert reg.slot in info.value.text and "checkpoint read LSN 0/" in info.value.text


def test_columns_added_and_dropped_while_capturing(home: Home, pgdb: str) -> None:
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY, a text, gone text)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1, 'x', 'g')")
    run_once(home, group, prm(pgdb))
    sql(pgdb, "INSERT INTO t VALUES (2, 'y', 'h')", "ALTER TABLE t DROP COLUMN gone",
        "ALTER TABLE t ADD COLUMN b int", "INSERT INTO t VALUES (3, 'z', 7)")  # fmt: skip
    run_once(home, group, prm(pgdb))
    assert [dict(r.columns) for r in records(home)] == [
        {0: "1", 1: "x", 2: "g"}, {0: "2", 1: "y"}, {0: "3", 1: "z", 2: "7"},
    ]  # fmt: skip


def test_useridalias_names_the_postgres_source(home: Home, pgdb: str) -> None:
    from engine.home.credstore import CredentialStore

    store = CredentialStore(home)
    store.create()
    store.add(f"postgres@{pgdb}", "unused-with-trust", "pgsrc", None, replace=False)
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO t VALUES (1)")
    text = "EXTRACT EPG\nUSERIDALIAS pgsrc\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n"
    run_once(home, group, text)
    assert [dict(r.columns) for r in records(home)] == [{0: "1"}]


@pytest.mark.parametrize("get", [False, True])
def test_filtertable_leaves_out_a_replicats_transactions(home: Home, pgdb: str, get: bool) -> None:
    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)", "CREATE TABLE ggs_ckpt (g text, n int)")
    group = setup_group(home, pgdb)
    sql(pgdb, "BEGIN", "INSERT INTO t VALUES (1)", "INSERT INTO ggs_ckpt VALUES ('R', 1)",
        "COMMIT", "INSERT INTO t VALUES (2)")  # fmt: skip
    extra = "TRANLOGOPTIONS FILTERTABLE public.ggs_ckpt\n" + (
        "GETREPLICATES\n" if get else "IGNOREREPLICATES\n"
    )
    run = run_once(home, group, prm(pgdb, "TABLE public.t;", extra=extra))
    kept = [dict(r.columns)[0] for r in records(home)]
    assert kept == (["1", "2"] if get else ["2"])
    assert run.capture.stats.replicated == (0 if get else 1)
