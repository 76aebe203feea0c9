"""A faster ``__init__`` for the redo reader's frozen dataclasses.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``
(its own ``__setattr__`` refuses): some 0.25 µs a field, and the reader makes a dozen such
values (vectors, records, row operations, pieces, row events) with some eighty fields for
every row change it reads. :func:`quick_init` gives a class the same ``__init__`` signature
(positional or keyword, the same defaults) that fills the instance's ``__dict__`` in one
step instead. Everything else stays the dataclass's: fields, ``__eq__``, ``__hash__``,
``__repr__``, the frozen ``__setattr__`` / ``__delattr__``, ``dataclasses.replace``.
tests/redo/test_frozen.py holds the two ``__init__`` to the same instances.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Replace the generated ``__init__`` of ``cls`` (a frozen dataclass without slots,
    ``__post_init__``, default factories or init-less fields) by one that fills
    ``__dict__`` at once."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: not a frozen dataclass with a __dict__")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: has __post_init__")
    args: list[str] = []
    defaults: dict[str, Any] = {}
    names: list[str] = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: not a plain init field")
        names.append(f.name)
        if f.default is dataclasses.MISSING:
            args.append(f.name)
        else:
            defaults[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
    body = ", ".join(f"{n!r}: {n}" for n in names)
    source = f"def __init__(self, {', '.join(args)}):\n    _set(self, '__dict__', {{{body}}})\n"
    scope: dict[str, Any] = {"_set": object.__setattr__, **defaults}
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
