"""The runtime: home layout, source database and redo, Extract/pump/Replicat, trail, BR.

Only engine code may start a JVM (pyspark); modules imported by the shell must not.
"""
