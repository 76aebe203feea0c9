"""The properties file of a Big Data Replicat (``TARGETDB LIBFILE libggjava.so SET
property=dirprm/NAME.props``): its grammar (Java properties) and what ggsci's lakehouse
handler reads from it, checked with positions.

GoldenGate for Big Data names a handler in ``gg.handlerlist`` and configures it with
``gg.handler.<name>.<property>``. ggsci has one handler type family, the lakehouse
handler (:mod:`engine.targets.lake`); docs/replicat.md lists every property. Properties
Java adapters use that mean nothing here (``gg.classpath``, ``gg.log`` ...) are accepted
with a "not used" warning; any other property is an error.

Pure: text in, :class:`HandlerProps` and diagnostics out (no file system access).
"""

from __future__ import annotations

from dataclasses import dataclass

from params.catalog import suggest
from params.errors import Diagnostic, Origin, Severity

HANDLER_TYPES = ("deltalake", "iceberg")
CATALOG_TYPES = ("sql", "rest")
MODES = ("op",)
DEFAULT_CHECKPOINT_DB = "./dirchk/lake.db"
DEFAULT_BATCH_INTERVAL_MS = 1000

#: gg.handler.<name>.<property> the handler reads -> the handler types it applies to.
HANDLER_PROPERTIES: dict[str, tuple[str, ...]] = {
    "type": HANDLER_TYPES,
    "location": HANDLER_TYPES,
    "mode": HANDLER_TYPES,
    "batchIntervalMs": HANDLER_TYPES,
    "checkpointDatabase": HANDLER_TYPES,
    "catalogType": ("iceberg",),
    "catalogUri": ("iceberg",),
    "catalogName": ("iceberg",),
}

#: Properties of Java adapters accepted with a "not used" warning.
NOT_USED = frozenset(
    {
        "gg.classpath",
        "gg.log",
        "gg.log.level",
        "gg.report.time",
        "jvm.bootoptions",
        "javawriter.stats.display",
        "javawriter.stats.full",
        "gg.includeggtokens",
        "gg.encoding",
    }
)


@dataclass(frozen=True, slots=True)
class Prop:
    """One ``key=value`` line: its key, value and where each begins (1-based)."""

    key: str
    value: str
    line: int
    key_col: int
    value_col: int
    source: str


@dataclass(frozen=True, slots=True)
class HandlerProps:
    """What the lakehouse handler reads (defaults filled in; paths as written)."""

    name: str
    type: str
    location: str
    mode: str = "op"
    batch_interval_ms: int = DEFAULT_BATCH_INTERVAL_MS
    checkpoint_database: str = DEFAULT_CHECKPOINT_DB
    catalog_type: str = "sql"
    catalog_uri: str | None = None
    catalog_name: str = "ggsci"


def parse_properties(text: str) -> list[Prop]:
    """Java properties lines: ``#``/``!`` comments, ``key=value``, ``key: value`` or
    ``key value``, a trailing backslash continues the value on the next line."""
    out: list[Prop] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        number = i + 1
        i += 1
        stripped = raw.lstrip()
        if not stripped or stripped[0] in "#!":
            continue
        key_col = len(raw) - len(stripped) + 1
        j = 0
        while j < len(stripped) and stripped[j] not in "=: \t":
            j += 1
        key = stripped[:j]
        rest = stripped[j:]
        k = 0
        while k < len(rest) and rest[k] in " \t":
            k += 1
        if k < len(rest) and rest[k] in "=:":
            k += 1
            while k < len(rest) and rest[k] in " \t":
                k += 1
        value = rest[k:]
        value_col = key_col + j + k
        while value.endswith("\\") and i < len(lines):
            value = value[:-1] + lines[i].lstrip()
            i += 1
        out.append(Prop(key, value.rstrip(), number, key_col, value_col, raw))
    return out


def check_properties(text: str, path: str) -> tuple[HandlerProps | None, list[Diagnostic]]:
    """The handler's settings and every problem of the file, each at its position."""
    diags: list[Diagnostic] = []
    props = parse_properties(text)

    def at(p: Prop | None, col: str = "key") -> Origin:
        if p is None:
            return Origin(path, 1, 1, text.splitlines()[0] if text else "")
        return Origin(path, p.line, p.key_col if col == "key" else p.value_col, p.source)

    def error(code: str, message: str, p: Prop | None, col: str = "key") -> None:
        diags.append(Diagnostic(Severity.ERROR, code, message, at(p, col)))

    by_key: dict[str, Prop] = {}
    for p in props:
        if p.key in by_key:
            first = by_key[p.key].line
            error("duplicate", f"{p.key} may appear only once (first at line {first})", p)
        by_key[p.key] = p
    handler = by_key.get("gg.handlerlist")
    names = [n.strip() for n in handler.value.split(",") if n.strip()] if handler else []
    if handler is None:
        error("missing", "gg.handlerlist is missing: name the handler (gg.handlerlist=lake)", None)
    elif len(names) != 1:
        error("value", "gg.handlerlist must name exactly one handler", handler, "value")
    name = names[0] if len(names) == 1 else None
    prefix = f"gg.handler.{name}." if name else None
    values: dict[str, Prop] = {}
    for p in props:
        if p.key == "gg.handlerlist":
            continue
        if p.key in NOT_USED or p.key.startswith("goldengate.userexit."):
            diags.append(
                Diagnostic(
                    Severity.WARNING,
                    "not-used",
                    f"{p.key} (a Java adapter property) is not used by this engine",
                    at(p),
                )
            )
            continue
        if prefix and p.key.startswith(prefix):
            prop = p.key[len(prefix) :]
            if prop in HANDLER_PROPERTIES:
                values[prop] = p
                continue
            by_upper = {k.upper(): k for k in HANDLER_PROPERTIES}
            near = suggest(prop, set(by_upper))
            hint = f"; did you mean {by_upper[near]}?" if near else ""
            error("unknown-property", f"unknown handler property {p.key}{hint}", p)
            continue
        if p.key.startswith("gg.handler."):
            other = p.key.split(".")[2] if p.key.count(".") >= 2 else p.key
            error("unknown-handler", f"{p.key}: handler {other} is not in gg.handlerlist", p)
            continue
        error("unknown-property", f"unknown property {p.key}", p)
    if name is None:
        return None, diags
    kind_p = values.get("type")
    kind = kind_p.value.strip().lower() if kind_p else None
    if kind_p is None:
        error("missing", f"{prefix}type is missing ({' or '.join(HANDLER_TYPES)})", handler)
    elif kind not in HANDLER_TYPES:
        error(
            "value",
            f"{prefix}type must be {' or '.join(HANDLER_TYPES)} (got {kind_p.value!r})",
            kind_p,
            "value",
        )
        kind = None
    loc_p = values.get("location")
    if loc_p is None or not loc_p.value.strip():
        error(
            "missing",
            f"{prefix}location is missing (a directory or an s3:// URL)",
            loc_p or handler,
            "value" if loc_p else "key",
        )
    settings: dict[str, object] = {}
    for prop, p in values.items():
        if kind is not None and kind not in HANDLER_PROPERTIES[prop]:
            diags.append(
                Diagnostic(
                    Severity.WARNING, "not-used", f"{p.key} is not used by a {kind} handler", at(p)
                )
            )
    mode = values.get("mode")
    if mode is not None:
        if mode.value.strip().lower() not in MODES:
            error(
                "value",
                f"{mode.key} must be op (inserts, updates and deletes applied by key;"
                " for a history table use INSERTALLRECORDS in the parameter file)",
                mode,
                "value",
            )
        settings["mode"] = mode.value.strip().lower()
    interval = values.get("batchIntervalMs")
    if interval is not None:
        v = interval.value.strip()
        if not v.isdigit() or not 0 <= int(v) <= 3_600_000:
            error(
                "value",
                f"{interval.key} must be a whole number of milliseconds from 0 to "
                f"3600000 (got {v!r})",
                interval,
                "value",
            )
        else:
            settings["batch_interval_ms"] = int(v)
    ctype = values.get("catalogType")
    if ctype is not None:
        v = ctype.value.strip().lower()
        if v not in CATALOG_TYPES:
            error(
                "value",
                f"{ctype.key} must be {' or '.join(CATALOG_TYPES)} (got {v!r})",
                ctype,
                "value",
            )
        settings["catalog_type"] = v
    uri = values.get("catalogUri")
    if settings.get("catalog_type") == "rest" and (uri is None or not uri.value.strip()):
        error("missing", f"{prefix}catalogUri is needed with catalogType=rest", ctype)
    for prop, field in (
        ("catalogUri", "catalog_uri"),
        ("catalogName", "catalog_name"),
        ("checkpointDatabase", "checkpoint_database"),
    ):
        given = values.get(prop)
        if given is not None:
            if not given.value.strip():
                error("value", f"{given.key} needs a value", given, "value")
            else:
                settings[field] = given.value.strip()
    if any(d.is_error for d in diags) or kind is None or loc_p is None:
        return None, diags
    return HandlerProps(name, kind, loc_p.value.strip(), **settings), diags  # type: ignore[arg-type]
