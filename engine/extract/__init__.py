"""Extract: redo to trail, on Spark.

Modules, each with one job:

- :mod:`.lcr`        logical change records (what the decoder hands to the driver)
- :mod:`.cache`      the transaction cache: every open transaction, bounded memory, spill
- :mod:`.assemble`   a committed transaction to trail records (TransInd, tokens)
- :mod:`.decode`     redo records to LCRs: the rules, stated over RedoRecord objects
- :mod:`.miner`      the same rules over the redo bytes, in Spark tasks: events and
                     transactions assembled inside a split
- :mod:`.values`     column values to trail text and entries, fast
- :mod:`.redo_source` byte-range splits of the logs, mined on Spark
- :mod:`.capture`    the control loop: order, cache, trail, checkpoint state
- :mod:`.br`         Bounded Recovery files
- :mod:`.longtrans`  SHOWTRANS / SKIPTRANS / FORCETRANS texts and arguments
- :mod:`.orphans`    orphaned-transaction scans
- :mod:`.start`      where a run starts; which source it reads
- :mod:`.txnmgmt`    WARNLONGTRANS, orphan purge and the transaction SEND requests
- :mod:`.engine`     one run: recovery choice, the loop, checkpoints, BR, reports
- :mod:`.runner`     the group process runner

The data plane (reading and decoding redo) runs in Spark tasks; the control plane
(ordering, the cache, trail appends, checkpoints) runs on the driver.
"""
