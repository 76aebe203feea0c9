"""``ggsci db ...``: the embedded source database (thin typer commands over engine.embedded).

Every command turns a :class:`~engine.embedded.errors.SourceError` into one line
``CODE: message`` on stderr and exit status 1; never a traceback for a user mistake.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, TypeVar

import typer

from engine.embedded.archiver import (
    ArchiveParams,
    Archiver,
    archive_params,
    archived_copy,
    set_archive_dest,
)
from engine.embedded.database import (
    Database,
    create_database,
    databases,
    drop_database,
    open_database,
)
from engine.embedded.dictionary import load_dictionary
from engine.embedded.errors import STATEMENT_ERRORS, DatabaseError, SourceError
from engine.embedded.workload import CHECKPOINT_EVERY
from engine.home.layout import Home, HomeError, resolve_home
from engine.home.trust import NotHomeOwner, check_home_owner
from engine.home.userfile import UserFileError, open_regular, read_user_file
from engine.redo.archnames import DEFAULT_FORMAT

if TYPE_CHECKING:
    from engine.embedded.logs import LogInfo
    from engine.embedded.sql import Result
    from engine.redo.framing import LogHeader, Record
    from engine.redo.model import RedoRecord

app = typer.Typer(help="The embedded source database and its redo log.", no_args_is_help=True)

HomeOpt = Annotated[str | None, typer.Option("--home", help="GoldenGate home directory.")]
PasswordStdin = Annotated[
    bool,
    typer.Option(
        "--password-stdin",
        help="Read the secret of a location given with its key alone (s3://KEY@...) from "
        "standard input (a secret in the location itself is refused: other users can read "
        "a command line).",
    ),
]
T = TypeVar("T")


def _dirdb(home: str | None) -> Path:
    """The home's ``dirdb/``; one line and exit status 1 when the home is another user's."""
    try:
        resolved = resolve_home(home)
        check_home_owner(resolved)
    except (HomeError, NotHomeOwner) as exc:
        raise _fail(exc) from None
    return resolved.dirdb


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(str(exc), err=True)
    return typer.Exit(1)


def _not_attached(dirdb: Path, name: str) -> None:
    """One line when ``name`` is an attached database: an embedded database's command (SQL,
    log switches, its dictionary, its redo by name) has nothing to act on there."""
    from engine.redo.attached import AttachError, attached
    from engine.redo.errors import RedoError

    try:
        found = attached(dirdb, name)
    except RedoError as exc:
        raise _fail(exc) from None
    if found is not None:
        raise _fail(
            AttachError(
                f"{found.name} is an attached database (Oracle archived logs): this command is "
                f"an embedded database's; list its logs with ggsci db logs {found.name}, dump "
                f"one by its path, ggsci db show {found.name} for what was attached"
            )
        )


@contextmanager
def _db(home: str | None, name: str, **kwargs: Any) -> Iterator[Database]:
    dirdb = _dirdb(home)
    _not_attached(dirdb, name)
    try:
        db = open_database(dirdb, name, **kwargs)
    except STATEMENT_ERRORS as exc:
        raise _fail(exc) from None
    if db.recovery_line:  # (instance recovery ran: the home's ggserr.log has it too)
        typer.echo(db.recovery_line, err=True)
    try:
        yield db
    except STATEMENT_ERRORS as exc:
        raise _fail(exc) from None
    finally:
        db.close()


def _guard(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except STATEMENT_ERRORS as exc:
        raise _fail(exc) from None


def _print_result(r: Result) -> None:
    if r.columns:
        widths = [
            max(len(c), *(len(_fmt(row[i])) for row in r.rows)) if r.rows else len(c)
            for i, c in enumerate(r.columns)
        ]
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r.columns, widths, strict=True)))
        typer.echo("  ".join("-" * w for w in widths))
        for row in r.rows:
            typer.echo("  ".join(_fmt(v).ljust(w) for v, w in zip(row, widths, strict=True)))
        typer.echo("")
    typer.echo(r.feedback)


def _fmt(v: object) -> str:
    return "" if v is None else str(v)


@app.command("create")
def create(
    name: str,
    threads: Annotated[int, typer.Option(help="Redo threads (RAC instances).")] = 1,
    log_size: Annotated[int, typer.Option(help="Log switch size in MB.")] = 64,
    archive_dest: Annotated[
        str | None,
        typer.Option(help="Copy each archived log here (a path, file://, s3://, hdfs://)."),
    ] = None,
    archive_format: Annotated[
        str,
        typer.Option(
            help="LOG_ARCHIVE_FORMAT: archived log names (%t thread, %s sequence, "
            "%r resetlogs id, %d dbid, %a activation; upper case zero-filled)."
        ),
    ] = DEFAULT_FORMAT,
    password_stdin: PasswordStdin = False,
    home: HomeOpt = None,
) -> None:
    """Create an embedded database."""
    _not_attached(_dirdb(home), name)
    dest: str | None = None
    if archive_dest:
        given = _location(home, archive_dest, "--archive-dest", _dest_alias(name), password_stdin)
        dest = _guard(lambda: _checked_dest(given))
    params = ArchiveParams(dest, archive_format)
    root = _guard(
        lambda: create_database(_dirdb(home), name, threads, log_size * 1024 * 1024, params)
    )
    typer.echo(f"Database {root.name} created ({threads} redo thread(s)).")


def _location(
    home: str | None, location: str, option: str, alias: str | None, password_stdin: bool
) -> str:
    """A location given as an argument, with the secret it needs from the store, standard
    input or a prompt (:mod:`ggsci.secretin`); one line when it carries a secret itself."""
    from ggsci.secretin import SecretOnCommandLine, location_secret

    try:
        return location_secret(lambda: _home_of(home), location, option, alias, password_stdin)
    except SecretOnCommandLine as exc:
        raise _fail(exc) from None


def _home_of(home: str | None) -> Home:
    _dirdb(home)  # the owner's home only (one line otherwise)
    return resolve_home(home)


def _dest_alias(name: str) -> str:
    """The credential store alias of a database's archive destination's secret (as
    engine.embedded.archiver keeps it)."""
    return f"ARCHIVEDEST_{name.upper()}"


def _checked_dest(dest: str) -> str:
    """An archive destination as stored: a relative path made absolute; one that cannot be
    used (an unknown scheme, hdfs:// without libhdfs) refused in one line."""
    from engine import storage

    if storage.is_local(dest) and not dest.startswith("file:"):
        return str(Path(dest).resolve())
    try:
        storage.exists(dest)
    except storage.StorageError as exc:
        raise SourceError(exc.message, exc.code) from None
    return dest


@app.command("archive-dest")
def archive_dest_cmd(
    name: str,
    dest: Annotated[
        str | None, typer.Argument(help="The new destination; absent: show the current one.")
    ] = None,
    none: Annotated[bool, typer.Option("--none", help="Stop archiving.")] = False,
    password_stdin: PasswordStdin = False,
    home: HomeOpt = None,
) -> None:
    """Show or set where archived logs are copied (Oracle's LOG_ARCHIVE_DEST)."""
    if dest is not None:
        dest = _location(home, dest, "DEST", _dest_alias(name), password_stdin)
    with _db(home, name) as db:
        if dest is None and not none:
            params = archive_params(db.root)
            typer.echo(f"LOG_ARCHIVE_DEST: {_shown(params.dest)}")
            typer.echo(f"LOG_ARCHIVE_FORMAT: {params.format}")
            return
        new = None if none else _checked_dest(str(dest))
        set_archive_dest(db.root, new)
    typer.echo(f"System altered. LOG_ARCHIVE_DEST: {_shown(new)}")


@app.command("archive")
def archive(name: str, home: HomeOpt = None) -> None:
    """Copy every archived log not copied yet to the archive destination now."""
    with _db(home, name) as db:
        archiver = Archiver.for_database(db.root)
        if archiver is None:
            raise _fail(
                SourceError(f"database {db.root.name} has no archive destination", "GGS-SRC-0109")
            )
        done = archiver()
    for e in archiver.errors:
        typer.echo(e, err=True)
    typer.echo(f"{len(done)} log(s) archived.")
    if archiver.errors:
        raise typer.Exit(1)


@app.command("show")
def show(name: str, home: HomeOpt = None) -> None:
    """Show a database's parameters: DBID, threads, log size, SCN, LOG_ARCHIVE_DEST and
    LOG_ARCHIVE_FORMAT. An attached database: its archive location, format, tables, logs."""
    if _show_attached(_dirdb(home), name):
        return
    with _db(home, name) as db:
        ident = db.logs.identity
        params = archive_params(db.root)
        rows = [
            ("DB_NAME", ident.db_name),
            ("DBID", f"{ident.dbid} (0x{ident.dbid:08X})"),
            ("RESETLOGS_ID", str(ident.resetlogs_id)),
            ("THREADS", str(db.state.threads)),
            ("LOG_SIZE", f"{db.state.log_bytes // (1024 * 1024)} MB"),
            ("CURRENT_SCN", str(db.state.scn)),
            ("TABLES", str(len(db.dictionary.tables))),
            ("LOG_ARCHIVE_DEST", _shown(params.dest)),
            ("LOG_ARCHIVE_FORMAT", params.format),
        ]
    for key, value in rows:
        typer.echo(f"{key + ':':20s}{value}")


def _show_attached(dirdb: Path, name: str) -> bool:
    """``db show`` of an attached database (False: ``name`` is not one)."""
    from engine.redo.attached import attached
    from engine.redo.catalog import list_logs as oracle_logs
    from engine.redo.errors import RedoError
    from engine.storage import StorageError

    try:
        found = attached(dirdb, name)
        if found is None:
            return False
        tables = str(len(found.dictionary().tables))
        try:
            logs = str(len(oracle_logs(found.archive, found.format)))
        except (RedoError, StorageError) as exc:
            logs = f"(cannot list: {exc})"
    except RedoError as exc:
        raise _fail(exc) from None
    for key, value in (
        ("DB_NAME", found.name),
        ("KIND", "attached: Oracle archived logs"),
        ("LOG_ARCHIVE_DEST", _shown(found.archive)),
        ("LOG_ARCHIVE_FORMAT", found.format),
        ("TABLES", tables),
        ("LOGS", logs),
    ):
        typer.echo(f"{key + ':':20s}{value}")
    return True


@app.command("dictionary")
def dictionary_cmd(
    name: str,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write it here (default: standard output).")
    ] = None,
    home: HomeOpt = None,
) -> None:
    """Write the database's dictionary in ggsci's Oracle dictionary JSON, as
    engine/redo/sql/ggsci_dictionary.sql writes a real database's (for db attach)."""
    import json

    from engine.embedded.oradict import oracle_dictionary

    with _db(home, name) as db:
        doc = oracle_dictionary(db.dictionary, db.state.scn).to_json()
    text = json.dumps(doc, indent=1) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(DatabaseError(f"cannot write {out}: {exc.strerror}", "GGS-SRC-0107")) from None
    typer.echo(f"Dictionary of {len(doc['tables'])} table(s) at SCN {doc['scn']} written to {out}.")


def _shown(dest: str | None) -> str:
    from engine.storage import describe

    return describe(dest) if dest else "(none)"


@app.command("drop")
def drop(name: str, home: HomeOpt = None) -> None:
    """Drop a database, its tables and its redo logs (an attached one: forget it; its
    archived logs are not touched)."""
    from engine.redo.attached import detach
    from engine.redo.errors import RedoError

    try:
        if detach(_dirdb(home), name):
            typer.echo(f"Database {name.upper()} detached (its archived logs are kept).")
            return
    except RedoError as exc:
        raise _fail(exc) from None
    _guard(lambda: drop_database(_dirdb(home), name))
    typer.echo(f"Database {name.upper()} dropped.")


@app.command("attach")
def attach(
    name: str,
    archive: Annotated[
        str,
        typer.Option(
            "--archive", help="Where the archived logs are: a directory, a mount, or s3://."
        ),
    ],
    dictionary: Annotated[
        Path,
        typer.Option(
            "--dictionary",
            help="The dictionary: OpenLogReplicator's schema checkpoint or ggsci's own JSON "
            "(engine/redo/sql/ggsci_dictionary.sql).",
        ),
    ],
    format_: Annotated[
        str | None,
        typer.Option("--format", help="LOG_ARCHIVE_FORMAT of the logs (default %t_%s_%r.dbf)."),
    ] = None,
    password_stdin: PasswordStdin = False,
    home: HomeOpt = None,
) -> None:
    """Attach a real Oracle database by its archived logs and its dictionary (for an
    Extract's SOURCEDB with TRANLOGOPTIONS ARCHIVEDLOGONLY)."""
    from engine.redo.attached import attach as attach_db
    from engine.redo.catalog import list_logs as oracle_logs
    from engine.redo.errors import RedoError
    from engine.storage import StorageError, describe

    archive = _location(home, archive, "--archive", f"ATTACHED_{name.upper()}", password_stdin)
    try:
        db = attach_db(_dirdb(home), name, archive, dictionary, format_)
        tables = len(db.dictionary().tables)
        found = len(oracle_logs(db.archive, db.format))
    except (RedoError, StorageError) as exc:
        raise _fail(exc) from None
    typer.echo(
        f"Database {db.name} attached: archived logs {db.format} under {describe(db.archive)} "
        f"({found} now), dictionary of {tables} table(s)."
    )


@app.command("list")
def list_(home: HomeOpt = None) -> None:
    """List the databases of the home."""
    dirdb = _dirdb(home)
    names = databases(dirdb)
    for n in names:
        typer.echo(n)
    if dirdb.is_dir():
        from engine.redo.attached import RECORD

        for p in sorted(dirdb.glob(f"*/{RECORD}")):
            typer.echo(f"{p.parent.name} (attached: Oracle archived logs)")
            names.append(p.parent.name)
    if not names:
        typer.echo("No databases.")


def _stdin_bytes() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer.read() if buffer is not None else sys.stdin.read().encode()


def _sql_text(data: bytes, where: str) -> str:
    """SQL is UTF-8; a byte that is not is refused with its line (not replaced: it would
    change the data the statements write)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(
            SourceError(f"{where}:{line}: not UTF-8 (byte {data[exc.start]:#04x})", "GGS-SRC-0107")
        ) from None


def _run_sql(db: Database, text: str, session: str | None, user: str, thread: int | None) -> None:
    """Run a script in a named session (its transaction stays open across invocations), or
    in a session of this invocation only, which commits at the end like SQL*Plus's EXIT
    (and rolls back when a statement fails)."""
    from engine.embedded.sql import run_script

    anonymous = session is None
    s = db.session(session or f"CLI{os.getpid()}", username=user, thread=thread)
    try:
        for r in run_script(db, s, text):
            _print_result(r)
    except STATEMENT_ERRORS:
        if anonymous:
            s.rollback(db)
            del db.sessions[s.name]
        raise
    if anonymous:
        s.commit(db)
        del db.sessions[s.name]
    db.checkpoint()


@app.command("sql")
def sql(
    name: str,
    statement: Annotated[
        str | None, typer.Argument(help="SQL; standard input when absent.")
    ] = None,
    session: Annotated[
        str | None, typer.Option(help="Session name (interleave across calls).")
    ] = None,
    user: Annotated[str, typer.Option(help="User (default schema) of a new session.")] = "GGUSER",
    thread: Annotated[int | None, typer.Option(help="Redo thread of a new session.")] = None,
    clock_rate: Annotated[float, typer.Option(help="Redo time per wall second.")] = 1.0,
    home: HomeOpt = None,
) -> None:
    """Run SQL statements in one session (``;``-separated)."""
    text = statement if statement is not None else _sql_text(_stdin_bytes(), "standard input")
    with _db(home, name, clock_rate=clock_rate) as db:
        _run_sql(db, text, session, user, thread)


@app.command("run")
def run(
    name: str,
    script: Path,
    session: Annotated[
        str | None, typer.Option(help="Session name (interleave across calls).")
    ] = None,
    user: Annotated[str, typer.Option(help="User (default schema) of a new session.")] = "GGUSER",
    thread: Annotated[int | None, typer.Option(help="Redo thread of a new session.")] = None,
    clock_rate: Annotated[float, typer.Option(help="Redo time per wall second.")] = 1.0,
    home: HomeOpt = None,
) -> None:
    """Run a SQL script file."""
    try:  # a FIFO, a device, a huge file: one line, never a wait
        data = read_user_file(script, MAX_TEXT_BYTES)
    except UserFileError as exc:
        raise _fail(SourceError(f"cannot read {exc}", "GGS-SRC-0107")) from None
    text = _sql_text(data, str(script))
    with _db(home, name, clock_rate=clock_rate) as db:
        _run_sql(db, text, session, user, thread)


@app.command("workload")
def workload(
    name: str,
    tables: Annotated[int, typer.Option(help="Tables (WL.WL_Tnn).")] = 4,
    tps: Annotated[float, typer.Option(help="Transactions/s (0 = unthrottled).")] = 0.0,
    rows_per_txn: Annotated[int, typer.Option(help="Row changes per transaction.")] = 10,
    duration: Annotated[float | None, typer.Option(help="Seconds of wall time.")] = None,
    transactions: Annotated[int | None, typer.Option(help="Transactions to run.")] = None,
    mix: Annotated[
        str, typer.Option(help="insert=..,update=..,delete=..")
    ] = "insert=50,update=35,delete=15",
    rollback_ratio: Annotated[
        float, typer.Option(help="Share of transactions rolled back.")
    ] = 0.05,
    long_txn: Annotated[
        str | None,
        typer.Option(help="COUNT:AGE long-running transactions (AGE seconds of redo time)."),
    ] = None,
    sessions: Annotated[int, typer.Option(help="Concurrent sessions.")] = 8,
    array: Annotated[int, typer.Option(help="Rows per INSERT (> 1: array inserts).")] = 1,
    clock_rate: Annotated[float, typer.Option(help="Redo time per wall second.")] = 1.0,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 1,
    checkpoint_every: Annotated[
        int,
        typer.Option(
            help="Checkpoint the tables every N transactions (0: at the start and end only)."
        ),
    ] = CHECKPOINT_EVERY,
    home: HomeOpt = None,
) -> None:
    """Generate a reproducible OLTP workload (with a progress bar)."""
    from engine.embedded.workload import WorkloadSpec, WorkloadStats, parse_mix, run_workload

    if checkpoint_every < 0:
        raise _fail(SourceError(f"--checkpoint-every: 0 or more, got {checkpoint_every}"))

    long_count, long_age = 0, 3600.0
    if long_txn:
        try:
            c, _, a = long_txn.partition(":")
            long_count, long_age = int(c), float(a)
        except ValueError:
            raise _fail(SourceError(f"--long-txn: expected COUNT:AGE, got {long_txn!r}")) from None
    spec = WorkloadSpec(
        tables=tables,
        tps=tps,
        rows_per_txn=max(1, rows_per_txn),
        duration=duration,
        transactions=transactions if transactions is not None or duration is not None else 1000,
        mix=_guard(lambda: parse_mix(mix)),
        rollback_ratio=rollback_ratio,
        long_txns=long_count,
        long_age=long_age,
        sessions=sessions,
        array=max(1, array),
        seed=seed,
        checkpoint_every=checkpoint_every,
    )
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    total = spec.transactions if spec.duration is None else spec.duration
    with (
        _db(home, name, clock_rate=clock_rate) as db,
        Progress(
            TextColumn("[bold]workload"),
            BarColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            transient=True,
        ) as bar,
    ):
        task = bar.add_task("", total=total)

        def progress(st: WorkloadStats) -> None:
            done = st.transactions if spec.duration is None else st.seconds
            bar.update(
                task,
                completed=done,
                description=f"{st.transactions} txns, {st.row_changes} row changes",
            )

        stats = run_workload(db, spec, progress)
    typer.echo(
        f"{stats.transactions} transactions ({stats.commits} committed, {stats.rollbacks} rolled "
        f"back), {stats.row_changes} row changes, {stats.redo_bytes} bytes of redo in "
        f"{stats.seconds:.2f}s ({stats.row_changes_per_s:,.0f} row changes/s)"
    )


@app.command("switch-log")
def switch_log(
    name: str,
    thread: Annotated[int | None, typer.Option(help="Thread (default: all).")] = None,
    home: HomeOpt = None,
) -> None:
    """Switch (and archive) the current log of one or all threads."""
    with _db(home, name) as db:
        seqs = db.switch_log(thread)
    typer.echo("System altered. New sequence(s): " + ", ".join(map(str, seqs)))


@app.command("crash-instance")
def crash_instance(
    name: str,
    thread: Annotated[int, typer.Option(help="The instance (redo thread) to crash.")],
    home: HomeOpt = None,
) -> None:
    """Crash one instance: its open transactions never get a rollback record."""
    with _db(home, name) as db:
        orphans = db.crash_instance(thread)
    typer.echo(f"Instance {thread} crashed; orphaned transactions: {', '.join(orphans) or 'none'}")


@app.command("logs")
def logs(
    name: Annotated[
        str, typer.Argument(help="Database name, or an archive location (dir, s3://).")
    ],
    format_: Annotated[
        str | None, typer.Option("--format", help="LOG_ARCHIVE_FORMAT of an archive location.")
    ] = None,
    password_stdin: PasswordStdin = False,
    home: HomeOpt = None,
) -> None:
    """List redo logs: thread, sequence, status, SCN range, size, path. For an archive
    location of Oracle logs: thread, sequence, SCN range, resetlogs id, version, from headers."""
    if _a_location(name, home):
        _oracle_logs(_location(home, name, "LOCATION", None, password_stdin), format_)
        return
    from engine.redo.attached import attached
    from engine.redo.errors import RedoError

    try:
        found = attached(_dirdb(home), name)
    except RedoError as exc:
        raise _fail(exc) from None
    if found is not None:
        _oracle_logs(found.archive, format_ or found.format)
        return
    with _db(home, name) as db:
        infos = db.list_logs()
        copies = {(i.thread, i.sequence): _copy(db.root, i) for i in infos}
    for i in infos:
        status = "ARCHIVED" if i.archived else "CURRENT"
        nxt = str(i.next_scn) if i.next_scn else "-"
        copy = copies[(i.thread, i.sequence)]
        typer.echo(
            f"{i.thread:3d} {i.sequence:9d} {status:8s} {i.first_scn:>12d} {nxt:>12s} "
            f"{i.size:>12d} {i.path}" + (f"  archived as {copy}" if copy else "")
        )


def _a_location(name: str, home: str | None) -> bool:
    """Whether ``db logs NAME`` names an archive location rather than a database: a path
    with a separator or a URL; a bare name only when it is a directory here and no database
    of the home has that name (a directory ``ora`` where the DBA stands does not hide the
    attached database ORA)."""
    from engine.home.names import database_name

    if os.sep in name or "://" in name:
        return True
    if not Path(name).is_dir():
        return False
    up = database_name(name)
    try:
        return up is None or not os.path.lexists(resolve_home(home).dirdb / up)
    except HomeError:
        return True


def _copy(root: Path, info: LogInfo) -> str | None:
    """Where the archiver copied ``info`` (None: not archived, or not copied yet)."""
    from engine.embedded.archiver import MARKER
    from engine.storage import describe

    if not info.archived or not info.path.with_suffix(MARKER).exists():
        return None
    where = archived_copy(root, info.thread, info.sequence)
    return describe(where) if where else None


def _oracle_logs(location: str, fmt: str | None) -> None:
    from engine.redo import layout as L
    from engine.redo.catalog import list_logs as oracle_logs
    from engine.redo.errors import RedoError
    from engine.storage import StorageError, describe

    try:
        found = oracle_logs(location, fmt)
    except (RedoError, StorageError) as exc:
        raise _fail(exc) from None
    typer.echo("THREAD  SEQUENCE    FIRST_SCN     NEXT_SCN  RESETLOGS_ID  VERSION     BLOCKS  PATH")
    for f in found:
        h = f.header
        # a current log (an online log being written) has no next SCN nor block count yet
        nxt, blocks = ("-", "-") if h.next_scn == L.OPEN_SCN else (h.next_scn, h.blocks)
        typer.echo(
            f"{h.thread:6d} {h.sequence:9d} {h.first_scn:>12d} {nxt:>12} "
            f"{h.resetlogs_id:>13d}  {h.version_text:10s} {blocks:>6}  {describe(f.location)}"
        )


@app.command("import-dump")
def import_dump(
    name: str,
    files: Annotated[list[Path], typer.Argument(help="Oracle logfile dump text files.")],
    dictionary: Annotated[Path, typer.Option(help="Dictionary JSON of the dumped tables.")],
    lenient: Annotated[bool, typer.Option(help="Skip non-dump text with a warning.")] = False,
    home: HomeOpt = None,
) -> None:
    """Append the records of Oracle dump text to NAME's redo, keeping SCNs/XIDs/RBAs."""
    from engine.embedded.dump_parse import parse_dump

    dic = _guard(lambda: load_dictionary(dictionary))
    records: list[tuple[str, RedoRecord]] = []
    for f in files:
        try:  # a FIFO, a device, a directory: one line, never a wait
            with open(open_regular(f), encoding="utf-8", errors="replace") as fh:
                try:
                    result = parse_dump(_bounded_lines(fh, f), source=str(f), lenient=lenient)
                except SourceError as exc:
                    raise _fail(exc) from None
        except UserFileError as exc:
            raise _fail(SourceError(f"cannot read {exc}", "GGS-SRC-0107")) from None
        except OSError as exc:
            raise _fail(SourceError(f"cannot read {f}: {exc.strerror}", "GGS-SRC-0107")) from None
        for w in result.warnings:
            typer.echo(f"warning: {w}", err=True)
        records.extend((str(f), r) for r in result.records)
    with _db(home, name) as db:
        # Every check that can fail runs before the first byte is written (parse_dump has
        # checked each record against the redo format): a refused import leaves nothing.
        for where, r in records:
            if r.thread > db.state.threads:
                raise _fail(
                    DatabaseError(
                        f"{where}: a record of redo thread {r.thread} (RBA {r.rba.dump()}): "
                        f"database {name.upper()} has {db.state.threads} thread(s)",
                        "GGS-SRC-0106",
                    )
                )
        n = db.append_foreign([r for _, r in records], dic)
    typer.echo(f"{n} redo record(s) imported from {len(files)} file(s).")


#: The longest line of dump text read (Oracle's lines are short; a file without a newline,
#: a sparse one of gigabytes say, is refused at its first line, never read into memory).
MAX_DUMP_LINE = 1 << 20


def _bounded_lines(fh: TextIO, path: Path) -> Iterator[str]:
    """The lines of ``fh``, each read within :data:`MAX_DUMP_LINE` characters."""
    n = 0
    while line := fh.readline(MAX_DUMP_LINE + 1):
        n += 1
        if len(line) > MAX_DUMP_LINE:
            raise SourceError(
                f"{path}:{n}: a line longer than {MAX_DUMP_LINE} characters: not dump text",
                "GGS-SRC-0107",
            )
        yield line


@app.command("dump")
def dump(
    name: Annotated[
        str | None, typer.Argument(help="Database name, or a redo log file path.")
    ] = None,
    from_scn: Annotated[int, typer.Option(help="Only records with SCN >= this.")] = 0,
    thread: Annotated[
        int | None, typer.Option(help="Only this thread (of a database given by name).")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="One JSON object per record.")] = False,
    hex_file: Annotated[
        Path | None, typer.Option("--hex", help="Redo records as hex, one per line.")
    ] = None,
    layout: Annotated[
        str | None, typer.Option(help="Vector headers of --hex records: 11g or 12c (default).")
    ] = None,
    big_endian: Annotated[bool, typer.Option(help="--hex records are big-endian.")] = False,
    dictionary: Annotated[
        Path | None,
        typer.Option(help="Dictionary JSON: --json adds tables and typed column values."),
    ] = None,
    password_stdin: PasswordStdin = False,
    home: HomeOpt = None,
) -> None:
    """Print a redo log in Oracle logfile dump text format (or JSON): an embedded database's
    by NAME, an Oracle log file by path, or records given as hex (--hex FILE)."""
    oracle = hex_file is not None or (name is not None and (os.sep in name or Path(name).is_file()))
    if hex_file is None and (layout is not None or big_endian):
        option = "--layout" if layout is not None else "--big-endian"
        raise _fail(
            DatabaseError(f"{option} applies to --hex records (a log's header gives its own)")
        )
    if oracle and thread is not None:
        raise _fail(
            DatabaseError("--thread applies to a database by name (a log file is one thread's)")
        )
    if dictionary is not None and not json_:
        raise _fail(DatabaseError("--dictionary types the values of --json: add --json"))
    if oracle:
        if name is not None and "://" in name:
            name = _location(home, name, "LOG", None, password_stdin)
        _dump_oracle(name, hex_file, json_, layout or "12c", big_endian, from_scn, dictionary)
        return
    if name is None:
        raise _fail(DatabaseError("give a database name, a log file path, or --hex FILE"))
    if json_:
        _dump_db_json(home, name, thread, from_scn, dictionary)
        return
    from engine.embedded.dump_write import dump_text
    from engine.redo.errors import RedoError

    with _db(home, name) as db:
        try:
            located = db.records(thread, from_scn)
        except RedoError as exc:  # (a corrupt log: one line, naming the record's offset)
            raise _fail(exc) from None
    out = sys.stdout
    for line in dump_text((lr.record, lr.end - lr.offset) for lr in located):
        out.write(line + "\n")
    nvec = sum(len(lr.record.changes) for lr in located)
    out.write(f"END OF REDO DUMP: {len(located)} record(s), {nvec} change(s)\n")


#: The largest log ``db dump`` reads (it holds the log in memory; a larger one, or a sparse
#: file claiming a terabyte, is refused in one line).
MAX_DUMP_BYTES = 4 << 30
#: The largest text file (SQL script, hex records) read.
MAX_TEXT_BYTES = 1 << 30


def _log_bytes(path: str) -> bytes:
    """A log file's bytes: a local regular file (a FIFO, a device, a directory or a file
    over :data:`MAX_DUMP_BYTES` is refused, never waited on), or a location of the storage
    layer (``s3://``, as ``db logs`` lists them; its errors name it with the credentials
    masked)."""
    from engine import storage

    if storage.is_local(path):
        return read_user_file(storage.local_path(path), MAX_DUMP_BYTES)
    size = storage.size(path)
    if size > MAX_DUMP_BYTES:
        raise storage.StorageError(
            f"{storage.describe(path)}: too large to dump ({size} bytes; at most {MAX_DUMP_BYTES})"
        )
    return storage.read_range(path, 0, size)


def _dump_db_json(
    home: str | None, name: str, thread: int | None, from_scn: int, dictionary: Path | None
) -> None:
    """``db dump NAME --json``: each of the database's logs, thread by thread and in sequence
    order, read as an Oracle log file is (its logs are in Oracle's format)."""
    import json

    from engine.redo.dictionary import load as load_oracle_dictionary
    from engine.redo.dumptext import record_json
    from engine.redo.errors import RedoError
    from engine.redo.framing import read_header

    with _db(home, name) as db:
        infos = [i for i in db.list_logs() if thread is None or i.thread == thread]
    try:
        dic = load_oracle_dictionary(dictionary) if dictionary is not None else None
        for i in sorted(infos, key=lambda i: (i.thread, i.sequence)):
            data = read_user_file(Path(i.path), MAX_DUMP_BYTES)
            records, _ = _log_records(data, read_header(data), from_scn)  # current: as written
            for r in records:
                sys.stdout.write(json.dumps(record_json(r, dic)) + "\n")
    except RedoError as exc:
        raise _fail(exc) from None
    except UserFileError as exc:
        raise _fail(DatabaseError(str(exc))) from None


def _log_records(data: bytes, header: LogHeader, from_scn: int) -> tuple[list[Record], str | None]:
    """The records of a log at or above ``from_scn``, and for a current log (its header counts
    no blocks and holds no next SCN yet, as Oracle's online log being written) a line saying
    where reading it ended: it is read to the end of the file, up to what cannot be read as
    redo (the blocks not written yet, a redo write under way)."""
    from engine.redo import layout as L
    from engine.redo.errors import RedoError
    from engine.redo.framing import iter_records

    if header.next_scn != L.OPEN_SCN:
        return [r for r in iter_records(data, header) if r.scn >= from_scn], None
    whole = replace(header, blocks=len(data) // header.block_size)
    records: list[Record] = []
    end = "the end of the file"
    try:
        for r in iter_records(data, whole):
            records.append(r)
    except RedoError as exc:
        end = f"what is not redo yet ({exc.message})"
    kept = [r for r in records if r.scn >= from_scn]
    return kept, (
        f"Current log (sequence {header.sequence}, being written: its header counts no "
        f"blocks yet): {len(records)} record(s) read, to {end}."
    )


def _dump_oracle(
    path: str | None,
    hex_file: Path | None,
    json_: bool,
    layout: str,
    big_endian: bool,
    from_scn: int,
    dictionary: Path | None = None,
) -> None:
    """``ggsci db dump`` of Oracle's own format (engine.redo): one error line, never a traceback."""
    import json

    from engine.embedded.errors import RedoFormatError
    from engine.embedded.logfile import OLD_FORMAT, OLD_FORMAT_CODE, OLD_MAGIC
    from engine.redo.dictionary import load as load_oracle_dictionary
    from engine.redo.dumptext import dump_lines, record_json
    from engine.redo.errors import RedoError
    from engine.redo.framing import read_header
    from engine.redo.hexin import hex_records
    from engine.storage import StorageError, describe

    if layout not in ("11g", "12c"):
        raise _fail(DatabaseError(f"--layout {layout}: use 11g or 12c"))
    out = sys.stdout
    try:
        dic = load_oracle_dictionary(dictionary) if dictionary is not None else None
        if hex_file is not None:
            # the file's own lines (\r, \f, \v inside one are spaces to hex_records)
            raw = read_user_file(hex_file, MAX_TEXT_BYTES)
            lines = raw.decode("ascii", errors="replace").split("\n")
            records = [
                r
                for r in hex_records(lines, ">" if big_endian else "<", layout)
                if r.scn >= from_scn
            ]
        else:
            assert path is not None
            data = _log_bytes(path)
            if data[:8] == OLD_MAGIC:  # an embedded database's log from before Oracle's format
                raise _fail(RedoFormatError(f"{describe(path)}: {OLD_FORMAT}", OLD_FORMAT_CODE))
            header = read_header(data)
            layout = header.layout
            if not json_:
                out.write(
                    f"DUMP OF REDO FROM FILE '{describe(path)}'\n"
                    f" Thread: {header.thread} Seq# {header.sequence} "
                    f"Resetlogs: {header.resetlogs_id} Version: {header.version_text} "
                    f"Blocks: {header.blocks} Block size: {header.block_size}\n"
                    f" Low scn: {header.first_scn} Next scn: {header.next_scn}\n\n"
                )
            records, ended = _log_records(data, header, from_scn)
            if ended is not None:  # (on stderr: --json's standard output stays JSON lines)
                typer.echo(ended, err=True)
    except (RedoError, StorageError) as exc:
        raise _fail(exc) from None
    except UserFileError as exc:
        raise _fail(DatabaseError(str(exc))) from None
    except OSError as exc:
        raise _fail(DatabaseError(f"{exc.filename or hex_file}: {exc.strerror}")) from None
    if json_:
        for r in records:
            out.write(json.dumps(record_json(r, dic)) + "\n")
        return
    for line in dump_lines(records, layout):
        out.write(line + "\n")
    nvec = sum(len(r.vectors) for r in records)
    out.write(f"END OF REDO DUMP: {len(records)} record(s), {nvec} change(s)\n")
