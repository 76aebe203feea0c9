"""Oracle's own on-disk redo log format: read (and the framing written) by our own code.

Rooms: ``layout`` (every byte layout, stated once as a table), ``framing`` (file header,
blocks, checksums, LWNs, records spanning blocks, change-vector framing; reader and writer),
``vectors`` (the change vectors of captured tables: 5.x transaction control and undo, 11.x
row pieces, 19.1), ``values`` (column value encodings), ``rowid``, ``hexin`` (records given
as hex), ``dumptext`` (``ALTER SYSTEM DUMP LOGFILE`` layout and JSON), ``dictionary``
(OpenLogReplicator's schema checkpoint and ggsci's own dictionary JSON), ``catalog`` (logs
found in an archive location, from their headers). Facts and their public sources:
docs/redo_format.md.
"""
