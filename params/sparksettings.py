"""The values some Spark settings must have, checked before Spark sees them (pure: no
pyparsing, no engine; the Extract's executors import it too, through engine.cluster)."""

from __future__ import annotations

import re

#: Spark settings that take a whole number (a positive one for the cores), checked here so that
#: a mistake is one positioned line rather than the JVM's exception at start.
WHOLE_NUMBERS: dict[str, int] = {
    "spark.cores.max": 1,
    "spark.executor.cores": 1,
    "spark.executor.instances": 0,
    "spark.dynamicAllocation.minExecutors": 0,
    "spark.dynamicAllocation.maxExecutors": 1,
    "spark.dynamicAllocation.initialExecutors": 0,
    "spark.task.maxFailures": 1,
}
#: ggsci's own settings (engine/cluster/watch.py): how long the Extract waits for its Spark
#: application before it abends. Times as Spark writes them: 90, 90s, 2min, 1h.
GGSCI_TIMES: dict[str, float] = {
    "spark.ggsci.startupTimeout": 120.0,
    "spark.ggsci.executorTimeout": 120.0,  # (unset: the startupTimeout given)
    "spark.ggsci.progressTimeout": 300.0,
    "spark.ggsci.masterTimeout": 60.0,
}
_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_TIME = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def spark_seconds(text: str) -> float | None:
    """A positive Spark time (``90``, ``90s``, ``2min``, ``1h``, ``500ms``) in seconds."""
    m = _TIME.fullmatch(text)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None or float(m.group(1)) * unit <= 0:
        return None
    return float(m.group(1)) * unit


def setting_error(key: str, value: str) -> str | None:
    """Why ``value`` cannot be ``key``'s (a whole number, a time), or None."""
    least = WHOLE_NUMBERS.get(key)
    if least is not None and not (value.isdigit() and int(value) >= least):
        return f"{key}={value}: expected a whole number{' above 0' if least else ''}"
    if key in GGSCI_TIMES and spark_seconds(value) is None:
        return f"{key}={value}: expected a time such as 120s, 5min or 1h"
    return None
