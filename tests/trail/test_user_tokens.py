"""User tokens (TABLE ... TOKENS): written in the token area, read back by name, shown by
Logdump under "User tokens:" (not among the GGS tokens) and by logdump --json."""

from __future__ import annotations

from engine.logdump.views import Views, record_json
from engine.trail.codec import decode_exact, encode_record, user_token, user_tokens
from engine.trail.layout import IOType
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailEntry


def record() -> TrailRecord:
    return TrailRecord(
        io_type=IOType.INSERT,
        table="SOURCE.CUSTOMER",
        columns=((0, "1"), (1, "ann")),
        rowid="AAASrPAAEAAAAQ2AAK",
        logcsn="123",
        tranid="5.6.7",
        extra_tokens=(user_token("TKN-HOST", "syshq"), user_token("TKN-NOTE", None)),
    )


def test_user_tokens_round_trip_by_name() -> None:
    back = decode_exact(encode_record(record()))
    assert user_tokens(back) == [("TKN-HOST", "syshq"), ("TKN-NOTE", None)]
    assert back == record()


def test_logdump_shows_user_tokens_apart() -> None:
    entry = TrailEntry(0, 100, 0, record())
    lines = Views().body(entry, record())
    at = lines.index("User tokens:   23 bytes")
    assert lines[at + 1 : at + 3] == ["TKN-HOST            : syshq", "TKN-NOTE            : NULL"]
    ggs = lines[lines.index("GGS tokens:") :]
    assert not any("USERTOKEN" in line for line in ggs)
    assert any("LOGCSN" in line for line in ggs)
    out = record_json("aa000000000", entry, {})
    assert out["user_tokens"] == {"TKN-HOST": "syshq", "TKN-NOTE": None}
