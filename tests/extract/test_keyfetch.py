"""Seed 002's updates carry no key in their dumps ("included in the supplemental data for
the undo change vector", which the printed dump omits): the miner leaves them to the driver
with their columns, and the driver fetches the key from the embedded source by ROWID
(FETCHOPTIONS), giving the seed's records byte for byte; MISSINGROW says what happens when
the row is gone."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.changes import Kind, Lcr, Position
from engine.embedded.database import Database
from engine.embedded.dictionary import Dictionary, load_dictionary
from engine.embedded.fetch import RowFetcher
from engine.embedded.logs import list_logs
from engine.extract.keyfetch import NOT_FETCHED, KeyFetch, KeyNotFetched, for_extract
from engine.extract.start import ExtractError
from engine.extract.tasks.assemble import stream_encoded
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Closed, mine_plan
from engine.home.layout import Home
from engine.redo.ids import RowId
from engine.runtime.events import Severity
from engine.trail.codec import decode_record, user_tokens
from engine.trail.layout import IOType
from params.check import check_text
from params.models import FetchOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trail"))
from trail_seed002 import EXAMPLES

from .test_miner import import_seed

VECTORS = Path(__file__).resolve().parents[1] / "source" / "vectors"
#: The rows seed 002 updates, as the source held them when they were updated (ROWID: key).
UPDATED = {"AAASrPAAEAAAAQ2AAJ": 1010, "AAASrPAAEAAAAQ2AAG": 1007,
           "AAASrPAAEAAAAQ2AAH": 1008, "AAASrPAAEAAAAQ2AAI": 1009}  # fmt: skip
UPDATES = [e for name in ("single_update", "multi_update") for e in EXAMPLES[name]]


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed's dumps imported into an embedded source whose storage holds the updated
    rows at their ROWIDs."""
    home = Home(tmp_path_factory.mktemp("keyfetch"))
    home.create_subdirs()
    return plant_updated_rows(import_seed(home.dirdb))


def plant_updated_rows(root: Path) -> Path:
    """Put the rows seed 002's updates change into the source's storage, at their ROWIDs
    (the dumps carry no insert of them): a fetch by ROWID then finds each key."""
    with Database(root) as db:
        table = db.table("US03", "STUDENT")
        for rowid, key in UPDATED.items():
            r = RowId.parse(rowid)
            db.conn.execute(
                f'INSERT INTO "{table.sqlite_name}" ("_rid", "STUDENT_KEY", "FIRST_NAME") '
                "VALUES (?, ?, 'x')",
                ((r.block << 16) | r.slot, key),
            )
        db.conn.commit()
    return root


def _updates(root: Path, native: bool) -> tuple[dict[str, tuple[list[Lcr], Lcr]], int]:
    """The update transactions as the miner hands them to the driver (compacted batches:
    every other transaction closes in the task), with their commits; and how many closed."""
    dictionary = load_dictionary(root / "dictionary.json")
    miner = Miner(mine_plan(dictionary, Selection(everything=True)))
    if not native:
        miner._walker = None
    txns: dict[str, tuple[list[Lcr], Lcr]] = {}
    rows: dict[str, list[Lcr]] = {}
    closed = 0
    for info in list_logs(root / "redo"):
        mined = miner.mine(str(info.path), 0, None)
        for e in mined.items:
            if isinstance(e, Closed):
                closed += 1
                continue
            lcr = Lcr(Kind(e[0]), e[1], Position(e[2], mined.sequence, e[3]), *e[4:])
            if lcr.kind is Kind.ROW:
                rows.setdefault(lcr.xid, []).append(lcr)
            elif lcr.kind is Kind.COMMIT and lcr.xid in rows:
                txns[lcr.xid] = (rows.pop(lcr.xid), lcr)
    return txns, closed


DEFAULTS = FetchOptions()


def _hook(
    root: Path, options: FetchOptions = DEFAULTS
) -> tuple[KeyFetch, list[tuple[str, Severity, str]]]:
    said: list[tuple[str, Severity, str]] = []
    dictionary = load_dictionary(root / "dictionary.json")
    fetch = KeyFetch(RowFetcher(root), dictionary.tables.get, lambda t: (0,), lambda t: options,
                     lambda *a: said.append(a))  # fmt: skip
    return fetch, said


def _written(txns: dict[str, tuple[list[Lcr], Lcr]], fetch: KeyFetch) -> list[Any]:
    """(record, length) of each update written, in commit order."""
    out = []
    for xid, (rows, commit) in sorted(txns.items(), key=lambda kv: kv[1][1].scn):
        for data, _ in stream_encoded(xid, commit.scn, commit.time_us, fetch.rows(rows)):
            record, end = decode_record(data)
            out.append((record, end))
    return out


@pytest.mark.parametrize("native", [True, False])
def test_seed_002_updates_get_their_key_fetched_by_rowid(seed: Path, native: bool) -> None:
    """The seed's records for its single and multi-row updates: key first, then the changed
    column, at the seed's lengths (138, 139, 115, 115 bytes)."""
    txns, closed = _updates(seed, native)
    assert closed == 5  # the inserts and deletes close in the task; the updates cannot
    assert all(not r.record and r.io_type == IOType.FIELDCOMP for rows, _ in txns.values()
               for r in rows)  # fmt: skip
    fetch, said = _hook(seed)
    got = _written(txns, fetch)
    assert [(r.rowid, r.columns, r.trans_ind, r.logcsn, r.tranid) for r, _ in got] == [
        (w.record.rowid, w.record.columns, w.record.trans_ind, w.record.logcsn, w.record.tranid)
        for w in UPDATES
    ]
    assert [n for _, n in got] == [w.length for w in UPDATES]
    assert fetch.fetched == 4 and said == []
    fetch.close()


@pytest.fixture
def gone(seed: Path, tmp_path: Path) -> Path:
    """The seed source after row 1008 (ROWID ...AAH) was deleted."""
    import shutil

    root = tmp_path / "SEED"
    shutil.copytree(seed, root)
    with Database(root) as db:
        db.conn.execute('DELETE FROM "US03$STUDENT" WHERE "STUDENT_KEY" = 1008')
        db.conn.commit()
    return root


def _keys(got: list[Any]) -> list[str | None]:
    return [dict(r.columns).get(0) for r, _ in got]


def test_missingrow_ignore_writes_the_record_as_the_redo_gave_it_and_says_so(gone: Path) -> None:
    txns, _ = _updates(gone, native=True)
    fetch, said = _hook(gone)  # the default: MISSINGROW IGNORE
    got = _written(txns, fetch)
    assert _keys(got) == ["1010", "1007", None, "1009"]
    # the one without its key: 12 bytes of key entry less, a GGS_KEY_FETCH token more
    assert [n for _, n in got] == [138, 139, 115 - 12 + 28, 115]
    assert [user_tokens(r) for r, _ in got] == [[], [], [("GGS_KEY_FETCH", "MISSINGROW")], []]
    ((code, severity, text),) = said
    assert (code, severity) == (NOT_FETCHED, Severity.WARNING)
    assert "STUDENT_KEY of an update of US03.STUDENT" in text
    assert "no row at ROWID AAASrPAAEAAAAQ2AAH" in text and "MISSINGROW IGNORE" in text
    assert fetch.missing == {"US03.STUDENT": 1}


@pytest.mark.parametrize(
    ("options", "keys", "reported"),
    [
        (FetchOptions("ALLOW"), ["1010", "1007", None, "1009"], 0),
        (FetchOptions("REPORT"), ["1010", "1007", None, "1009"], 1),
        (FetchOptions("DISCARD"), ["1010", "1007", "1009"], 1),
    ],
)
def test_missingrow_actions(
    gone: Path, options: FetchOptions, keys: list[Any], reported: int
) -> None:
    txns, _ = _updates(gone, native=True)
    fetch, said = _hook(gone, options)
    assert _keys(_written(txns, fetch)) == keys
    assert len(said) == reported
    if options.missing_row == "REPORT":
        assert said[0][2].endswith("written without it: TUITION_FEE = 7500.")


def test_missingrow_abend_stops_the_extract(gone: Path) -> None:
    txns, _ = _updates(gone, native=False)
    fetch, _ = _hook(gone, FetchOptions("ABEND"))
    with pytest.raises(KeyNotFetched) as raised:
        _written(txns, fetch)
    assert raised.value.code == "OGG-01924" and "MISSINGROW ABEND" in raised.value.text


@pytest.mark.parametrize("options", [FetchOptions(nofetch=True), FetchOptions(use_rowid=False)])
def test_nofetch_and_nouserowid_leave_the_key_missing(seed: Path, options: FetchOptions) -> None:
    txns, _ = _updates(seed, native=True)
    fetch, said = _hook(seed, options)
    got = _written(txns, fetch)
    assert _keys(got) == [None] * 4
    status = "NOFETCH" if options.nofetch else "NOUSEROWID"
    assert all(user_tokens(r) == [("GGS_KEY_FETCH", status)] for r, _ in got)
    assert fetch.fetched == 0 and len(said) == 1
    assert ("NOFETCH" if options.nofetch else "NOUSEROWID") in said[0][2]


def test_fetchoptions_in_the_parameter_file_choose_per_table(seed: Path, gone: Path) -> None:
    """FETCHOPTIONS is in force for the TABLE statements after it (until the next one)."""
    model = check_text(
        "EXTRACT e1\nSOURCEDB seed\nEXTTRAIL ./dirdat/lt\nFETCHOPTIONS MISSINGROW ABEND\n"
        "TABLE us03.other;\nFETCHOPTIONS MISSINGROW DISCARD, USESNAPSHOT\nTABLE us03.*;\n"
    ).model
    dictionary = load_dictionary(gone / "dictionary.json")
    said: list[Any] = []
    fetch = for_extract(model, gone, lambda: dictionary, dict, lambda *a: said.append(a))
    txns, _ = _updates(gone, native=True)
    assert _keys(_written(txns, fetch)) == ["1010", "1007", "1009"]  # DISCARD, not ABEND
    assert fetch.key_of("US03.STUDENT") == (0,)  # the table's own key (no KEYCOLS)
    keyed: Callable[[], dict[str, tuple[int, ...]]] = lambda: {"US03.STUDENT": (0, 7)}  # noqa: E731
    assert for_extract(model, gone, lambda: dictionary, keyed, print).key_of("US03.STUDENT") == (
        0,
        7,
    )
    empty = Dictionary()
    assert for_extract(model, gone, lambda: empty, dict, print).table_of("US03.STUDENT") is None


def test_a_source_that_cannot_be_read_is_not_a_missing_row(seed: Path, tmp_path: Path) -> None:
    """A damaged source abends the Extract (it would otherwise count as MISSINGROW)."""
    import shutil

    root = tmp_path / "BAD"
    shutil.copytree(seed, root)
    (root / "data.sqlite").write_bytes(b"not a database" * 100)
    for extra in root.glob("data.sqlite-*"):
        extra.unlink()
    txns, _ = _updates(seed, native=True)
    fetch, said = _hook(root)
    with pytest.raises(ExtractError) as raised:
        _written(txns, fetch)
    assert raised.value.code == "OGG-01924" and "Fetch from the source failed" in raised.value.text
    assert said == []
