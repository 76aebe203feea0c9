"""The home on disk: what one deployment keeps between runs, and who may believe it.

Modules, one job each: :mod:`~engine.home.layout` (which home, its directories),
:mod:`~engine.home.names` (group names, checked wherever one enters), :mod:`~engine.home.groups`
(group definitions), :mod:`~engine.home.status` (process files), :mod:`~engine.home.checkpoints`
(checkpoint files), :mod:`~engine.home.trust` (whose files a process believes),
:mod:`~engine.home.jsonfile` (durable small JSON files), :mod:`~engine.home.datafile`
(data-only binary files: a tagged codec in checked frames, never pickle).
Nothing here imports pyspark: the shell reads the home too.
"""
