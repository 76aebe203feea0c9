"""A home set up for Extract ==> pump ==> Replicat, written once for tests, benchmarks and demo.

What such a home needs besides its processes: the parameter files of the Manager, the
Extract, the pump and the Replicat; the target's tables, checkpoint table and (optionally)
heartbeat tables; the GGSCI commands that add and start the groups and stop them again; and,
to check the result, the rows of a source table and of its target table in one spelling.

What differs between its users is a field of :class:`PipelineSpec`. The text of the files and
of the commands comes from pure functions of the spec; the few functions with I/O take the
home they work in. The commands are returned, not run, because each caller runs them its own
way (captured and asserted on, or shown as a user would type them); :func:`run_ggsci` runs
them as ``ggsci run`` in a child process for those that just want the output.

The target is an SQLite file (relative to the home) or a PostgreSQL URL, like ``TARGETDB``.
SQLite has no schemas: a table ``WL.WL_T01`` is ``WL_T01`` there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from engine.embedded.database import check_name, create_database
from engine.heartbeat.names import from_globals
from engine.home.layout import Home
from engine.home.status import MANAGER, State, effective_state, read_process_file
from engine.replicat.checkpoint_table import TableName
from engine.runtime.process import RUNNER_ENV

LOCAL_TRAIL = "./dirdat/lt"
REMOTE_TRAIL = "./dirrmt/rt"
COLLECTOR_RULE = "ACCESSRULE, PROG COLLECTOR, IPADDR 127.0.0.1, ALLOW"
"""The home is its own target host: its pump asks its own Manager for a Collector."""
AUTORESTART = "AUTORESTART ER *, RETRIES 100000, WAITMINUTES 0, RESETMINUTES 1"

Column = tuple[str, str]
Row = tuple[str | None, ...]

WORKLOAD_COLUMNS: tuple[Column, ...] = (
    ("ID", "NUMERIC PRIMARY KEY"),
    ("NAME", "VARCHAR(40)"),
    ("AMOUNT", "NUMERIC"),
    ("CREATED", "DATE"),
    ("STATUS", "CHAR(1)"),
)
"""The target columns of the tables ``ggsci db workload`` fills (engine.embedded.workload)."""

_TYPES: dict[str, dict[str, str]] = {
    "sqlite": {},
    # Oracle's DATE has a time of day; PostgreSQL's DATE would drop it.
    "postgresql": {"DATE": "TIMESTAMP"},
}


@dataclass(frozen=True)
class TargetTable:
    """A source table ``schema.name`` and the table it is replicated to (same names)."""

    schema: str
    name: str
    columns: tuple[Column, ...] = WORKLOAD_COLUMNS

    @property
    def source(self) -> str:
        """The table's name in the embedded source's ``data.sqlite``."""
        return f"{self.schema}${self.name}"

    def target(self, dialect: str) -> str:
        return f"{self.schema}.{self.name}".lower() if dialect == "postgresql" else self.name

    def ddl(self, dialect: str) -> str:
        types = _TYPES[dialect]
        body = ", ".join(f"{c} {types.get(t, t)}" for c, t in self.columns)
        return f"CREATE TABLE {self.target(dialect)} ({body})"

    def select(self, table: str) -> str:
        """Every column of ``table`` (this table under some name), in key order."""
        names = ", ".join(c for c, _ in self.columns)
        return f"SELECT {names} FROM {table} ORDER BY {self.columns[0][0]}"


def workload_tables(count: int) -> tuple[TargetTable, ...]:
    """``WL.WL_T01`` ... as ``ggsci db workload --tables count`` creates them."""
    return tuple(TargetTable("WL", f"WL_T{i:02d}") for i in range(1, count + 1))


@dataclass(frozen=True)
class Group:
    """A group's lower-case name as in its parameter file and commands; ``checkpoint_secs``
    None leaves CHECKPOINTSECS out of the file (the default interval)."""

    name: str
    checkpoint_secs: int | None = 1

    def checkpoint_line(self) -> str | None:
        return None if self.checkpoint_secs is None else f"CHECKPOINTSECS {self.checkpoint_secs}"


@dataclass(frozen=True)
class PipelineSpec:
    """One pipeline: embedded ``source`` ==> ``extract`` ==> ``pump`` ==> ``replicat`` ==>
    ``target``, for ``tables`` (their schemas are the TABLE and MAP wildcards).

    ``heartbeat_frequency`` None: no heartbeat tables. The target is logged into by
    ``DBLOGIN SOURCEDB`` (an SQLite file has no users; a PostgreSQL URL carries its own: a
    password on ``ggsci run``'s command line is refused). ``autorestart``: the
    Manager restarts every group that abends, at once and without limit (:data:`AUTORESTART`).
    """

    target: str
    tables: tuple[TargetTable, ...] = workload_tables(2)
    source: str = "src"
    extract: Group = Group("ext1")
    pump: Group = Group("pmp1")
    replicat: Group = Group("rep1")
    checkpoint_table: str = "gg.chkpt"
    grouptransops: int | None = None
    discard_file: str | None = None
    heartbeat_frequency: int | None = None
    autorestart: bool = False
    mgr_port: int = field(default_factory=lambda: free_port())
    """The Manager's PORT, which the pump's RMTHOST MGRPORT names (the home is its own target
    host); a free port by default, as several homes run side by side."""

    @property
    def dialect(self) -> str:
        postgres = self.target.startswith(("postgresql://", "postgres://"))
        return "postgresql" if postgres else "sqlite"

    @property
    def schemas(self) -> tuple[str, ...]:
        """The tables' schemas, lower case, in their first order."""
        return tuple(dict.fromkeys(t.schema.lower() for t in self.tables))

    @property
    def groups(self) -> tuple[tuple[str, str], ...]:
        """``(kind, NAME)`` of each group, as process files name them."""
        return (
            ("EXTRACT", self.extract.name.upper()),
            ("EXTRACT", self.pump.name.upper()),
            ("REPLICAT", self.replicat.name.upper()),
        )


def _text(*lines: str | None) -> str:
    return "".join(f"{line}\n" for line in lines if line is not None)


def extract_prm(spec: PipelineSpec) -> str:
    e = spec.extract
    return _text(
        f"EXTRACT {e.name}",
        f"SOURCEDB {spec.source}",
        f"EXTTRAIL {LOCAL_TRAIL}",
        e.checkpoint_line(),
        *(f"TABLE {s}.*;" for s in spec.schemas),
    )


def pump_prm(spec: PipelineSpec) -> str:
    p = spec.pump
    return _text(
        f"EXTRACT {p.name}",
        f"RMTHOST 127.0.0.1, MGRPORT {spec.mgr_port}",
        f"RMTTRAIL {REMOTE_TRAIL}",
        "PASSTHRU",
        p.checkpoint_line(),
        *(f"TABLE {s}.*;" for s in spec.schemas),
    )


def replicat_prm(spec: PipelineSpec) -> str:
    r = spec.replicat
    ops, discard = spec.grouptransops, spec.discard_file
    return _text(
        f"REPLICAT {r.name}",
        f"TARGETDB {spec.target}",
        "ASSUMETARGETDEFS",
        r.checkpoint_line(),
        None if ops is None else f"GROUPTRANSOPS {ops}",
        None if discard is None else f"DISCARDFILE {discard}, PURGE",
        *(f"MAP {s}.*, TARGET {s}.*;" for s in spec.schemas),
    )


def mgr_prm(spec: PipelineSpec) -> str:
    return _text(f"PORT {spec.mgr_port}", COLLECTOR_RULE, AUTORESTART if spec.autorestart else None)


def free_port() -> int:
    """A TCP port nobody listens on now (the system's choice)."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as s:
        return int(s.getsockname()[1])


def prm_files(spec: PipelineSpec) -> dict[str, str]:
    """File name in ``dirprm/`` -> content, the Manager's and each group's."""
    return {
        "mgr.prm": mgr_prm(spec),
        f"{spec.extract.name}.prm": extract_prm(spec),
        f"{spec.pump.name}.prm": pump_prm(spec),
        f"{spec.replicat.name}.prm": replicat_prm(spec),
    }


def target_login(spec: PipelineSpec) -> str:
    return f"DBLOGIN SOURCEDB {spec.target}"


def target_commands(spec: PipelineSpec) -> tuple[str, ...]:
    """The checkpoint table in the target; with heartbeats, the target's heartbeat tables and
    the source's (whose update job writes every ``heartbeat_frequency`` seconds)."""
    heartbeat = (
        ()
        if spec.heartbeat_frequency is None
        else (
            "ADD HEARTBEATTABLE, TARGETONLY",
            f"DBLOGIN SOURCEDB {spec.source}",
            f"ADD HEARTBEATTABLE, FREQUENCY {spec.heartbeat_frequency}",
        )
    )
    return (target_login(spec), f"ADD CHECKPOINTTABLE {spec.checkpoint_table}", *heartbeat)


def capture_commands(spec: PipelineSpec) -> tuple[str, ...]:
    e = spec.extract.name
    return (
        f"ADD EXTRACT {e}, TRANLOG, EXTSEQNO 1, EXTRBA 0",
        f"ADD EXTTRAIL {LOCAL_TRAIL}, EXTRACT {e}",
    )


def delivery_commands(spec: PipelineSpec) -> tuple[str, ...]:
    p, r = spec.pump.name, spec.replicat.name
    return (
        f"ADD EXTRACT {p}, EXTTRAILSOURCE {LOCAL_TRAIL}",
        f"ADD RMTTRAIL {REMOTE_TRAIL}, EXTRACT {p}",
        f"ADD REPLICAT {r}, EXTTRAIL {REMOTE_TRAIL}, CHECKPOINTTABLE {spec.checkpoint_table}",
    )


def start_commands(spec: PipelineSpec) -> tuple[str, ...]:
    return (
        f"START EXTRACT {spec.extract.name}",
        f"START EXTRACT {spec.pump.name}",
        f"START REPLICAT {spec.replicat.name}",
    )


def add_and_start_commands(spec: PipelineSpec) -> tuple[str, ...]:
    """The Manager, then every group added and started, upstream first."""
    return (
        "START MANAGER",
        *capture_commands(spec),
        *delivery_commands(spec),
        *start_commands(spec),
    )


def stop_commands(spec: PipelineSpec) -> tuple[str, ...]:
    """Every group stopped, downstream first (the Manager is left running)."""
    return (
        f"STOP REPLICAT {spec.replicat.name}",
        f"STOP EXTRACT {spec.pump.name}",
        f"STOP EXTRACT {spec.extract.name}",
    )


def write_prm_files(home: Home, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        (home.dirprm / name).write_text(text)


def prepare_home(home: Home, spec: PipelineSpec) -> None:
    """A new home ready for :func:`target_commands`: its directories, the embedded source
    database, every parameter file and the target's tables (:func:`create_target`)."""
    home.create_subdirs()
    create_database(home.dirdb, spec.source)
    write_prm_files(home, prm_files(spec))
    create_target(home, spec)


@contextlib.contextmanager
def target_connection(home: Home, spec: PipelineSpec) -> Iterator[Any]:
    """A DB-API connection to the target; each statement commits on its own."""
    if spec.dialect == "postgresql":
        import psycopg

        with psycopg.connect(spec.target, autocommit=True) as pg:
            yield pg
        return
    conn = sqlite3.connect(home.root / spec.target, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def create_target(home: Home, spec: PipelineSpec) -> None:
    """The target's tables, empty. On PostgreSQL every schema the pipeline writes (the tables',
    the checkpoint table's and, with heartbeats, the heartbeat tables' owner) is dropped first
    with all it holds: the server is assumed to be a throwaway one."""
    with target_connection(home, spec) as conn:
        if spec.dialect == "postgresql":
            (user,) = conn.execute("SELECT current_user").fetchone()
            for schema in _written_schemas(home, spec, user):
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            for schema in spec.schemas:
                conn.execute(f"CREATE SCHEMA {schema}")
        for table in spec.tables:
            conn.execute(table.ddl(spec.dialect))


def _written_schemas(home: Home, spec: PipelineSpec, user: str) -> tuple[str, ...]:
    """The PostgreSQL schemas of the tables, the checkpoint table and (with heartbeats) the
    heartbeat tables, whose owner defaults to the login user (engine.heartbeat.names)."""
    owners = [*spec.schemas, TableName.parse(spec.checkpoint_table).owner]
    if spec.heartbeat_frequency is not None:
        owners.append(from_globals(home.globals_file, user).owner)
    return tuple(dict.fromkeys(o.lower() for o in owners if o))


def normalise(value: object) -> str | None:
    """One spelling per value across SQLite and PostgreSQL (numbers, timestamps, text)."""
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return format(Decimal(str(value)).normalize(), "f")
    return str(value)


def source_rows(home: Home, spec: PipelineSpec, table: TargetTable) -> list[Row]:
    """The table's rows in the embedded source, normalised, in key order (read-only)."""
    path = home.dirdb / check_name(spec.source) / "data.sqlite"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(table.select(f'"{table.source}"')).fetchall()
    finally:
        conn.close()
    return [tuple(normalise(v) for v in r) for r in rows]


def target_rows(home: Home, spec: PipelineSpec, table: TargetTable) -> list[Row]:
    """The table's rows in the target, normalised, in key order."""
    with target_connection(home, spec) as conn:
        rows = conn.execute(table.select(table.target(spec.dialect))).fetchall()
    return [tuple(normalise(v) for v in r) for r in rows]


def run_ggsci(home: Home, *commands: str, timeout: float = 120.0) -> str:
    """``ggsci run commands`` in ``home`` as a child process; its stdout and stderr.

    A ``GGSCI_RUNNER_<kind>`` override in this process's environment (tests set them for
    in-process stand-ins) is not passed on: the pipeline runs the real groups."""
    env = {**os.environ, "GGHOME": str(home.root)}
    for kind in ("EXTRACT", "REPLICAT"):
        env.pop(RUNNER_ENV.format(kind=kind), None)
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env, cwd=home.root, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    return out.stdout + out.stderr


def kill_leftovers(home: Home, spec: PipelineSpec) -> None:
    """SIGKILL to every group of the pipeline and the Manager that still runs (after the stop
    commands), so that nothing outlives its home. A pid whose process file is stale (dead, or
    reused by another process) is left alone."""
    for kind, name in (*spec.groups, (MANAGER, MANAGER)):
        pf = read_process_file(home, kind, name)
        if pf is not None and effective_state(pf) in (State.STARTING, State.RUNNING):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pf.pid, signal.SIGKILL)
