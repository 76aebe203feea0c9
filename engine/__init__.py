"""The runtime, one folder per concern (the README's "How the code is laid out").

Only engine code may start a JVM (pyspark), and only from :mod:`engine.cluster` and the Extract's
task modules; modules imported by the shell must not.
"""
