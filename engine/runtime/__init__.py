"""A group process's runtime: what every Extract, pump and Replicat process shares.

Modules, one job each: :mod:`~engine.runtime.process` (the process entry point, its lock, its
runner), :mod:`~engine.runtime.ipc` (SEND requests over the 0600 Unix socket),
:mod:`~engine.runtime.control` (GGSCI's client side: start, stop, ask),
:mod:`~engine.runtime.daemon` (detached start), :mod:`~engine.runtime.events` (ggserr.log and
the OGG message format), :mod:`~engine.runtime.report` (report files),
:mod:`~engine.runtime.stats` (the STATS book), :mod:`~engine.runtime.paramcheck` (the one place
the runtime asks ``params`` about a file), :mod:`~engine.runtime.paraminfo` (GETPARAMINFO).
"""
