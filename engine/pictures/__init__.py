"""Pictures an operator would rather look at than read, drawn from live state (issue 15).

- :mod:`engine.extract.brpicture`: the Bounded Recovery timeline of an Extract (seed 000's figure):
  its BR checkpoints on a redo-time axis, each open transaction as a bar from its start, which
  checkpoint persisted it, and the restart position a recovery would use now.
- :mod:`engine.pictures.lag`: the heartbeat lag history, per path and per stage (extract, pump,
  Replicat read, apply).

Each has a pure model (frozen dataclasses), a text rendering for the terminal and an SVG
rendering for a file (:mod:`engine.pictures.svg`, the standard library's ElementTree). Nothing
here is imported on the shell's start-up path: the commands that draw import it when run.
"""
