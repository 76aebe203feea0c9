"""Who may send what to the Manager's TCP port: mgr.prm's ACCESSRULEs, denying by default.

GGSCI on the home's own machine controls the Manager over the 0600 Unix socket, where only the
home's owner gets in (:func:`engine.runtime.ipc.owner_only`). The TCP port (PORT) is what GoldenGate
keeps for other hosts and programs, so every request arriving there is first given a program,
as GoldenGate's ACCESSRULE names them, and then judged by the rules:

- START, STOP and KILL are inter-process commands of the Manager: program ``MANAGER`` (PROG MGR
  or MANAGER); the other requests (CHILDSTATUS, GETPORTINFO, GETPURGEOLDEXTRACTS, STATUS) are
  what GGSCI asks: program ``GGSCI``; COLLECTOR (a pump asking for a dynamic Collector,
  :mod:`engine.manager.collector`) is program ``COLLECTOR`` (PROG COLLECTOR or SERVER). This
  engine runs no GUI or remote Replicat, so rules for those programs match no request.
- Rules are tried by PRI (1 first); rules without PRI come after, in file order. The first rule
  whose PROG and IPADDR match decides. No rule, or no matching rule: the request is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.runtime.ipc import Peer, Reply, Request
from params.access import AccessRule

MANAGER_COMMANDS = frozenset({"START", "STOP", "KILL"})


def program_of(request: Request) -> str:
    """The ACCESSRULE program a Manager request belongs to."""
    if request.command == "COLLECTOR":
        return "COLLECTOR"
    return "MANAGER" if request.command in MANAGER_COMMANDS else "GGSCI"


@dataclass(frozen=True)
class AccessPolicy:
    rules: tuple[AccessRule, ...] = ()

    @classmethod
    def of(cls, rules: Sequence[AccessRule]) -> AccessPolicy:
        return cls(tuple(sorted(rules, key=lambda r: r.rank)))

    def decide(self, program: str, address: str) -> AccessRule | None:
        """The rule that decides, or ``None`` when none matches (refused)."""
        return next((r for r in self.rules if r.matches(program, address)), None)

    def gate(self, peer: Peer, request: Request) -> Reply | None:
        """The gate of :class:`~engine.runtime.ipc.TcpListener`: ``None`` serves, else a refusal."""
        program = program_of(request)
        rule = self.decide(program, peer.address)
        if rule is not None and rule.allow:
            return None
        who = peer.address if peer.uid is None else f"{peer.address} (uid {peer.uid})"
        why = (
            "no ACCESSRULE allows it"
            if rule is None
            else f"ACCESSRULE {rule.order + 1} of mgr.prm denies it"
        )
        return Reply.error(
            f"ERROR: access denied: {request.command or 'empty request'} (PROG {program}) "
            f"from {who}; {why}."
        )
