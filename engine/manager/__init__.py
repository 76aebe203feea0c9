"""The Manager: one daemon per home (``python -m engine.manager``).

Modules, one job each: :mod:`~engine.manager.main` (its loop: start, stop, restart groups,
scheduled jobs, the TCP port), :mod:`~engine.manager.params` (``mgr.prm``),
:mod:`~engine.manager.access` (ACCESSRULE: who may ask what over TCP),
:mod:`~engine.manager.purge` (PURGEOLDEXTRACTS), :mod:`~engine.manager.watch` (LAG*, DOWN*,
STARTUPVALIDATIONDELAY), :mod:`~engine.manager.collector` (the Collector it starts for a
pump) and :mod:`~engine.runtime.wire` (the pump ==> Collector protocol).
"""
