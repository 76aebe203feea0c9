"""Logdump: text views of trail records (views.py) and the interactive session
(session.py). Imported by the shell: nothing here may import pyspark."""

from engine.logdump.session import LogdumpSession
from engine.logdump.views import DisplayOptions, Views, record_json

__all__ = ["DisplayOptions", "LogdumpSession", "Views", "record_json"]
