"""engine/redo/frozen.py: quick_init gives the same instances as the dataclass's own
__init__, and the classes it is used on stay frozen dataclasses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.redo import capture, framing, pieces, vectors
from engine.redo.frozen import quick_init


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str
    c: tuple[int, ...] = ()
    d: int | None = None


@quick_init
@dataclass(frozen=True)
class _Quick(_Plain):
    """_Plain's fields, quick_init's __init__."""


@given(st.integers(), st.text(max_size=5), st.tuples(st.integers()), st.none() | st.integers())
def test_the_same_instances_as_the_dataclass_init(a: int, b: str, c: tuple[int], d: int | None) -> None:  # fmt: skip
    for args, kwargs in (((a, b), {}), ((a, b, c, d), {}), ((a,), {"b": b, "d": d}), ((), {"a": a, "b": b, "c": c})):  # fmt: skip
        want, got = _Plain(*args, **kwargs), _Quick(*args, **kwargs)
        assert dataclasses.astuple(want) == dataclasses.astuple(got)
        assert got == _Quick(*args, **kwargs) and hash(got) == hash(_Quick(*args, **kwargs))
        assert pickle.loads(pickle.dumps(got)) == got and copy.copy(got) == got
        assert dataclasses.replace(got, a=a + 1).a == a + 1


def test_argument_mistakes_and_frozen() -> None:
    with pytest.raises(TypeError):
        _Quick(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick(1, "x", (), None, 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick(1, "x", e=3)  # type: ignore[call-arg]
    q = _Quick(1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del q.a


def test_what_it_refuses() -> None:
    @dataclass
    class Loose:
        a: int

    with pytest.raises(TypeError):
        quick_init(Loose)

    @dataclass(frozen=True, slots=True)
    class Slots:
        a: int

    with pytest.raises(TypeError):
        quick_init(Slots)

    @dataclass(frozen=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError):
        quick_init(Factory)


@pytest.mark.parametrize(
    "cls",
    [framing.Vector, framing.Record, vectors.RowOp, vectors.Undo, vectors.Supplemental,
     capture.RowEvent, capture.TxRow, pieces.Piece],
)  # fmt: skip
def test_the_reader_classes_stay_frozen_dataclasses(cls: type) -> None:
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert "_set(self, '__dict__'" not in repr(cls.__init__)  # (a function, named for its class)
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
