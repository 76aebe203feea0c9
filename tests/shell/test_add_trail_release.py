"""ADD EXTTRAIL / ADD RMTTRAIL ..., FORMAT RELEASE m.n: kept with the trail (the Extract
writes that release unless its EXTTRAIL says another); an unknown release is one line."""

from __future__ import annotations

from engine.home.groups import GroupStore

from .conftest import Shell


def test_add_trail_keeps_its_format_release(shell: Shell) -> None:
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    out = shell.run("ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1, FORMAT RELEASE 12.1.2.1")
    assert shell.ok and "EXTTRAIL added." in out
    shell.run("ADD EXTRACT pump1, EXTTRAILSOURCE ./dirdat/lt")
    shell.run("ADD RMTTRAIL ./dirrmt/rt, EXTRACT pump1")
    assert shell.ok
    store = GroupStore(shell.session.home)
    ext1, pump1 = store.get("EXT1"), store.get("PUMP1")
    assert ext1 is not None and pump1 is not None
    assert [t.format_release for t in ext1.trails] == ["12.1"]
    assert [t.format_release for t in pump1.trails] == [None]
    bad = shell.run("ADD EXTTRAIL ./dirdat/lu, EXTRACT ext1, FORMAT RELEASE 13.4")
    assert not shell.ok
    assert bad.strip() == (
        "ERROR: FORMAT RELEASE 13.4 is not a trail format release "
        "(known: 11.2, 12.1, 12.2, 12.3, 18.1, 19.1, 21.1)."
    )
