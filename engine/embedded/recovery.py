"""Instance recovery at open: what a database process killed between two checkpoints left.

The database commits its tables and counters (SQLite, ``_gg_state``) at each checkpoint, but
hands redo to its logs more often (at commits, every ``FLUSH_INTERVAL``). A process killed
in between leaves redo written after the state it will reopen with: SCNs above the saved
counter, transactions whose slots the saved counters would give out again, and transactions
begun there that never ended. Opened as they were, the next SCNs and transaction ids would
repeat ones already in the logs, and an Extract would take the new changes for changes it has
written already, or bind them into the dead transaction.

What Oracle's instance recovery does (roll forward from the redo, then SMON rolls back the
transactions that were open), done here with what the database keeps (:func:`recover`), in
this order:

* roll forward (:mod:`engine.embedded.rollforward`): every change of every transaction whose
  commit is in the logs after the checkpoint is applied to the tables by ROWID, in redo
  order, with the state that goes with it (chained rows' pieces, the space allocators, the
  blocks to clean out); a transaction open at the checkpoint has its changes before it in
  the tables already (the checkpoint commits them with its session), so only its later
  ones are applied, and a savepoint rollback after the checkpoint that takes back an
  earlier change applies the saved session's undo entry; the redo clock goes on from the
  latest redo time read;
* the SCN counter goes past every SCN in the logs, and each transaction slot's sequence past
  every one the logs used, so nothing is given out twice;
* a transaction the logs show begun and not ended, of no session saved with the last
  checkpoint, gets a rollback record (5.4) on its thread: its changes after the checkpoint
  were not rolled forward, so there is nothing else to undo, and an Extract drops it;
* a session saved with the last checkpoint with a transaction open (sessions survive a clean
  close, and are saved at each checkpoint): its transaction is rolled back as a ROLLBACK
  statement does (undo in the tables, its redo, the 5.4), unless the logs show it ended after
  the checkpoint: committed, its changes stay (those after the checkpoint rolled forward);
  rolled back, its changes are put back without more redo. Sessions do not survive an
  instance crash: all saved sessions are gone after recovery;
* one checkpoint commits the tables, the counters and the sessions together: recovery
  killed before it leaves the database as the kill left it, and the next open does it all
  again (what it wrote to the logs then reads as ended transactions).

The user is told (:func:`report`): an open that recovered anything writes one
:data:`RECOVERY_CODE` line, ``instance recovery of database NAME: N changes of T transactions
rolled forward, M transactions rolled back (S s)``, to the ggserr.log of the home the
database lies in (its ``dirdb/``) with the component of the process that opened it, and
the opener shows it (``ggsci db ...`` on standard error).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final, Protocol

from engine.embedded import redogen as rg
from engine.embedded.clock import Clock
from engine.embedded.rollforward import RollForward, roll_forward, tail_records
from engine.embedded.session import Session
from engine.embedded.state import Engine
from engine.home.layout import Home
from engine.redo.ids import Xid
from engine.runtime.events import GGSCI_COMPONENT, Event, Severity, log_event

#: the OGG message of an open that ran instance recovery (engine/messages.py)
RECOVERY_CODE: Final = "OGG-03600"
_LOG = logging.getLogger(__name__)


class Counters(Protocol):
    """The saved counters recovery moves on (``database.State``)."""

    scn: int
    threads: int
    sqn: dict[str, int]
    space: dict[str, list[int]]
    next_block: int
    dirty: dict[int, list[tuple[int, int, int]]]
    next_sid: int
    audit: int


class Recovering(Engine, Protocol):
    """What recovery needs of the database being opened."""

    root: Path
    sessions: dict[str, Session]
    rolled_forward: RollForward | None
    clock: Clock

    @property
    def state(self) -> Counters: ...

    def checkpoint(self) -> None: ...


def recover(db: Recovering) -> list[str]:
    """Instance recovery (module docstring); the transactions rolled back, as ``u.s.q``
    texts. Nothing is written when the logs hold nothing after the saved state."""
    st = db.state
    records = tail_records(db.root / "redo", st.scn, st.threads)
    entries = {
        (s.txn.xid.usn, s.txn.xid.slot, s.txn.xid.sqn): s.txn.entries
        for s in db.sessions.values()
        if s.txn is not None
    }
    # roll forward first: the changes committed after the checkpoint into the tables (and
    # what recovery needs of the redo after the checkpoint, read in the same pass)
    rolled = roll_forward(db, st, records, entries)
    tail = rolled.tail
    if not tail.scn:
        return []  # a clean close, or a kill with nothing flushed since the checkpoint
    db.rolled_forward = rolled
    ahead = rolled.last_us - db.clock.now_us()
    if ahead > 0:  # redo time ran ahead of the saved clock (--clock-rate): never back
        db.clock.advance(ahead / 1e6)
    st.scn = max(st.scn, tail.scn)
    for (usn, slot), sqn in tail.sqn.items():
        key = f"{usn}.{slot}"
        st.sqn[key] = max(st.sqn.get(key, 0), sqn)
    done: list[str] = []
    saved = set()
    for name, s in list(db.sessions.items()):
        txn = s.txn
        if txn is not None:
            x = txn.xid
            saved.add((x.usn, x.slot, x.sqn))
            ended = tail.ended.get((x.usn, x.slot, x.sqn))
            if ended is None:
                s.rollback(db)
                done.append(f"{x.usn}.{x.slot}.{x.sqn}")
            elif ended:
                s.abandon(db)  # rolled back after the checkpoint: its redo says so already
            else:
                s.txn = None  # committed after the checkpoint
                db.release_xid(x)
        del db.sessions[name]
    db.locks.clear()
    db.key_locks.clear()
    db.table_locks.clear()
    for xid, thread in sorted(tail.begun.items()):
        if xid in tail.ended or xid in saved:
            continue
        scn = db.next_scn()
        ids = rg.TxnIds(Xid(*xid), undo_seq=0, started=True)
        db.emit(thread, scn, [rg.commit_cv(ids, scn, rollback=True)])
        done.append(".".join(map(str, xid)))
    db.checkpoint()
    return done


def recovery_text(
    name: str, rolled: RollForward | None, rolled_back: list[str], seconds: float
) -> str | None:
    """What an open's instance recovery did, in one line (None: it had nothing to do)."""
    if rolled is None and not rolled_back:
        return None
    changes = rolled.changes if rolled is not None else 0
    txns = rolled.transactions if rolled is not None else 0
    return (
        f"instance recovery of database {name}: {changes} changes of {txns} transactions "
        f"rolled forward, {len(rolled_back)} transactions rolled back ({seconds:.2f} s)"
    )


def report(
    root: Path,
    rolled: RollForward | None,
    rolled_back: list[str],
    seconds: float,
    component: str = GGSCI_COMPONENT,
) -> str | None:
    """The :data:`RECOVERY_CODE` line of an open that recovered, ``CODE  text`` (None:
    nothing recovered), written (as an OGG event line) to the ggserr.log of the home whose
    ``dirdb/`` holds the database ``root`` (none outside a home). A log that cannot be
    written does not fail the open."""
    text = recovery_text(root.name, rolled, rolled_back, seconds)
    if text is None:
        return None
    event = Event(RECOVERY_CODE, Severity.INFO, text, component)
    home = Home(root.parent.parent)
    if root.parent.resolve() == home.dirdb.resolve():
        try:
            log_event(home.ggserr_log, event)
        except OSError as exc:
            _LOG.warning("ggserr.log not written: %s", exc)
    return f"{RECOVERY_CODE}  {text}"
