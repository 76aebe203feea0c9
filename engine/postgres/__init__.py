"""PostgreSQL as a capture source (issue 25): a logical replication slot per Extract
(``test_decoding``), REPLICA IDENTITY as supplemental logging, the changes of committed
transactions written to the same trail records as the other sources (docs/postgres-source.md).

Modules: :mod:`lsn` (log sequence numbers), :mod:`testdecoding` (the plugin's text, parsed),
:mod:`types` (column values to trail text), :mod:`catalog` (tables, columns, keys),
:mod:`slot` (REGISTER / UNREGISTER and the slot's state), :mod:`trandata` (ADD / INFO /
DELETE TRANDATA), :mod:`connect` (which database a parameter file or login names),
:mod:`capture` (the capture loop), :mod:`run` (the Extract run: checkpoints, status, lag).
"""
