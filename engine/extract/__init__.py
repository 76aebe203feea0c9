"""Extract: redo to trail, on Spark.

Modules, each with one job:

- :mod:`.lcr`        logical change records (what the decoder hands to the driver)
- :mod:`.cache`      the transaction cache: every open transaction, bounded memory, spill
- :mod:`.assemble`   a committed transaction to trail records (TransInd, tokens)

The data plane (reading and decoding redo) runs in Spark tasks; the control plane
(ordering, the cache, trail appends, checkpoints) runs on the driver.
"""
