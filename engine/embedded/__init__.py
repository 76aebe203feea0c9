"""The embedded source database: an Oracle stand-in for capture purposes.

Modules, one job each:

- :mod:`errors`     the exception tree (root :class:`~engine.embedded.errors.SourceError`)
- :mod:`codecs`     Oracle internal value encodings (NUMBER, DATE, TIMESTAMP, VARCHAR2, CHAR)
- :mod:`ids`        SCN, XID, UBA, DBA, RBA and extended ROWID models
- :mod:`redo`       redo records and change vectors (frozen dataclasses, opcode table)
- :mod:`logfile`    its redo log files in Oracle's format (engine/redo/): writer, reader
- :mod:`logs`       log catalogue: threads, sequences, switch, archive
- :mod:`dump_parse` / :mod:`dump_write`  Oracle ``ALTER SYSTEM DUMP LOGFILE`` text
- :mod:`dictionary` the data dictionary (objects, columns, keys)
- :mod:`database`   a database directory: SQLite storage, dictionary, redo, sessions
- :mod:`values`     column values between SQL, SQLite and Oracle encodings
- :mod:`sql`        SQL (sqlglot, Oracle dialect) to session operations
- :mod:`session`    sessions, transactions, savepoints, row and key locks
- :mod:`dml`        INSERT/UPDATE/DELETE/array/direct-path statements and their redo
- :mod:`undo`       rollback and its compensation redo
- :mod:`rows`       row helpers (encodings, keys, SQLite storage, ROWIDs)
- :mod:`redogen`    change-vector builders shaped like seed 002's redo
- :mod:`bulk`       the workload's fast path (byte-identical redo, no dataclasses)
- :mod:`redopack`   its row-change kernel: one call per row change gives its records'
                    change vectors in Oracle's format (compiled twin:
                    ``engine/_native/redopack.c``)
- :mod:`logical`    reference decoder: redo -> committed row changes (tests, tools)
- :mod:`workload`   the reproducible workload generator
- :mod:`clock`      the simulated clock

Nothing here imports pyspark: the shell imports this package.
"""
