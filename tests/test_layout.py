"""The folder tree is the architecture (README, "How the code is laid out"): rooms import only
rooms below them, no module imports itself back through others, and the group kinds
(Extract, pump, Replicat) do not import one another."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each room of engine/ and its layer: a room imports only rooms of a lower layer (and itself).
LAYERS: dict[str, int] = {
    "_native": 0, "errors": 0, "messages": 0, "home": 1, "storage": 2, "runtime": 2,
    "cluster": 2, "trail": 3, "targets": 3, "embedded": 4, "changes": 4, "expr": 4, "redo": 3,
    "logdump": 5, "heartbeat": 5, "pictures": 6, "extract": 7, "pump": 7, "replicat": 7,
    "postgres": 7, "manager": 8,
}  # fmt: skip
# redo (Oracle's format: framing, records, change vectors, values, identifiers) is below embedded
# (the database that writes it) and the Extract (that reads it): neither is imported by redo.
# postgres (issue 25) is the Extract's capture from a PostgreSQL slot: beside the Extract, it
# uses its cache, record assembly and trail opening, and the Extract's runner hands it a group.
#: The group kinds: peers, none imports another.
PEERS = {"extract", "pump", "replicat"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "engine").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            else:
                continue
            for n in names:
                while n and n not in mods:
                    n = n.rpartition(".")[0]
                if n and n not in (m, "engine"):
                    edges[m].add(n)
    return edges


def _room(module: str) -> str:
    return module.split(".")[1]


def test_every_room_has_a_layer() -> None:
    assert {_room(m) for m in _modules() if m != "engine"} <= set(LAYERS)


def test_no_import_runs_back_up_or_across_the_group_kinds() -> None:
    bad = []
    for m, targets in _edges(_modules()).items():
        if m == "engine":
            continue
        for t in targets:
            a, b = _room(m), _room(t)
            if a != b and (LAYERS[b] > LAYERS[a] or (a in PEERS and b in PEERS)):
                bad.append(f"{m} -> {t}")
    assert sorted(bad) == []


def test_no_import_circle() -> None:
    edges = _edges(_modules())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    assert circles == []
