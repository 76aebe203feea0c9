"""How much a soak must have done before "nothing lost" means anything (issue 28).

A soak that saw 65 transactions and 4 effective kills passed with a mutation that drops about
2% of transactions: with so little done, such a loss goes unseen more often than not
(0.98^65 = 0.27). Every soak therefore states what it did against minimums and refuses to
report success below them (``sufficient=no``, exit status 2):

- **transactions**: committed source transactions checked. If each is lost independently with
  probability :data:`LOSS` (1%), none is lost among ``n`` with probability ``0.99^n``; the
  minimum is the least ``n`` for which that is at most ``1 -`` :data:`CONFIDENCE` (0.99):
  ``n = ceil(ln 0.01 / ln 0.99) = 459`` (``0.99^459 = 0.0099``).
- **effective kills** (soaks that kill): a restart defect that loses data at one effective kill
  in :data:`KILL_DEFECT` (one in four) goes unseen after ``k`` kills with probability
  ``0.75^k``; at most 0.01 needs ``k = ceil(ln 0.01 / ln 0.75) = 17`` (``0.75^17 = 0.0075``).
- **exposed**: what the effective kills interrupted, the sum of their backlogs (transactions,
  or changes for the Replicat, in flight when the signal landed): a restart that loses 1% of
  what is in flight goes unseen with probability ``0.99^e``; the minimum is 459 again.

The rates are for independent losses: a defect that strikes only in a rare state needs a soak
that reaches that state, which no count can promise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

LOSS: Final = 0.01  # the share of transactions (or of what is in flight) a defect loses
CONFIDENCE: Final = 0.99  # the probability with which the soak must see it
KILL_DEFECT: Final = 0.25  # the share of effective kills at which a restart defect strikes


def needed(rate: float, confidence: float = CONFIDENCE) -> int:
    """The least ``n`` with ``(1 - rate)^n <= 1 - confidence``."""
    return math.ceil(math.log(1 - confidence) / math.log(1 - rate) - 1e-9)


def unseen(rate: float, n: int) -> float:
    """The probability that ``n`` independent chances at ``rate`` all miss."""
    return (1 - rate) ** n


MIN_TRANSACTIONS: Final = needed(LOSS)
MIN_KILLS: Final = needed(KILL_DEFECT)
MIN_EXPOSED: Final = needed(LOSS)


@dataclass(frozen=True)
class Sufficiency:
    """What a soak did; ``kills`` and ``exposed`` are None for a soak that kills nothing."""

    transactions: int
    kills: int | None = None
    exposed: int | None = None

    @property
    def shortfalls(self) -> list[str]:
        out = []
        if self.transactions < MIN_TRANSACTIONS:
            out.append(f"transactions {self.transactions} < {MIN_TRANSACTIONS}")
        if self.kills is not None and self.kills < MIN_KILLS:
            out.append(f"effective kills {self.kills} < {MIN_KILLS}")
        if self.exposed is not None and self.exposed < MIN_EXPOSED:
            out.append(f"exposed {self.exposed} < {MIN_EXPOSED}")
        return out

    @property
    def ok(self) -> bool:
        return not self.shortfalls

    def lines(self) -> list[str]:
        """``name=value`` lines: each count against its minimum with the probability that a
        loss of the stated rate goes unseen, then ``sufficient=yes|no``."""
        t = self.transactions
        out = [
            f"sufficiency_transactions={t}/{MIN_TRANSACTIONS} (a loss of {LOSS:.0%} of "
            f"transactions goes unseen with probability {1 - LOSS:g}^{t} = "
            f"{unseen(LOSS, t):.4f}; the minimum makes it <= {1 - CONFIDENCE:.2f})"
        ]
        if self.kills is not None:
            k = self.kills
            out.append(
                f"sufficiency_kills={k}/{MIN_KILLS} (a restart defect striking at 1 effective "
                f"kill in {round(1 / KILL_DEFECT)} goes unseen with probability "
                f"{1 - KILL_DEFECT:g}^{k} = {unseen(KILL_DEFECT, k):.4f})"
            )
        if self.exposed is not None:
            e = self.exposed
            out.append(
                f"sufficiency_exposed={e}/{MIN_EXPOSED} (in flight at the effective kills: a "
                f"restart losing {LOSS:.0%} of it goes unseen with probability "
                f"{1 - LOSS:g}^{e} = {unseen(LOSS, e):.4f})"
            )
        out.append("sufficient=yes" if self.ok else f"sufficient=no ({'; '.join(self.shortfalls)})")
        return out


def exit_status(checks_ok: bool, enough: Sufficiency) -> int:
    """0: the checks passed on enough; 1: a check failed; 2: they passed on too little to
    mean it (no success reported)."""
    if not checks_ok:
        return 1
    return 0 if enough.ok else 2


def verdict(checks_ok: bool, enough: Sufficiency) -> str:
    return ("pass" if enough.ok else "insufficient") if checks_ok else "fail"
