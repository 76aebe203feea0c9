"""Which container's tables an attached database's Extract captures: the catalog part of its
TABLE names (``TABLE FREEPDB1.OLR_TEST.*;``, or ``SOURCECATALOG FREEPDB1`` before two-part
names), as GoldenGate's three-part names select a multitenant database's PDB.

A table of the attached dictionary is captured when a TABLE statement selects its owner and
name *and* its container: a statement without a catalog selects every container; one with a
catalog only the container of that name (the dictionary's ``container``: a table whose
container has no name there matches no catalog). The trail names tables ``owner.name``, so
two captured tables of one name in two containers would be one table downstream: that is
refused before anything is read (OGG-02636, as GoldenGate refuses a TABLE without the catalog
a container database requires), naming the TABLE statement, the table and its containers.

:func:`selected` gives the dictionary the Extract decodes the redo with: the tables of a
container a catalog-qualified TABLE leaves out are dropped from it when the same name is
captured elsewhere, so the miners (which know tables by container and data object) never take
their rows for the captured one's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from engine.extract.start import ExtractError
from engine.redo.dictionary import Dictionary, Table
from params.models import ObjectName, ParamFile, TableSpec


def catalog_of(t: Table) -> str | None:
    """The catalog a TABLE name's first part is compared with: the container's name; ""
    (matching no catalog) for a container the dictionary does not name; None in a non-CDB."""
    if t.container:
        return t.container
    return "" if t.con_id else None


def selected(
    d: Dictionary, model: ParamFile, warn: Callable[[str], None] = lambda _m: None
) -> Dictionary:
    """``d`` without the tables the TABLE statements' catalogs leave out (module docstring);
    ExtractError OGG-02636 when one name is captured in two containers."""
    named = any(t.source.catalog for t in model.tables if not t.exclude)
    captured: dict[tuple[str, str], list[Table]] = {}
    for t in d.tables:
        if model.captured(t.owner, t.name, catalog_of(t)) is not None:
            captured.setdefault((t.owner, t.name), []).append(t)
    for (owner, name), ts in captured.items():
        if len({t.con_id for t in ts}) > 1:
            spec = model.captured(owner, name, catalog_of(ts[0]))
            where = ", ".join(_container(t) for t in ts)
            raise ExtractError(
                "OGG-02636",
                f"The TABLE specification '{spec.source if spec else owner + '.' + name}' "
                f"selects {owner}.{name} in containers {where}: name one container "
                f"(catalog.owner.table, or SOURCECATALOG) for each.",
            )
    # another container's table of a captured name: not this Extract's
    keep = [t for t in d.tables if captured.get((t.owner, t.name), [t])[0].con_id == t.con_id]
    if named:
        for con in sorted({t.con_id for t in d.tables if t.con_id and not t.container}):
            warn(
                f"OGG-02636: the dictionary names no container {con}: a TABLE name with a "
                f"catalog does not select its tables (take the dictionary again with the "
                f"shipped script)"
            )
    _unknown_catalogs(d, model, warn)
    return d if len(keep) == len(d.tables) else replace(d, tables=tuple(keep))


def _unknown_catalogs(d: Dictionary, model: ParamFile, warn: Callable[[str], None]) -> None:
    """A warning for each TABLE whose catalog names none of the dictionary's containers (a
    mistyped PDB, or the root's name): it selects no table, which nothing else would say."""
    names = sorted({t.container for t in d.tables if t.container})
    if not names or any(t.con_id and not t.container for t in d.tables):
        return  # a non-CDB, or a container without its name (warned above: it may be that)
    for spec in model.tables:
        cat = spec.source.catalog
        if spec.exclude or cat is None or not spec.statement.startswith("TABLE"):
            continue
        if not any(ObjectName("*", "*", cat).matches("*", "*", n) for n in names):
            warn(
                f"OGG-02636: the catalog {cat} of TABLE {spec.source} names no container of "
                f"the dictionary ({', '.join(names)}): it selects no table"
            )


def excluded_users(users: Iterable[str], names: Mapping[int, str]) -> frozenset[str]:
    """TRANLOGOPTIONS EXCLUDEUSER's names as the redo miner names a session's user: ``USER``
    excludes it in every container; ``PDB.USER`` in that container only, in a container
    database (the miner names a session there ``PDB.USER``: engine/redo/capture.py). A
    source without containers (``names`` empty) does not compare the catalog."""
    out = set()
    for u in users:
        catalog, _, name = u.upper().rpartition(".")
        out.add(f"{catalog}.{name}" if catalog and names else name)
    return frozenset(out)


def excludes(excluded: frozenset[str], user: str) -> bool:
    """Whether a session's user (``USER`` or ``PDB.USER``) is one EXCLUDEUSER names."""
    u = user.upper()
    _, dot, name = u.partition(".")
    return u in excluded or bool(dot and name in excluded)


def exclude_catalogs(users: Iterable[str], d: Dictionary) -> list[str]:
    """The catalogs of TRANLOGOPTIONS EXCLUDEUSER ``pdb.user`` names that name no container
    of a container database's dictionary: ExtractError OGG-02340 for the first, as
    GoldenGate refuses a non-existing catalog. When the dictionary leaves a container
    unnamed, a catalog may be its name: the warnings returned say so instead."""
    names = d.containers
    if not names:
        return []
    unnamed = sorted({t.con_id for t in d.tables if t.con_id and not t.container})
    warnings = []
    for u in users:
        catalog = u.upper().rpartition(".")[0]
        if not catalog or catalog in names.values():
            continue
        if not unnamed:
            raise ExtractError(
                "OGG-02340",
                f"TRANLOGOPTIONS EXCLUDEUSER / EXCLUDEUSERID non-existing catalog "
                f"'{catalog}' ({u}: the dictionary's containers are "
                f"{', '.join(sorted(names.values()))}).",
            )
        warnings.append(
            f"OGG-02340: the catalog {catalog} of TRANLOGOPTIONS EXCLUDEUSER {u} names no "
            f"container the dictionary names (it names no container "
            f"{', '.join(map(str, unnamed))}): sessions there are not excluded by it"
        )
    return warnings


def with_catalog(model: ParamFile) -> list[TableSpec]:
    """The TABLE / TABLEEXCLUDE statements that name a catalog (an embedded database, which
    has no containers, does not use it: a warning each)."""
    return [t for t in model.tables if t.source.catalog and t.statement.startswith("TABLE")]


def _container(t: Table) -> str:
    return f"{t.container} (con_id {t.con_id})" if t.container else f"con_id {t.con_id}"
