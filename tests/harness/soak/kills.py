"""Which kills count: only those that landed mid-stream.

A kill is *requested* when the soak sends SIGKILL; it is *effective* only when the process
had produced something since its previous kill (it was past its start-up, writing) and
still had work left at that instant (its input was ahead of its output). Output is read
after the process died, so it is exactly what the process left behind; input is read just
before the signal, so the backlog is never overstated. What output and input are:

=========  ===========================================  ========================================
process    output                                       input
=========  ===========================================  ========================================
Extract    whole transactions in the local trail         source transactions committed (and
                                                         flushed to redo) by the workload
pump       whole transactions in the remote trail        whole transactions in the local trail
Replicat   changes applied and committed (apply audit)   changes in the remote trail
Manager    everything the three groups produced          everything they had to do
=========  ===========================================  ========================================
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Kill:
    process: str
    output_before: int  # the process's output at its previous kill (0 for the first)
    output: int  # its output when it died
    backlog: int  # input (read just before the signal) minus output
    seconds: float = 0.0  # since the soak began

    @property
    def effective(self) -> bool:
        return self.output > self.output_before and self.backlog > 0


@dataclass
class KillLog:
    kills: list[Kill] = field(default_factory=list)
    skipped: int = 0  # kills not sent: the process was not mid-stream in time

    def last_output(self, process: str) -> int:
        return next((k.output for k in reversed(self.kills) if k.process == process), 0)

    def add(self, kill: Kill) -> Kill:
        self.kills.append(kill)
        return kill

    @property
    def requested(self) -> int:
        return len(self.kills)

    @property
    def effective(self) -> int:
        return sum(k.effective for k in self.kills)

    def lines(self) -> list[str]:
        asked = Counter(k.process for k in self.kills)
        landed = Counter(k.process for k in self.kills if k.effective)
        per = ",".join(f"{p}:{landed[p]}/{asked[p]}" for p in sorted(asked))
        return [
            f"kills_requested={self.requested}",
            f"kills_effective={self.effective}",
            f"kills_by_process={per}",
            f"kills_skipped={self.skipped}",
        ]
